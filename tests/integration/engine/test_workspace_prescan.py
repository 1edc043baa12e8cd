"""The session's first look at the allowed folders starts with the turn, not with the first
``shell`` call: while the model thinks, every file is read (and kept) once, so the call's
own look finds the cache warm (docs/workspace.md, "Scanning")."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from tests.integration.engine.helpers import turn
from tests.support.sse_server import ReplayServer, openai_text_stream, openai_tool_call_stream, sse_response
from tests.support.waiting import until

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.engine.engine import Engine
from threadline.engine.events import FileChangesRecorded

pytestmark = pytest.mark.asyncio
CHANGE_TWO = "rm f3.txt && echo x >> f7.txt"


async def _agent(engine: Engine, folder: Path, *tools: str) -> None:
    await engine.agents.save_agent(
        AgentConfig(
            "default",
            "Default",
            enabled_tools=tools,
            approval_rules=tuple(ApprovalRule(t, Approval.ALLOW) for t in tools),
            allowed_folders=(str(folder),),
        )
    )


def _folder(tmp_path: Path, count: int) -> tuple[Path, list[bytes]]:
    folder = tmp_path / "work"
    folder.mkdir()
    contents = [f"file {i}\n".encode() for i in range(count)]
    for i, content in enumerate(contents):
        (folder / f"f{i}.txt").write_bytes(content)
    return folder, contents


async def test_a_turn_offering_shell_looks_at_the_folder_before_any_call(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder, contents = _folder(tmp_path, 40)
    await _agent(engine, folder, "shell")
    session_id = (await engine.sessions.new_session()).id
    replay_server.enqueue(sse_response(openai_text_stream(["No tools needed."])))
    await turn(engine, session_id, "just talk")
    digests = [hashlib.sha256(c).hexdigest() for c in contents]
    await until(lambda: all(engine.workspace.snapshots.has(d) for d in digests), timeout=30)


async def test_a_turn_offering_only_declared_tools_does_not_scan(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder, contents = _folder(tmp_path, 5)
    await _agent(engine, folder, "write_file", "read_file")
    session_id = (await engine.sessions.new_session()).id
    replay_server.enqueue(sse_response(openai_text_stream(["No tools needed."])))
    await turn(engine, session_id, "just talk")
    assert not any(engine.workspace.snapshots.has(hashlib.sha256(c).hexdigest()) for c in contents)


async def test_a_shell_call_right_away_waits_for_the_look_ahead_and_is_recorded(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder, _contents = _folder(tmp_path, 200)
    await _agent(engine, folder, "shell")
    session_id = (await engine.sessions.new_session()).id
    replay_server.enqueue(
        sse_response(
            openai_tool_call_stream([("c1", "shell", {"command": "rm f3.txt && echo x >> f7.txt"})])
        ),
        sse_response(openai_text_stream(["Done."])),
    )
    events = await turn(engine, session_id, "change two files")
    (recorded,) = [e.change_set for e in events if isinstance(e, FileChangesRecorded)]
    assert sorted(Path(c.path).name for c in recorded.changes) == ["f3.txt", "f7.txt"]
    plan = await engine.workspace.plan_before_turn(session_id, 1)
    await engine.workspace.run_restore(plan)
    assert (folder / "f3.txt").read_bytes() == b"file 3\n"
    assert (folder / "f7.txt").read_bytes() == b"file 7\n"
