"""`threadline ask --session` and a turn running in another instance, as separate processes.

An engine in this process and ``python -m threadline ask`` share one SQLite file:
``ask`` waits for the engine's turn (saying where it runs) and then runs after it,
or gives up at its ``--wait`` bound with one ``threadline:`` line; an ``ask`` killed
mid-stream leaves a lease that the engine takes over, its reply marked interrupted.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from tests.integration.cli.test_cli_ask import add_replay_provider
from tests.support.async_processes import Processes
from tests.support.cli_process import ENV
from tests.support.engines import FAST_RETRIES
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response
from tests.support.waiting import until

from threadline.core.messages import MessageKind, MessageStatus
from threadline.engine.engine import Engine
from threadline.engine.events import ConversationEvent, MessageChanged, TextDelta

pytestmark = pytest.mark.asyncio
WAIT = 60.0


@pytest_asyncio.fixture
async def engine(tmp_path: Path, replay_server: ReplayServer) -> AsyncIterator[Engine]:
    add_replay_provider(tmp_path, replay_server)  # the same data folder the commands use
    opened = await Engine.open(
        tmp_path, retry_policy=FAST_RETRIES, provider_timeout=10.0, lease_heartbeat=0.2
    )
    try:
        yield opened
    finally:
        await opened.aclose()


@pytest_asyncio.fixture
async def processes() -> AsyncIterator[Processes]:
    """The test's ``ask`` processes, ended and closed before its event loop is."""
    started = Processes()
    try:
        yield started
    finally:
        await started.aclose()


async def ask(processes: Processes, data_dir: Path, *args: str) -> asyncio.subprocess.Process:
    return await processes.start(
        sys.executable, "-m", "threadline", "--data-dir", str(data_dir), "ask", *args, env=ENV
    )


async def ask_streaming(
    processes: Processes, data_dir: Path, server: ReplayServer, session_id: str
) -> asyncio.subprocess.Process:
    """An ``ask`` into ``session_id`` whose slow 400-piece reply has begun to print (so it holds
    the session's lease)."""
    server.enqueue(sse_response(openai_text_stream(pieces(400)), chunk_delay=0.05))
    process = await ask(processes, data_dir, "--session", session_id, "count")
    assert process.stdout is not None
    printed = b""
    async with asyncio.timeout(WAIT):
        while len(printed) < 10 * 5:
            printed += await process.stdout.read(4096)
    return process


def pieces(count: int) -> list[str]:
    return [f"w{n:03d} " for n in range(count)]


async def start_slow_turn(engine: Engine, server: ReplayServer, count: int) -> tuple[str, list[TextDelta]]:
    server.enqueue(sse_response(openai_text_stream(pieces(count)), chunk_delay=0.1))
    info = await engine.sessions.new_session("Busy here")
    live = await engine.sessions.open_session(info.id)
    grown: list[TextDelta] = []
    live.subscribe(lambda e: grown.append(e) if isinstance(e, TextDelta) else None)
    engine.turns.send(info.id, "first")
    await until(lambda: len(grown) >= 2)  # its request has taken the first queued response
    return info.id, grown


async def test_ask_waits_for_the_turn_running_elsewhere_then_runs_after_it(
    tmp_path: Path, engine: Engine, replay_server: ReplayServer, processes: Processes
) -> None:
    session_id, _ = await start_slow_turn(engine, replay_server, 25)
    replay_server.enqueue(sse_response(openai_text_stream(["second ", "answer"])))
    process = await ask(processes, tmp_path, "--session", session_id, "--wait", "60", "next")
    assert process.stderr is not None
    waiting = await asyncio.wait_for(process.stderr.readline(), WAIT)
    assert waiting.decode().strip() == f"waiting: replying on {socket.gethostname()}…"
    assert engine.turns.running(session_id)  # it really waited: the turn here was still going
    out, err = await asyncio.wait_for(process.communicate(), WAIT)
    assert process.returncode == 0, err.decode()
    assert out.decode().strip() == "second answer"
    tree = await engine.store.load_tree(session_id)
    path = tree.path(tree.active_leaf)
    assert [m.text for m in path] == ["first", "".join(pieces(25)), "next", "second answer"]
    assert all(m.status is MessageStatus.COMPLETE for m in path if m.is_assistant)


async def test_ask_gives_up_at_its_bound_and_stores_nothing(
    tmp_path: Path, engine: Engine, replay_server: ReplayServer, processes: Processes
) -> None:
    session_id, _ = await start_slow_turn(engine, replay_server, 300)  # 30 s unless stopped
    process = await ask(processes, tmp_path, "--session", session_id, "--wait", "1", "not now")
    out, err = await asyncio.wait_for(process.communicate(), WAIT)
    assert process.returncode == 1
    lines = err.decode().splitlines()
    assert lines[0] == f"waiting: replying on {socket.gethostname()}…"
    assert len(lines) == 2 and lines[1].startswith("threadline: this chat is still replying on ")
    assert out == b""
    engine.turns.cancel(session_id)
    await engine.turns.wait_idle(session_id)
    tree = await engine.store.load_tree(session_id)
    assert [m.text for m in tree if m.kind is MessageKind.PROMPT] == ["first"]


async def test_a_killed_ask_loses_its_lease_and_the_engine_runs_its_turn(
    tmp_path: Path, engine: Engine, replay_server: ReplayServer, processes: Processes
) -> None:
    info = await engine.sessions.new_session("Killed elsewhere")
    process = await ask_streaming(processes, tmp_path, replay_server, info.id)
    lease = await engine.store.get_lease(info.id)
    assert lease is not None and lease.holder.split("|")[1] == str(process.pid)
    assert await engine.turns.busy_elsewhere(info.id) == socket.gethostname()
    os.kill(process.pid, signal.SIGKILL)
    await process.wait()

    live = await engine.sessions.open_session(info.id)
    events: list[ConversationEvent] = []
    live.subscribe(events.append)
    (prompt, left) = live.conversation.path()
    assert prompt.text == "count" and left.status is MessageStatus.STREAMING  # as the dead process left it
    replay_server.enqueue(sse_response(openai_text_stream(["taken ", "over"])))
    engine.turns.send(info.id, "go on")
    await engine.turns.wait_idle(info.id)
    assert any(isinstance(e, MessageChanged) and e.message.id == left.id for e in events)
    tree = await engine.store.load_tree(info.id)
    stored = tree.path(tree.active_leaf)
    assert [m.text for m in stored][2:] == ["go on", "taken over"]
    assert stored[1].id == left.id and stored[1].status is MessageStatus.INTERRUPTED
    assert "".join(pieces(400)).startswith(stored[1].text) and stored[1].text
    assert await engine.store.get_lease(info.id) is None


async def test_ask_after_a_killed_ask_runs_at_once_instead_of_waiting(
    tmp_path: Path, engine: Engine, replay_server: ReplayServer, processes: Processes
) -> None:
    """A holder killed with SIGKILL leaves its lease row; the next ``ask --session`` sees that
    its holder is gone and runs, rather than waiting out its ``--wait`` and giving up."""
    info = await engine.sessions.new_session("Killed, then asked again")
    first = await ask_streaming(processes, tmp_path, replay_server, info.id)
    os.kill(first.pid, signal.SIGKILL)
    await first.wait()
    lease = await engine.store.get_lease(info.id)
    assert lease is not None and lease.holder.split("|")[1] == str(first.pid)  # left behind

    replay_server.enqueue(sse_response(openai_text_stream(["taken ", "over"])))
    second = await ask(processes, tmp_path, "--session", info.id, "--wait", "120", "go on")
    out, err = await asyncio.wait_for(second.communicate(), WAIT)
    assert second.returncode == 0, err.decode()
    assert "waiting:" not in err.decode()
    assert out.decode().strip() == "taken over"
    tree = await engine.store.load_tree(info.id)
    path = tree.path(tree.active_leaf)
    assert [m.text for m in path][2:] == ["go on", "taken over"]
    assert path[1].status is MessageStatus.INTERRUPTED
    assert await engine.store.get_lease(info.id) is None


async def test_a_paused_ask_keeps_its_lease_however_late_its_heartbeat_and_loses_it_once_killed(
    tmp_path: Path, engine: Engine, replay_server: ReplayServer, processes: Processes
) -> None:
    """A holder on this machine whose heartbeat is late is busy, not dead (docs/storage.md, "A late
    heartbeat"). The ``ask`` is stopped (SIGSTOP) until its lease has been silent for twice the
    engine's expiry: still held, to ``busy_elsewhere`` and to a turn start. Killed, its lease is
    free at the next read, without waiting for any expiry."""
    info = await engine.sessions.new_session("Paused elsewhere")
    process = await ask_streaming(processes, tmp_path, replay_server, info.id)
    os.kill(process.pid, signal.SIGSTOP)
    late = engine.leases.expires_after * 2

    async def silence() -> float:
        lease = await engine.store.get_lease(info.id)
        assert lease is not None and lease.holder.split("|")[1] == str(process.pid)
        return (lease.read_at - lease.heartbeat_at).total_seconds()

    async with asyncio.timeout(WAIT):
        while await silence() <= late.total_seconds():
            await asyncio.sleep(0.05)
    assert await engine.turns.busy_elsewhere(info.id) == socket.gethostname()
    refused = await engine.store.acquire_lease(info.id, engine.leases.holder, engine.leases.expires_after)
    assert not refused.ok and refused.held is not None
    assert refused.held.holder.split("|")[1] == str(process.pid)

    os.kill(process.pid, signal.SIGKILL)
    await process.wait()
    assert await engine.turns.busy_elsewhere(info.id) is None  # gone: no expiry to wait out
    taken = await engine.store.acquire_lease(info.id, engine.leases.holder, engine.leases.expires_after)
    assert taken.ok and taken.taken_from is not None and taken.taken_from.split("|")[1] == str(process.pid)
    await engine.store.release_lease(info.id, engine.leases.holder)
