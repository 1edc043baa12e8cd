"""``threadline restore``: give the files back as they were (docs/workspace.md, "Restoring").

``--checkpoint NAME`` gives them back as they were when the checkpoint's message was
written, ``--before-turn N`` as they were before turn N's tools ran (turns numbered as
``threadline changes`` lists them). The plan is printed first; ``--dry-run`` stops there.
A file someone changed after the tool's write is a conflict: it is left alone unless named
with ``--force FILE``, and the command exits non-zero naming it (the other files are
restored). Files that cannot be restored (content not kept, another computer's snapshots,
a link leading out of the allowed folders) are named the same way. A restore is recorded
like a tool call, so ``threadline changes`` lists it.

Only ``argparse`` is imported at module level: the parser is built on every start.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from threadline.core.file_changes import RestorePlan
    from threadline.engine.api import EngineApi

EXIT_LEFT_ALONE = 3
"""Some files were not restored (conflicts not forced, or blocked)."""


def add_restore_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "restore", parents=[common], help="give the files the tools changed back as they were"
    )
    parser.add_argument("--session", metavar="ID", required=True, help="the chat whose changes to undo")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--checkpoint", metavar="NAME", help="as they were at this checkpoint")
    which.add_argument("--before-turn", type=int, metavar="N", help="as they were before turn N's tools ran")
    parser.add_argument("--dry-run", action="store_true", help="only print what would be done")
    parser.add_argument(
        "--force",
        metavar="FILE",
        nargs="+",
        action="extend",
        default=[],
        help="overwrite these files even though they changed after the tool's write",
    )


class RestoreCommandError(Exception):
    """Bad arguments or no such checkpoint or turn: reported in one line by the caller."""


async def run(engine: EngineApi, args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    from threadline.engine.workspace import WorkspaceError

    if await engine.sessions.get_session(args.session) is None:
        raise RestoreCommandError(f"no chat with id {args.session!r} (see `threadline list`)")
    try:
        if args.checkpoint is not None:
            plan = await engine.workspace.plan_checkpoint(args.session, args.checkpoint)
        else:
            plan = await engine.workspace.plan_before_turn(args.session, args.before_turn)
    except WorkspaceError as err:
        raise RestoreCommandError(err.user_message) from err
    forced = _forced(plan, args.force)
    _print_plan(plan, forced, out)
    if not plan.steps:
        return 0
    left_alone = [s for s in plan.conflicts if s.path not in forced] + plan.blocked
    if args.dry_run:
        if left_alone:
            from threadline.workspace.changes import shown

            names = "; ".join(f"{shown(s.path)}: {s.blocked or s.conflict}" for s in left_alone)
            print(f"threadline: would leave alone: {names}.", file=sys.stderr)
            return EXIT_LEFT_ALONE
        return 0
    result = await engine.workspace.run_restore(plan, forced)
    out.write(f"Restored {len(result.changes)} file{'s' if len(result.changes) != 1 else ''}.\n")
    if result.skipped:
        names = "; ".join(result.skipped)
        print(
            f"threadline: left alone: {names}. Name a changed file with --force FILE to overwrite it.",
            file=sys.stderr,
        )
        return EXIT_LEFT_ALONE
    return 0


def _forced(plan: RestorePlan, named: list[str]) -> set[str]:
    """The plan's paths the user named (as given, or relative to the current folder)."""
    paths = {s.path for s in plan.steps}
    found: set[str] = set()
    unknown: list[str] = []
    for name in named:
        raw = os.fsencode(name)
        matches = {os.fsdecode(os.path.abspath(raw)), os.fsdecode(os.path.realpath(raw))} & paths
        if matches:
            found |= matches
        else:
            unknown.append(name)
    if unknown:
        raise RestoreCommandError(f"not part of this restore: {', '.join(unknown)}")
    return found


def _print_plan(plan: RestorePlan, forced: set[str], out: TextIO) -> None:
    from threadline.workspace.changes import shown

    out.write(f"{plan.description}:\n")
    if not plan.steps:
        out.write("  nothing to do: the files are already as they were.\n")
        return
    for step in plan.steps:
        if step.blocked:
            why = f"  [cannot: {step.blocked}]"
        elif step.conflict:
            why = "  [forced]" if step.path in forced else f"  [conflict: {step.conflict}]"
        else:
            why = ""
        out.write(f"  {step.action.value:<7} {shown(step.path)}{why}\n")
