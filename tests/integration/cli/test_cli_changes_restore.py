"""`threadline changes` and `threadline restore` as real processes, over turns whose real tools
(``write_file`` and ``shell``) changed files, names that are not UTF-8 included."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from tests.support.cli_process import threadline
from tests.support.engines import open_engine
from tests.support.sse_server import ReplayServer
from tests.support.sse_streams import openai_text_stream, openai_tool_call_stream, sse_response

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.messages import MessageKind

ODD = b"caf\xe9.txt"
"""Latin-1 bytes, not UTF-8: the shell makes it with ``printf '\\351'``."""


async def _two_turns(data_dir: Path, server: ReplayServer, folder: Path) -> str:
    engine = await open_engine(data_dir, server)
    try:
        await engine.agents.save_agent(
            AgentConfig(
                "default",
                "Default",
                enabled_tools=("write_file", "shell"),
                approval_rules=(
                    ApprovalRule("write_file", Approval.ALLOW),
                    ApprovalRule("shell", Approval.ALLOW),
                ),
                allowed_folders=(str(folder),),
            )
        )
        session_id = (await engine.sessions.new_session()).id
        await engine.sessions.open_session(session_id)
        turns = [
            [("c1", "write_file", {"path": "notes.txt", "content": "one\n2\n"})],
            [("c2", "shell", {"command": "printf 'x\\n' > \"$(printf 'caf\\351.txt')\" && rm old.txt"})],
        ]
        for number, calls in enumerate(turns, 1):
            server.enqueue(sse_response(openai_tool_call_stream(calls)))
            server.enqueue(sse_response(openai_text_stream([f"Turn {number} done."])))
            engine.turns.send(session_id, f"turn {number}")
            await asyncio.wait_for(engine.turns.wait_idle(session_id), 60)
            if number == 1:
                live = engine.sessions.live(session_id)
                assert live is not None
                reply = live.conversation.path()[-1]
                assert reply.kind is MessageKind.RESPONSE
                await engine.controls.set_checkpoint(session_id, "after-one", reply.id)
        return session_id
    finally:
        await engine.aclose()


def _files(folder: Path) -> dict[bytes, bytes]:
    top = os.fsencode(folder)
    return {name: Path(os.fsdecode(os.path.join(top, name))).read_bytes() for name in os.listdir(top)}


def test_changes_lists_turns_and_restore_gives_the_files_back(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    data_dir, folder = tmp_path / "data", tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text("one\ntwo\nthree\n")
    (folder / "old.txt").write_text("old\n")
    original = _files(folder)
    session_id = asyncio.run(_two_turns(data_dir, replay_server, folder))
    after_one = {**original, b"notes.txt": b"one\n2\n"}

    listed = threadline(data_dir, "changes", "--session", session_id, "--json")
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert [(t["number"], t["summary"]) for t in data["turns"]] == [
        (1, "+1 \u22122 in 1 file"),
        (2, "+1 \u22121 in 2 files"),
    ]
    created = data["turns"][1]["change_sets"][0]["changes"][0]
    assert bytes.fromhex(created["path_hex"]) == os.path.join(os.fsencode(os.path.realpath(folder)), ODD)

    text = threadline(data_dir, "changes", "--session", session_id, "--turn", "1", "--diff")
    assert text.returncode == 0, text.stderr
    assert "Turn 1: +1 \u22122 in 1 file" in text.stdout and "    -two" in text.stdout
    assert "Turn 2" not in text.stdout

    dry = threadline(data_dir, "restore", "--session", session_id, "--before-turn", "1", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "delete " in dry.stdout and "create  " in dry.stdout and "change  " in dry.stdout
    assert _files(folder) == {b"notes.txt": b"one\n2\n", ODD: b"x\n"}  # a dry run changes nothing

    (folder / "notes.txt").write_text("the user's edit\n")  # after the tool's write: a conflict
    told = threadline(data_dir, "restore", "--session", session_id, "--before-turn", "1", "--dry-run")
    assert told.returncode == 3 and "would leave alone" in told.stderr and "notes.txt" in told.stderr
    conflict = threadline(data_dir, "restore", "--session", session_id, "--before-turn", "1")
    assert conflict.returncode == 3
    assert "notes.txt" in conflict.stderr and "--force" in conflict.stderr
    assert (folder / "notes.txt").read_text() == "the user's edit\n"
    assert (folder / "old.txt").read_text() == "old\n"  # the clean files were restored

    forced = threadline(
        data_dir,
        "restore",
        "--session",
        session_id,
        "--before-turn",
        "1",
        "--force",
        str(folder / "notes.txt"),
    )
    assert forced.returncode == 0, forced.stderr
    assert _files(folder) == original

    back = threadline(data_dir, "restore", "--session", session_id, "--checkpoint", "after-one")
    assert back.returncode == 0, back.stderr
    # Every change Threadline made after the checkpoint is undone; the user's edit that --force
    # overwrote comes back with it (their own work is never lost).
    assert _files(folder) == {**after_one, b"notes.txt": b"the user's edit\n"}

    restores = json.loads(threadline(data_dir, "changes", "--session", session_id, "--json").stdout)[
        "restores"
    ]
    assert len(restores) == 3


def test_restore_refuses_in_one_line(tmp_path: Path, replay_server: ReplayServer) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "old.txt").write_text("old\n")
    (folder / "notes.txt").write_text("n\n")
    session_id = asyncio.run(_two_turns(tmp_path / "data", replay_server, folder))
    missing = threadline(tmp_path / "data", "restore", "--session", session_id, "--checkpoint", "nope")
    assert missing.returncode == 1 and "no checkpoint named “nope”" in missing.stderr
    too_far = threadline(tmp_path / "data", "restore", "--session", session_id, "--before-turn", "9")
    assert too_far.returncode == 1 and "no turn 9 (it has 2)" in too_far.stderr
    nobody = threadline(tmp_path / "data", "changes", "--session", "nope")
    assert nobody.returncode == 1 and "no chat with id 'nope'" in nobody.stderr
