"""``threadline ask`` with a slash command (``/compact keep the numbers``, ``/usage``…) instead of a prompt.

The command runs as in the window's composer (``engine.commands``) and is never sent to
the model: its outcome goes to standard output and ``ask`` exits 0, or one
``threadline:`` line goes to standard error and it exits 1 (an unknown command, a
wrong argument, a command that could not be done). Commands act on a chat, so they
need ``--session``; ``/help`` alone needs none.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from threadline.core.slash_commands import CommandName, CommandProblem, Parsed, SlashCommand, help_text

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi

NEEDS_SESSION = "slash commands act on a chat: pass --session ID (`threadline list` shows the ids)"


class SlashCommandFailed(Exception):
    """The command was refused or could not be done; ``str`` is the line to print."""


def answered_without_engine(parsed: Parsed, session_id: str | None, out: TextIO = sys.stdout) -> bool:
    """Handle what needs no open engine: a refused command, ``/help``, a missing ``--session``.

    True when the command was handled (printed); raises ``SlashCommandFailed`` for a refusal.
    """
    if isinstance(parsed, CommandProblem):
        raise SlashCommandFailed(parsed.message)
    if not isinstance(parsed, SlashCommand):
        return False
    if parsed.name is CommandName.HELP:
        print(help_text(), file=out)
        return True
    if session_id is None:
        raise SlashCommandFailed(NEEDS_SESSION)
    return False


async def run(engine: EngineApi, session_id: str, command: SlashCommand, out: TextIO = sys.stdout) -> None:
    """Run ``command`` in the session and print its outcome (``SlashCommandFailed`` when not done)."""
    from threadline.engine.commands import run_command

    outcome = await run_command(engine, session_id, command, base_dir=Path.cwd())
    if not outcome.ok:
        raise SlashCommandFailed(outcome.error)
    if outcome.text:
        print(outcome.text, file=out)
