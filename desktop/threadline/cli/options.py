"""Command-line options shared by the parser (``__main__``) and the commands (``cli``).

Kept apart from ``cli`` so building the parser imports nothing heavy: the
window's start-up time includes it.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from typing import Any

from threadline.llm.timeouts import DEFAULT_CONNECT_TIMEOUT, DEFAULT_FIRST_BYTE_TIMEOUT

MAX_TIMEOUT_SECONDS = 3600.0


def seconds(text: str) -> float:
    """A timeout in seconds: a positive number up to an hour, or 0 for the app's default."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value < 0 or value > MAX_TIMEOUT_SECONDS:
        raise argparse.ArgumentTypeError(
            f"{text} s is out of range (give 0 for the default, or up to {MAX_TIMEOUT_SECONDS:g} s)"
        )
    return value


def add_timeout_options(parser: argparse.ArgumentParser) -> None:
    """``--timeout`` (first byte) and ``--connect-timeout`` of ``provider add``."""
    parser.add_argument(
        "--timeout",
        type=seconds,
        metavar="SECONDS",
        help=f"wait this long for the first byte of a reply (0: default, {DEFAULT_FIRST_BYTE_TIMEOUT:g} s)",
    )
    parser.add_argument(
        "--connect-timeout",
        type=seconds,
        metavar="SECONDS",
        help=f"wait this long for the connection to open (0: the default, {DEFAULT_CONNECT_TIMEOUT:g} s)",
    )


def key_value(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` of the ``mcp add`` options (the value may itself hold ``=``)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text.split('=', 1)[0]!r}")
    return key.strip(), value


def _pair_option(parser: argparse.ArgumentParser, flag: str, metavar: str, help: str) -> None:
    parser.add_argument(flag, type=key_value, action="append", default=[], metavar=metavar, help=help)


def _add_mcp_add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", metavar="URL", help="a remote server (streamable HTTP) instead of a command")
    _pair_option(parser, "--env", "KEY=VALUE", "a secret environment variable (kept in the keychain)")
    _pair_option(parser, "--env-from", "KEY=ENVVAR", "KEY gets the value of Threadline's variable ENVVAR")
    _pair_option(parser, "--public-env", "KEY=VALUE", "an environment variable that is not a secret")
    _pair_option(parser, "--header", "KEY=VALUE", "a secret HTTP header (kept in the keychain)")
    _pair_option(parser, "--public-header", "KEY=VALUE", "an HTTP header that is not a secret")
    parser.add_argument("--cwd", metavar="DIR", default="", help="working folder of the command")


def add_provider_header_options(parser: argparse.ArgumentParser) -> None:
    """``--header KEY=VALUE`` (as ``mcp add`` takes it) and ``--no-headers`` of ``provider add``."""
    _pair_option(
        parser,
        "--header",
        "KEY=VALUE",
        "an HTTP header sent with every request: the value is kept in the system keychain; write "
        "KEY=${VAR} to read it from Threadline's environment instead (the way without a keychain). "
        "Repeat for more; the headers given replace the provider's headers",
    )
    parser.add_argument("--no-headers", action="store_true", help="remove the provider's headers")


GLOBAL_OPTIONS_WITH_VALUE = ("--data-dir", "--database-url")
"""The options every command takes (``__main__._common_options``), before or after its words."""


def _past_options(words: Sequence[str], start: int) -> int:
    """The index of the first word from ``start`` on that is neither an option nor an option's value."""
    i = start
    while i < len(words) and words[i].startswith("-") and words[i] != "--":
        i += 2 if words[i] in GLOBAL_OPTIONS_WITH_VALUE else 1
    return i


def split_server_command(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """``argv`` without the server command of ``mcp add … -- COMMAND [ARGS …]``, and that command.

    Everything after the first ``--`` that follows ``mcp add`` is the server's command line,
    verbatim: its options (``--local-timezone``, even ``--url`` or another ``--``) belong to the
    server, never to Threadline. argparse cannot express that for a subcommand (with ``--``
    right after NAME it went on to read the command's options as its own and refused them), so
    the cut is made before parsing. The words ``mcp`` and ``add`` are found as argparse finds
    them, past the options before each (``mcp --data-dir D add``: the common options are taken
    at every level). Other commands' ``--`` (``ask -- PROMPT``) are left alone.
    """
    words = list(argv)
    command = _past_options(words, 0)
    if words[command : command + 1] != ["mcp"]:
        return words, []
    action = _past_options(words, command + 1)
    if words[action : action + 1] == ["add"] and "--" in words[action + 1 :]:
        cut = words.index("--", action + 1)
        return words[:cut], words[cut + 1 :]
    return words, []


MCP_ADD_VALUE_OPTIONS = (
    "--env",
    "--env-from",
    "--public-env",
    "--header",
    "--public-header",
    "--cwd",
    "--url",
)
"""``mcp add``'s own options: written after ``--`` they are the server's words, not Threadline's."""


def misplaced_options(server_command: Sequence[str]) -> list[str]:
    """The ``mcp add`` options in a server's command line (``--env`` or ``--env=K=V``), once each."""
    found = (word.split("=", 1)[0] for word in server_command[1:])
    return list(dict.fromkeys(option for option in found if option in MCP_ADD_VALUE_OPTIONS))


def add_mcp_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    """``threadline mcp add|list|remove|tools|prompts|resources|login|logout``: MCP servers, headless."""
    mcp = commands.add_parser("mcp", parents=[common], help="add, list, remove or try MCP tool servers")
    actions = mcp.add_subparsers(dest="mcp_command", metavar="ACTION", required=True)
    add = actions.add_parser(
        "add",
        parents=[common],
        help="add an MCP server, or replace the one of that name",
        description="Values of --env and --header are kept in the system keychain, never in the "
        "database; --env-from reads a value from Threadline's environment when the server starts "
        "(the way without a keychain); --public-env / --public-header keep values that are not secret "
        "in the settings.",
        usage="threadline mcp add NAME [options] (-- COMMAND [ARGS ...] | --url URL)",
    )
    add.add_argument("name", metavar="NAME", help="server name; its tools are named NAME/tool")
    _add_mcp_add_options(add)
    add.set_defaults(server_command=[])  # the words after ``--``: ``split_server_command``
    actions.add_parser("list", parents=[common], help="list MCP servers (secret values masked)")
    install = actions.add_parser(
        "install",
        parents=[common],
        help="install or update an MCP extension (.mcpb bundle) as a server",
        description="Settings the bundle asks for are given with --set KEY=VALUE (repeat it for a list) "
        "or --set-from KEY=ENVVAR (read now from this environment, for secrets); secret settings not "
        "given are asked for on a terminal and kept in the system keychain. An update keeps the "
        "settings given before.",
    )
    install.add_argument("bundle", metavar="FILE.mcpb")
    install.add_argument("--set", dest="set_values", action="append", default=[], metavar="KEY=VALUE")
    install.add_argument("--set-from", dest="set_from", action="append", default=[], metavar="KEY=ENVVAR")
    remove = actions.add_parser(
        "remove", parents=[common], help="remove an MCP server (an extension's files too) and its secrets"
    )
    remove.add_argument("name", metavar="NAME")
    tools = actions.add_parser("tools", parents=[common], help="start an MCP server and list its tools")
    tools.add_argument("name", metavar="NAME")
    prompts = actions.add_parser(
        "prompts", parents=[common], help="start an MCP server and list its prompts (/NAME:prompt in ask)"
    )
    prompts.add_argument("name", metavar="NAME")
    resources = actions.add_parser(
        "resources", parents=[common], help="start an MCP server and list its resources and templates"
    )
    resources.add_argument("name", metavar="NAME")
    login = actions.add_parser(
        "login", parents=[common], help="sign in to a remote MCP server (OAuth, in the browser)"
    )
    login.add_argument("name", metavar="NAME")
    logout = actions.add_parser(
        "logout", parents=[common], help="sign out of a remote MCP server (its tokens leave the keychain)"
    )
    logout.add_argument("name", metavar="NAME")


def add_list_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """``threadline list [--all] [--archived] [--query TEXT] [--json]`` (run by ``cli.list``)."""
    parser = commands.add_parser("list", parents=[common], help="list chats (the 50 most recent by default)")
    parser.add_argument("--all", action="store_true", help="every chat, not only the 50 most recent")
    parser.add_argument("--archived", action="store_true", help="the archived chats instead")
    parser.add_argument("--query", metavar="TEXT", help="only chats whose title contains every word of TEXT")
    parser.add_argument("--json", action="store_true", help="print one JSON array (for scripts)")
