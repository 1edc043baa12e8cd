"""``threadline changes``: what the tools changed on disk, turn by turn (docs/workspace.md).

Turns are numbered from 1 along the chat's shown path, as ``restore --before-turn`` counts
them; without ``--session`` the chat changed most recently is shown. ``--diff`` prints each
file's unified diff, ``--json`` everything for scripts (paths that are not UTF-8 carry their
bytes in hex as ``path_hex``).

Only ``argparse`` is imported at module level: the parser is built on every start.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from threadline.core.file_changes import ChangeSet, FileChange, FileState, TurnChanges
    from threadline.engine.api import EngineApi


def add_changes_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "changes", parents=[common], help="what the tools changed on disk, turn by turn"
    )
    parser.add_argument("--session", metavar="ID", help="this chat (default: the most recent one)")
    parser.add_argument("--turn", type=int, metavar="N", help="only turn N (numbered from 1)")
    parser.add_argument("--diff", action="store_true", help="print each file's unified diff")
    parser.add_argument("--json", action="store_true", help="print JSON (for scripts)")


class ChangesError(Exception):
    """Bad arguments: reported in one line by the caller."""


async def run(engine: EngineApi, args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    session_id = args.session or await _latest_session(engine)
    info = await engine.sessions.get_session(session_id)
    if info is None:
        raise ChangesError(f"no chat with id {session_id!r} (see `threadline list`)")
    turns = await engine.workspace.turn_changes(session_id)
    if args.turn is not None:
        turns = [t for t in turns if t.number == args.turn]
    restores = [s for s in await engine.workspace.change_sets(session_id) if s.source.value == "restore"]
    if args.turn is not None:
        restores = []
    if args.json:
        data = {
            "session": session_id,
            "title": info.display_title,
            "machine": engine.workspace.machine,
            "turns": [await _turn_json(engine, t, args.diff) for t in turns],
            "restores": [await _set_json(engine, s, args.diff) for s in restores],
        }
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return 0
    out.write(f"{info.display_title}\n")
    if not turns and not restores:
        which = f"turn {args.turn}" if args.turn is not None else "this chat"
        out.write(f"No file changes recorded in {which}.\n")
        return 0
    for turn in turns:
        out.write(f"\nTurn {turn.number}: {turn.summary}\n")
        for change_set in turn.change_sets:
            await _print_set(engine, change_set, args.diff, out)
    for change_set in restores:
        out.write(f"\nRestore: {change_set.note}\n")
        await _print_set(engine, change_set, args.diff, out)
    return 0


async def _latest_session(engine: EngineApi) -> str:
    sessions = await engine.sessions.list_sessions(limit=500)
    if not sessions:
        raise ChangesError("there are no chats yet")
    return max(sessions, key=lambda s: s.updated_at).id


async def _print_set(engine: EngineApi, change_set: ChangeSet, with_diff: bool, out: TextIO) -> None:
    from threadline.workspace.changes import shown

    tool = f" ({change_set.tool_name})" if change_set.tool_name else ""
    elsewhere = (
        " [another computer: cannot be restored here]"
        if change_set.machine != engine.workspace.machine
        else ""
    )
    if change_set.note and change_set.source.value == "tool":
        out.write(f"  note{tool}: {change_set.note}\n")
    for change in change_set.changes:
        counts = "" if change.binary else f"  +{change.added} \u2212{change.removed}"
        moved = f" (from {shown(change.renamed_from)})" if change.renamed_from else ""
        out.write(f"  {change.kind.value:<9} {shown(change.path)}{moved}{counts}{tool}{elsewhere}\n")
        if with_diff:
            diff = await engine.workspace.file_diff(change)
            if diff.note:
                out.write(f"    {diff.note}\n")
            if diff.text:
                out.write("".join(f"    {line}\n" for line in diff.text.splitlines()))
    for skipped in change_set.skipped:
        out.write(f"  not looked at: {skipped}\n")


async def _turn_json(engine: EngineApi, turn: TurnChanges, with_diff: bool) -> dict[str, Any]:
    return {
        "number": turn.number,
        "prompt_id": turn.prompt_id,
        "reply_id": turn.reply_id,
        "summary": turn.summary,
        "added": turn.added,
        "removed": turn.removed,
        "change_sets": [await _set_json(engine, s, with_diff) for s in turn.change_sets],
    }


async def _set_json(engine: EngineApi, change_set: ChangeSet, with_diff: bool) -> dict[str, Any]:
    return {
        "id": change_set.id,
        "source": change_set.source.value,
        "tool": change_set.tool_name,
        "call_id": change_set.call_id,
        "message_id": change_set.message_id,
        "machine": change_set.machine,
        "created_at": change_set.created_at,
        "note": change_set.note,
        "skipped": list(change_set.skipped),
        "changes": [await _change_json(engine, c, with_diff) for c in change_set.changes],
    }


async def _change_json(engine: EngineApi, change: FileChange, with_diff: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        **_path_json("path", change.path),
        "kind": change.kind.value,
        "added": change.added,
        "removed": change.removed,
        "binary": change.binary,
        "before": _state_json(change.before),
        "after": _state_json(change.after),
    }
    if change.renamed_from:
        data.update(_path_json("renamed_from", change.renamed_from))
    if with_diff:
        diff = await engine.workspace.file_diff(change)
        data["diff"] = diff.text
        data["diff_note"] = diff.note
    return data


def _path_json(key: str, path: str) -> dict[str, str]:
    from threadline.workspace.changes import shown

    raw = os.fsencode(path)
    data = {key: shown(path)}
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        data[f"{key}_hex"] = raw.hex()
    return data


def _state_json(state: FileState) -> dict[str, Any]:
    return {
        "exists": state.exists,
        "digest": state.digest,
        "size": state.size,
        "kept": state.kept,
        "not_kept": state.not_kept,
        "unknown": state.unknown,
    }
