"""Slash commands typed in the composer or given to ``threadline ask``: the table and the parser.

A command is never sent to the model. What counts as one, so that ordinary text that
happens to start with a slash still goes out:

* The text's first word is ``/`` followed by letters (and dashes), then a space, a line
  break or the end: ``/compact keep the numbers``, ``/help``, ``/foo``. A known name is
  that command; any other such word is an *unknown* command, which is reported and
  not sent (a mistyped ``/compcat`` must never reach the model as a prompt).
* Anything else starting with ``/`` is ordinary text: ``/usr/bin is…``, ``/etc/hosts``,
  ``/5 of them``, ``/ maybe``. A path has a second slash or a dot in its first word.
* ``//`` at the start escapes: the text is sent with the first slash removed
  (``//usr is a folder`` sends ``/usr is a folder``).

Names are matched case-insensitively. Everything after the command word (stripped,
line breaks kept) is its argument; each command checks its own.

This module is pure (no engine, no Qt): the UI's completion list and the command line
both read ``COMMANDS``, and ``engine.commands`` runs what ``parse`` returns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from threadline.core.conversation import MAX_CHECKPOINT_NAME

EXPORT_FORMATS = ("markdown", "markdown-branches", "json")
TANGENT_END = "end"
TANGENT_BRING = "bring"

_COMMAND_WORD = re.compile(r"/([A-Za-z][A-Za-z-]*)(?=\s|$)")


class CommandName(StrEnum):
    COMPACT = "compact"
    CLEAR = "clear"
    TANGENT = "tangent"
    CHECKPOINT = "checkpoint"
    RESTORE = "restore"
    AGENT = "agent"
    MODEL = "model"
    CONTEXT = "context"
    USAGE = "usage"
    EXPORT = "export"
    COMPARE = "compare"
    HELP = "help"


@dataclass(frozen=True)
class CommandSpec:
    """One entry of the completion list and of ``/help``."""

    name: CommandName
    hint: str
    """The arguments as the user types them (``[instructions]``, ``NAME``); "" for none."""
    description: str

    @property
    def usage(self) -> str:
        return f"/{self.name} {self.hint}".rstrip()


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(CommandName.COMPACT, "[instructions]", "Summarise earlier messages (optionally steered)"),
    CommandSpec(CommandName.CLEAR, "", "Start a fresh context here; earlier messages stay visible"),
    CommandSpec(
        CommandName.TANGENT,
        "[end [bring]]",
        "Start a side conversation; “end” returns (“bring” its last exchange)",
    ),
    CommandSpec(CommandName.CHECKPOINT, "NAME", "Name this point of the conversation"),
    CommandSpec(CommandName.RESTORE, "[NAME]", "Go back to a checkpoint; without a name, list them"),
    CommandSpec(CommandName.AGENT, "[NAME]", "Switch this chat's agent; without a name, pick one"),
    CommandSpec(CommandName.MODEL, "[PROVIDER/MODEL]", "Switch this chat's model; without one, pick one"),
    CommandSpec(CommandName.CONTEXT, "", "Show and edit the sticky context of this chat"),
    CommandSpec(CommandName.USAGE, "", "Tokens, cost and how full the context window is"),
    CommandSpec(CommandName.EXPORT, "[markdown|json] [PATH]", "Export this chat (to PATH, or choose where)"),
    CommandSpec(CommandName.COMPARE, "", "Pick 2–4 models to answer the next message side by side"),
    CommandSpec(CommandName.HELP, "", "List the slash commands"),
)
SPECS: dict[CommandName, CommandSpec] = {spec.name: spec for spec in COMMANDS}
NO_ARGUMENT = frozenset(
    {CommandName.CLEAR, CommandName.CONTEXT, CommandName.USAGE, CommandName.COMPARE, CommandName.HELP}
)


@dataclass(frozen=True)
class SlashCommand:
    """A recognised command with its argument (stripped; "" when none)."""

    name: CommandName
    argument: str = ""

    @property
    def spec(self) -> CommandSpec:
        return SPECS[self.name]


@dataclass(frozen=True)
class PlainText:
    """Not a command: send ``text`` as a prompt (a leading ``//`` already made ``/``)."""

    text: str


@dataclass(frozen=True)
class CommandProblem:
    """Looked like a command but cannot run: an unknown name or a wrong argument. Nothing is sent."""

    message: str
    name: str = ""


Parsed = SlashCommand | PlainText | CommandProblem


def parse(text: str) -> Parsed:
    """Tell a command from text to send (see the module's docstring for the rules)."""
    if text.startswith("//"):
        return PlainText(text[1:])
    match = _COMMAND_WORD.match(text)
    if match is None:
        return PlainText(text)
    word = match.group(1).lower()
    argument = text[match.end() :].strip()
    try:
        name = CommandName(word)
    except ValueError:
        return CommandProblem(
            f"Unknown command /{word} — type /help for the list, or start with // to send text "
            "that begins with a slash.",
            word,
        )
    problem = _argument_problem(name, argument)
    if problem:
        return CommandProblem(problem, word)
    return SlashCommand(name, argument)


def looks_like_command(text: str) -> bool:
    """Whether sending ``text`` would run (or refuse) a command rather than send it."""
    return not isinstance(parse(text), PlainText)


def _argument_problem(name: CommandName, argument: str) -> str:
    usage = SPECS[name].usage
    if name in NO_ARGUMENT and argument:
        return f"/{name} takes no argument (usage: {usage})."
    if name is CommandName.CHECKPOINT:
        if not argument:
            return f"Give the checkpoint a name (usage: {usage})."
        return checkpoint_name_problem(argument)
    if name is CommandName.RESTORE and argument:
        return checkpoint_name_problem(argument)
    if name is CommandName.TANGENT and argument:
        words = argument.lower().split()
        if words[0] != TANGENT_END or words[1:] not in ([], [TANGENT_BRING]):
            return (
                f"Unknown /tangent argument “{argument}” (use /tangent, /tangent end or /tangent end bring)."
            )
    return ""


def checkpoint_name_problem(name: str) -> str:
    """What is wrong with ``name`` as typed, by the rules the conversation applies when it is set."""
    if "\n" in name:
        return "A checkpoint name is one line."
    if len(" ".join(name.split())) > MAX_CHECKPOINT_NAME:
        return f"A checkpoint name has at most {MAX_CHECKPOINT_NAME} characters."
    if name.startswith("__"):
        return "Checkpoint names starting with “__” are reserved; pick another."
    return ""


@dataclass(frozen=True)
class TangentRequest:
    """``/tangent``: start one (``end`` False) or leave it, maybe bringing its last exchange."""

    end: bool
    bring_last_exchange: bool = False


def tangent_request(argument: str) -> TangentRequest:
    words = argument.lower().split()
    return TangentRequest(end=bool(words), bring_last_exchange=words[1:] == [TANGENT_BRING])


@dataclass(frozen=True)
class ExportRequest:
    """``/export``: a format name from ``EXPORT_FORMATS`` and an optional path (as typed)."""

    fmt: str
    path: str


def export_request(argument: str) -> ExportRequest:
    """``[markdown|json] [PATH]``; without a format, a ``.json`` path means JSON, else Markdown."""
    first, _, rest = argument.partition(" ")
    if first.lower() in EXPORT_FORMATS:
        return ExportRequest(first.lower(), rest.strip())
    path = argument.strip()
    return ExportRequest("json" if path.lower().endswith(".json") else "markdown", path)


@dataclass(frozen=True)
class ModelRequest:
    """``/model PROVIDER/MODEL`` or ``/model MODEL``: ``provider`` is the first part before a slash,
    when there is one (model ids may hold slashes too; the engine side checks the provider exists)."""

    provider: str
    model: str


def model_request(argument: str) -> ModelRequest:
    provider, slash, model = argument.partition("/")
    if not slash:
        return ModelRequest("", argument.strip())
    return ModelRequest(provider.strip(), model.strip())


def matching(prefix: str) -> list[CommandSpec]:
    """Commands whose name starts with ``prefix`` (without its slash; "" lists all), for completion."""
    wanted = prefix.lower()
    return [spec for spec in COMMANDS if spec.name.startswith(wanted)]


def help_text() -> str:
    """The ``/help`` list: one line a command, usage then description."""
    width = max(len(spec.usage) for spec in COMMANDS)
    lines = [f"{spec.usage.ljust(width)}  {spec.description}" for spec in COMMANDS]
    lines.append("Start with // to send text that begins with a slash.")
    return "\n".join(lines)
