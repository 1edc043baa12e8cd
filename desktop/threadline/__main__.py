"""Entry point: parse the command line, then start the window or run a command.

Heavy imports (Qt, SDKs, SQLAlchemy) happen only in the branch that needs them,
so ``threadline --version`` and the window's first paint stay fast. For the same
reason a start of the window is parsed without the commands' parsers: building them
(and importing their modules, ``json`` among them) cost every start CPU time before
the first paint (figures: docs/performance.md, "Window"); ``parse_command_line``
builds them only when the words name a command, ask for help or are wrong.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from threadline import version


class _VersionAction(argparse.Action):
    """``--version``, with the version looked up only when asked for (it reads package metadata)."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str = argparse.SUPPRESS,
        default: str = argparse.SUPPRESS,
        help: str = "show the version and exit",
    ) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        sys.stdout.write(f"threadline {version()}\n")  # stdout, as argparse's own version action
        parser.exit()


def _common_options() -> argparse.ArgumentParser:
    """The options every parser and subcommand takes (a parent parser, without help)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir",
        type=Path,
        default=argparse.SUPPRESS,
        metavar="DIR",
        help="keep the database and logs in DIR instead of the platform's user data folder",
    )
    common.add_argument(
        "--database-url",
        default=argparse.SUPPRESS,
        metavar="URL",
        help="use this SQLAlchemy URL (e.g. postgresql+psycopg://…) instead of the SQLite file",
    )
    common.add_argument(
        "--ignore-damage",
        action="store_true",
        default=argparse.SUPPRESS,
        help="write into a database that was found damaged (see `threadline db restore`)",
    )
    return common


def _add_start_options(parser: argparse.ArgumentParser) -> None:
    """The options of a start without a command: the window, its probe, the self-test."""
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument(
        "--quick-ask",
        action="store_true",
        help="open Quick ask, the small window to ask from anywhere (in the running window, if there is "
        "one; bind this in your desktop's shortcuts)",
    )
    parser.add_argument(
        "--startup-probe",
        action="store_true",
        help="print the milliseconds from start to the first painted window, then exit",
    )
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="open the database, create and delete a session offscreen, and exit 0 on success",
    )
    parser.add_argument(
        "--new-chat", action="store_true", help="open a new chat (in the running window, if there is one)"
    )


class _NotAPlainStart(Exception):
    """The words are more than a start's options: the whole parser reads them (and reports errors)."""


class _StartParser(argparse.ArgumentParser):
    """The top-level options only; any word it cannot read is the whole parser's to read."""

    def error(self, message: str) -> NoReturn:
        raise _NotAPlainStart(message)


def _start_parser() -> argparse.ArgumentParser:
    """A parser for a start without a command: ``build_parser``'s top level, without the commands.

    No ``--help`` either (``-h`` is then a word it cannot read), so help is always the
    whole parser's, listing every command.
    """
    parser = _StartParser(prog="threadline", add_help=False, parents=[_common_options()])
    _add_start_options(parser)
    parser.set_defaults(command=None)
    return parser


def parse_command_line(words: Sequence[str]) -> argparse.Namespace:
    """``words`` parsed as ``build_parser`` parses them.

    A start of the window (or the probe, the self-test, ``--version``) is read by the
    top-level options alone; a command word, ``--help`` or any error goes to the whole
    parser, whose answer and messages are therefore unchanged.
    """
    try:
        return _start_parser().parse_args(words)
    except _NotAPlainStart:
        return build_parser().parse_args(words)


OPEN_SUFFIXES = (".json", ".zip", ".mcpb", ".dxt")
"""Files a start opens (a chat export to import, an MCP bundle to install): docs/desktop.md."""
LINK_SCHEME = "threadline:"


def split_open_targets(words: Sequence[str]) -> tuple[list[str], list[str]]:
    """``threadline [OPTIONS] FILE|LINK…``: the words without the files and links, and those.

    The desktop entry starts ``threadline %U`` with what was opened. A word is a target when
    it is a ``threadline:`` link, or an existing file with a suffix Threadline opens, and no
    command word came before it; anything else leaves the words whole for the parsers (a
    command, or a mistake they report).
    """
    rest: list[str] = []
    targets: list[str] = []
    takes_value = False
    for word in words:
        if takes_value:
            rest.append(word)
            takes_value = False
        elif word in ("--data-dir", "--database-url"):
            rest.append(word)
            takes_value = True
        elif word.startswith("-"):
            rest.append(word)
        elif word.lower().startswith(LINK_SCHEME) or (
            word.lower().endswith(OPEN_SUFFIXES) and Path(word).is_file()
        ):
            targets.append(word)
        else:
            return list(words), []
    return rest, targets


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: the top-level options and every command with its options."""
    from threadline.cli.agent import add_agent_parser
    from threadline.cli.changes import add_changes_parser
    from threadline.cli.db import add_db_parser
    from threadline.cli.export import add_export_parser
    from threadline.cli.import_ import add_import_parser
    from threadline.cli.kb import add_kb_parser
    from threadline.cli.memory import add_memory_parser
    from threadline.cli.models import add_models_parser
    from threadline.cli.options import (
        add_list_parser,
        add_mcp_parser,
        add_provider_header_options,
        add_timeout_options,
    )
    from threadline.cli.restore import add_restore_parser
    from threadline.cli.show import add_show_parser
    from threadline.cli.usage import add_usage_parser
    from threadline.cli.voice import add_voice_parsers
    from threadline.cli.web import add_web_parser

    common = _common_options()
    parser = argparse.ArgumentParser(
        prog="threadline",
        description="Threadline, a desktop conversation manager for large language models.",
        parents=[common],
    )
    _add_start_options(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    ask = commands.add_parser(
        "ask", parents=[common], help="run one turn without a window and print the reply as it streams"
    )
    which = ask.add_mutually_exclusive_group()
    which.add_argument("--session", metavar="ID", help="continue this session")
    which.add_argument("--new", action="store_true", help="start a new session (the default)")
    ask.add_argument("--provider", metavar="NAME", help="provider to use (see `threadline provider list`)")
    ask.add_argument("--model", metavar="M", help="model to use")
    ask.add_argument(
        "--agent",
        metavar="NAME",
        help="agent to use (a new chat: the default agent otherwise; see `threadline agent list`)",
    )
    ask.add_argument(
        "--models",
        metavar="P/M1,P/M2",
        help="ask 2-4 models or agents at once, comma-separated: PROVIDER/MODEL (or MODEL, of the chat's "
        "provider), or agent:NAME for an "
        "agent (its instructions, tools and model; see `threadline agent list`); each reply is printed "
        "labelled and stored as a version under the prompt",
    )
    ask.add_argument("--yes", action="store_true", help="allow tool calls that would ask for approval")
    ask.add_argument(
        "--wait",
        metavar="SECONDS",
        type=float,
        default=120.0,
        help="with --session: how long to wait for a reply running elsewhere in that chat (default 120)",
    )
    ask.add_argument(
        "--attach",
        metavar="FILE",
        nargs="+",
        action="extend",
        default=[],
        help="send documents' text with the prompt (PDF, DOCX, XLSX, CSV, PPTX, Markdown, HTML, text): "
        "several files after one --attach, or --attach again; the last value is the prompt when it is "
        "not a file (or put the prompt after --)",
    )
    ask.add_argument(
        "--resource",
        metavar="NAME:URI",
        action="append",
        default=[],
        help="read an MCP server's resource and send it with the prompt (`threadline mcp resources NAME` "
        "lists them); may be given again",
    )
    ask.add_argument(
        "--speak", action="store_true", help="read the reply aloud as it streams (Settings → Voice)"
    )
    ask.add_argument(
        "--kb",
        metavar="NAME",
        action="append",
        default=[],
        help="use this knowledge base in the chat (attached to it; see `threadline kb`); repeatable",
    )
    ask.add_argument(
        "prompt",
        nargs="?",
        help="the prompt, a slash command such as /compact (`ask /help` lists them; // sends a "
        "leading slash), or an MCP prompt as /SERVER:PROMPT name=value; read from standard input when "
        "omitted",
    )

    provider = commands.add_parser("provider", parents=[common], help="add, list or remove model providers")
    actions = provider.add_subparsers(dest="provider_command", metavar="ACTION", required=True)
    add = actions.add_parser(
        "add", parents=[common], help="add a provider, or update one (options not given keep their value)"
    )
    add.add_argument("name")
    add.add_argument("--kind", choices=["openai", "anthropic"], help="API format (needed for a new provider)")
    add.add_argument("--base-url", metavar="URL", help="server URL (default: the vendor's)")
    add.add_argument("--api-key-env", metavar="VAR", help="read the API key from this variable")
    add.add_argument(
        "--api-key-stdin",
        action="store_true",
        help="read the API key from standard input and keep it in the system keychain",
    )
    add.add_argument("--model", metavar="M", help="default model for this provider")
    add_timeout_options(add)
    add_provider_header_options(add)
    actions.add_parser("list", parents=[common], help="list providers (keys are never shown)")
    remove = actions.add_parser("remove", parents=[common], help="remove a provider and its stored key")
    remove.add_argument("name")
    models = actions.add_parser("models", parents=[common], help="list the models a provider offers")
    models.add_argument("name")
    add_mcp_parser(commands, common)
    add_list_parser(commands, common)
    add_usage_parser(commands, common)
    add_show_parser(commands, common)
    add_export_parser(commands, common)
    add_import_parser(commands, common)
    add_agent_parser(commands, common)
    add_db_parser(commands, common)
    add_changes_parser(commands, common)
    add_restore_parser(commands, common)
    add_models_parser(commands, common)
    add_kb_parser(commands, common)
    add_voice_parsers(commands, common)
    add_memory_parser(commands, common)
    add_web_parser(commands, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    from threadline.models.runtime_entry import RUN_LOCAL_RUNTIME

    if words[:1] == [RUN_LOCAL_RUNTIME]:  # a frozen build's own llama.cpp server (models/runtime_entry.py)
        from threadline.models.runtime_entry import serve

        return serve(words[1:])
    server_command: list[str] = []
    if "--" in words:  # only ``mcp add NAME … -- COMMAND`` has a server's command line to cut off
        from threadline.cli.options import split_server_command

        words, server_command = split_server_command(words)
    words, targets = split_open_targets(words)
    args = parse_command_line(words)
    if server_command:
        args.server_command = server_command
    from threadline.files.data_dir import default_data_dir

    data_dir: Path = getattr(args, "data_dir", None) or default_data_dir()
    database_url: str | None = getattr(args, "database_url", None)
    if args.command is not None or args.self_test:  # the window reads the choice after its first paint
        from threadline.engine.database_choice import DatabaseChoiceError, resolve_database_url

        try:
            database_url = resolve_database_url(data_dir, database_url)
        except DatabaseChoiceError as err:
            sys.stderr.write(f"threadline: {err.user_message}\n")
            return 1
    if args.command is not None:
        from threadline.cli.common import exit_process
        from threadline.cli.run import run_command

        code = run_command(args, data_dir, database_url)
        if argv is None:  # this process's own command line: only the interpreter's teardown is left
            exit_process(code)
        return code
    if args.self_test:
        from threadline.app.self_test import run_self_test

        return run_self_test(data_dir, database_url)
    from threadline.app.single_instance import start_words
    from threadline.app.start import run_gui

    opened = start_words(targets, new_chat=args.new_chat, quick_ask=args.quick_ask)
    return run_gui(data_dir, database_url, startup_probe=args.startup_probe, words=opened)


if __name__ == "__main__":
    sys.exit(main())
