"""`threadline ask --models` end to end, as a separate process against the replay server."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.integration.cli.test_cli_ask import add_replay_provider, stored_sessions
from tests.support.cli_process import ENV, threadline
from tests.support.sse_server import (
    RecordedRequest,
    ReplayServer,
    ScriptedResponse,
    openai_model_not_found,
    openai_text_stream,
    sse_response,
)

from threadline.core.messages import MessageStatus
from threadline.core.tree import ConversationTree
from threadline.engine.engine import DATABASE_FILENAME
from threadline.store.repository import Store


def by_model(request: RecordedRequest) -> ScriptedResponse:
    model = request.body["model"]
    if model == "broken":
        return openai_model_not_found(model)
    return sse_response(openai_text_stream([f"{model} ", "says ", "hello."], model=model), chunk_delay=0.01)


def test_ask_models_prints_each_reply_labelled(tmp_path: Path, replay_server: ReplayServer) -> None:
    add_replay_provider(tmp_path, replay_server)
    replay_server.responder = by_model
    result = threadline(tmp_path, "ask", "--models", "replay/alpha,replay/beta", "Greet me")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "=== replay/alpha · done ===\nalpha says hello.\n\n=== replay/beta · done ===\nbeta says hello.\n\n"
    )
    assert "[replay/alpha: writing]" in result.stderr
    (path,) = stored_sessions(tmp_path)
    assert path[0].text == "Greet me" and path[-1].text == "alpha says hello."  # the first finished

    failed = threadline(tmp_path, "ask", "--models", "replay/alpha,replay/broken", "Again")
    assert failed.returncode == 1
    assert "=== replay/broken · failed ===\nthreadline: " in failed.stdout and "broken" in failed.stdout


def test_ask_models_refuses_bad_lists_before_sending(tmp_path: Path, replay_server: ReplayServer) -> None:
    add_replay_provider(tmp_path, replay_server)
    for spec, said in [("replay/alpha", "2 to 4"), ("/alpha,replay/beta", "PROVIDER/MODEL")]:
        result = threadline(tmp_path, "ask", "--models", spec, "Hi")
        assert result.returncode == 1 and said in result.stderr and result.stdout == ""
    assert replay_server.requests == []


def test_sigkill_during_a_compare_keeps_every_partial_reply(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)
    replay_server.responder = lambda request: sse_response(
        openai_text_stream([f"{request.body['model']}{i} " for i in range(2000)]), chunk_delay=0.01
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "threadline", "--data-dir", str(tmp_path), "ask", "--models",
         "replay/a,replay/b,replay/c", "Count"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )  # fmt: skip
    try:
        stored = wait_for_stored_text(tmp_path / DATABASE_FILENAME, replies=3, timeout=60)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
    assert stored, "the three replies were not being written"

    (path,) = stored_sessions(tmp_path)  # opening the store marks them interrupted
    prompt = path[0]
    assert prompt.text == "Count"
    tree = read_tree(tmp_path)
    replies = tree.children(prompt.id)
    assert sorted(r.metadata.model if r.metadata else "" for r in replies) == ["a", "b", "c"]
    for reply in replies:
        assert reply.status is MessageStatus.INTERRUPTED
        model = reply.metadata.model if reply.metadata else ""
        full = "".join(f"{model}{i} " for i in range(2000))
        assert reply.text and full.startswith(reply.text) and len(reply.text) < len(full)


def wait_for_stored_text(database: Path, *, replies: int, timeout: float) -> bool:
    """Wait until ``replies`` assistant rows hold text (read with plain sqlite3, read-only)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if database.exists():
            with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5) as db:
                try:
                    (count,) = db.execute(
                        "SELECT count(*) FROM messages WHERE role = 'assistant' AND length(text) > 20"
                    ).fetchone()
                except sqlite3.OperationalError:  # the schema is still being made
                    count = 0
            if count >= replies:
                return True
        time.sleep(0.05)
    return False


def read_tree(data_dir: Path) -> ConversationTree:
    async def read() -> ConversationTree:
        store = await Store.open(Store.sqlite_url(data_dir / DATABASE_FILENAME))
        try:
            (session,) = await store.list_sessions()
            return await store.load_tree(session.id)
        finally:
            await store.close()

    return asyncio.run(read())


def test_ask_models_takes_an_agent_beside_a_model(tmp_path: Path, replay_server: ReplayServer) -> None:
    """``agent:NAME`` in ``--models``: that column is the agent, with its own instructions."""
    add_replay_provider(tmp_path, replay_server)
    replay_server.responder = by_model
    added = threadline(tmp_path, "agent", "add", "Reviewer", "--system", "Be terse.")
    assert added.returncode == 0, added.stderr
    result = threadline(tmp_path, "ask", "--models", "replay/alpha,agent:reviewer", "Greet me")
    assert result.returncode == 0, result.stderr
    assert "=== replay/alpha · done ===\nalpha says hello.\n\n" in result.stdout
    assert "=== agent:reviewer · done ===\n" in result.stdout
    bodies = [r.body for r in replay_server.requests if r.method == "POST"]
    terse = [b for b in bodies if b["messages"][0] == {"role": "system", "content": "Be terse."}]
    assert len(bodies) == 2 and len(terse) == 1 and terse[0]["model"] != "alpha"

    unknown = threadline(tmp_path, "ask", "--models", "replay/alpha,agent:Nobody", "Hi")
    assert unknown.returncode == 1 and unknown.stdout == ""
    assert "threadline: no agent named 'Nobody'" in unknown.stderr
    assert len([r for r in replay_server.requests if r.method == "POST"]) == 2  # nothing more sent

    help_text = threadline(tmp_path, "ask", "--help").stdout
    assert "agent:NAME" in help_text


def test_ctrl_c_before_any_model_answered_prints_stopped_not_done(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    """Ctrl+C while neither model has sent a token: each block says "stopped" (a worker with
    no reply is not "done"), exit 130."""
    add_replay_provider(tmp_path, replay_server)
    replay_server.responder = lambda request: sse_response(
        openai_text_stream(["late"], model=request.body["model"]), first_byte_delay=120
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "threadline", "--data-dir", str(tmp_path), "ask", "--models",
         "replay/a,replay/b", "Anyone?"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while len([r for r in replay_server.requests if r.method == "POST"]) < 2:
            assert time.monotonic() < deadline, "the two requests were not sent"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, err.decode()
    assert out.decode() == "=== replay/a · stopped ===\n\n=== replay/b · stopped ===\n\n"
    assert "done" not in err.decode()
