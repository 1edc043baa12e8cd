"""A turn whose tools write, create and delete files, end to end through a real engine.

The scripted model asks for ``write_file`` and a real ``shell`` command; the engine records
each call's change set (told to the open tab), lists the turns along the shown path, shows
a diff, restores the files as they were before a turn (after a restart too), meets a
conflict with the user's own edit, and undoes its restore.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from tests.integration.engine.helpers import turn
from tests.support.engines import open_engine
from tests.support.sse_server import ReplayServer
from tests.support.sse_streams import openai_text_stream, openai_tool_call_stream, sse_response

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.file_changes import ChangeKind, ChangeSource
from threadline.engine.engine import Engine
from threadline.engine.events import FileChangesRecorded
from threadline.workspace.restore import CHANGED_LATER, CHANGED_ON_DISK, DROPPED

pytestmark = pytest.mark.asyncio


async def _agent(engine: Engine, folder: Path) -> None:
    await engine.agents.save_agent(
        AgentConfig(
            "default",
            "Default",
            enabled_tools=("write_file", "shell", "read_file"),
            approval_rules=(
                ApprovalRule("write_file", Approval.ALLOW),
                ApprovalRule("shell", Approval.ALLOW),
                ApprovalRule("read_file", Approval.ALLOW),
            ),
            allowed_folders=(str(folder),),
        )
    )


def _tools_then_text(replay_server: ReplayServer, calls: list[tuple[str, str, dict[str, str]]]) -> None:
    replay_server.enqueue(sse_response(openai_tool_call_stream(calls)))
    replay_server.enqueue(sse_response(openai_text_stream(["Done."])))


async def test_a_turns_file_changes_are_recorded_shown_and_restored(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text("one\ntwo\n")
    (folder / "doomed.txt").write_text("bye\n")
    original = {p.name: p.read_bytes() for p in folder.iterdir()}
    await _agent(engine, folder)
    session_id = (await engine.sessions.new_session()).id

    _tools_then_text(
        replay_server,
        [
            ("c1", "write_file", {"path": "notes.txt", "content": "one\n2\nthree\n"}),
            ("c2", "shell", {"command": "rm doomed.txt && printf 'made\\n' > made.txt"}),
            ("c3", "read_file", {"path": "notes.txt"}),
        ],
    )
    events = await turn(engine, session_id, "edit the notes")
    recorded = [e.change_set for e in events if isinstance(e, FileChangesRecorded)]
    assert [s.tool_name for s in recorded] == ["write_file", "shell"]
    assert [(os.path.basename(c.path), c.kind) for c in recorded[1].changes] == [
        ("doomed.txt", ChangeKind.DELETED),
        ("made.txt", ChangeKind.CREATED),
    ]
    after_turn_1 = {p.name: p.read_bytes() for p in folder.iterdir()}

    _tools_then_text(replay_server, [("c4", "shell", {"command": "printf 'four\\n' >> notes.txt"})])
    await turn(engine, session_id, "add a line")
    after_turn_2 = {p.name: p.read_bytes() for p in folder.iterdir()}

    turns = await engine.workspace.turn_changes(session_id)
    assert [(t.number, t.summary) for t in turns] == [
        (1, "+3 \u22122 in 3 files"),
        (2, "+1 \u22120 in 1 file"),
    ]
    diff = await engine.workspace.file_diff(turns[0].change_sets[0].changes[0])
    assert "-two\n+2\n+three\n" in diff.text
    undo_one = await engine.workspace.plan_undo_turn(session_id, 1)  # turn 2 wrote notes.txt again
    assert [(os.path.basename(s.path), s.conflict) for s in undo_one.steps] == [
        ("notes.txt", CHANGED_LATER),
        ("doomed.txt", ""),
        ("made.txt", ""),
    ]

    await engine.aclose()  # the way back works after a restart
    engine = await open_engine(tmp_path / "data", replay_server)
    try:
        plan = await engine.workspace.plan_before_turn(session_id, 2)
        assert not plan.conflicts and not plan.blocked
        await engine.workspace.run_restore(plan)
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == after_turn_1

        plan = await engine.workspace.plan_before_turn(session_id, 1)
        restored = await engine.workspace.run_restore(plan)
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == original
        assert restored.source is ChangeSource.RESTORE

        (folder / "notes.txt").write_text("the user's own words\n")  # a conflict for the undo
        undo = await engine.workspace.plan_undo_restore(session_id, restored.id)
        assert [(os.path.basename(s.path), s.conflict) for s in undo.conflicts] == [
            ("notes.txt", CHANGED_ON_DISK)
        ]
        await engine.workspace.run_restore(undo)
        assert (folder / "notes.txt").read_text() == "the user's own words\n"  # left alone
        assert (folder / "made.txt").read_bytes() == after_turn_2["made.txt"]
        assert not (folder / "doomed.txt").exists()
    finally:
        await engine.aclose()


async def test_deleting_the_session_drops_its_change_sets_and_snapshots(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    await _agent(engine, folder)
    session_id = (await engine.sessions.new_session()).id
    _tools_then_text(
        replay_server, [("c1", "write_file", {"path": "a.txt", "content": "unique content 1234\n"})]
    )
    await turn(engine, session_id, "write")
    (change_set,) = await engine.workspace.change_sets(session_id)
    digest = change_set.changes[0].after.digest
    assert engine.workspace.snapshots.has(digest)
    blob = engine.data_dir / "snapshots" / "blobs" / digest[:2] / digest[2:]
    two_hours_ago = time.time() - 7200
    os.utime(blob, (two_hours_ago, two_hours_ago))  # older than the hour a running call may need
    await engine.sessions.delete_session(session_id)
    assert engine.workspace.snapshots.has(digest)  # still undoable
    await engine.sessions.purge_deleted()
    assert await engine.workspace.change_sets(session_id) == []
    assert not engine.workspace.snapshots.has(digest) and not blob.exists()


async def test_a_call_cut_off_by_a_stop_is_recorded_at_the_next_start(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    from threadline.workspace.limits import Budget
    from threadline.workspace.recorder import CallInfo
    from threadline.workspace.scan import ScanCache

    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "a.txt").write_text("before\n")
    session_id = (await engine.sessions.new_session()).id
    call = CallInfo(session_id, "m1", "c1", "shell")
    engine.workspace.recorder.begin(call, [str(folder)], None, ScanCache(), Budget(10**6))
    (folder / "a.txt").write_text("after\n")  # the tool wrote; Threadline stopped before recording
    await engine.aclose()
    engine = await open_engine(tmp_path / "data", replay_server)
    try:
        (change_set,) = await engine.workspace.change_sets(session_id)
        assert change_set.call_id == "c1" and change_set.note
        plan = await engine.workspace._plan(session_id, "undo", [change_set], [change_set])
        await engine.workspace.run_restore(plan)
        assert (folder / "a.txt").read_text() == "before\n"
    finally:
        await engine.aclose()


async def test_dropping_old_snapshots_keeps_the_list_and_restore_says_why(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "a.txt").write_text("the original\n")
    await _agent(engine, folder)
    session_id = (await engine.sessions.new_session()).id
    _tools_then_text(replay_server, [("c1", "write_file", {"path": "a.txt", "content": "rewritten\n"})])
    await turn(engine, session_id, "rewrite")
    used = await engine.workspace.space_used()
    assert used.blobs >= 2 and used.bytes > 0
    assert await engine.workspace.drop_snapshots_older_than(30) == 0  # made just now: kept
    dropped = await engine.workspace.drop_snapshots_older_than(-1)  # "older than tomorrow": all
    assert dropped >= 2 and (await engine.workspace.space_used()).blobs == 0
    assert len(await engine.workspace.change_sets(session_id)) == 1  # still listed
    plan = await engine.workspace.plan_before_turn(session_id, 1)
    assert [s.blocked for s in plan.steps] == [DROPPED]
