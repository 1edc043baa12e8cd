"""`threadline ask --session X --models …` into a chat replying in another instance.

As plain ``ask`` does (``cli_wait``), the compare waits for that reply and then runs
after it, or gives up at ``--wait`` with one ``threadline:`` line and exit 1. A compare
turned away anyway (the other instance started its turn in between) prints one
``threadline:`` line, no empty blocks, exits 1, and stores nothing.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from tests.integration.cli.test_cli_ask_lease import (  # noqa: F401  (engine, processes: fixtures)
    WAIT,
    ask,
    engine,
    pieces,
    processes,
    start_slow_turn,
)
from tests.integration.cli.test_cli_compare import by_model
from tests.support.async_processes import Processes
from tests.support.sse_server import ReplayServer

from threadline.cli import compare as cli_compare
from threadline.core.compare import CompareTarget
from threadline.core.messages import MessageKind
from threadline.engine.engine import DATABASE_FILENAME, Engine
from threadline.store.repository import Store

pytestmark = pytest.mark.asyncio


async def test_ask_models_waits_for_the_reply_elsewhere_then_compares_after_it(
    tmp_path: Path,
    engine: Engine,  # noqa: F811  (the fixture imported above)
    replay_server: ReplayServer,
    processes: Processes,  # noqa: F811  (the fixture imported above)
) -> None:
    session_id, _ = await start_slow_turn(engine, replay_server, 25)
    replay_server.responder = by_model  # the compare's two requests (the queue went to the turn here)
    process = await ask(
        processes, tmp_path, "--session", session_id, "--wait", "60", "--models", "replay/a,replay/b", "next"
    )
    try:
        assert process.stderr is not None
        waiting = await asyncio.wait_for(process.stderr.readline(), WAIT)
        assert waiting.decode().strip() == f"waiting: replying on {socket.gethostname()}…"
        assert engine.turns.running(session_id)  # it really waited
        out, err = await asyncio.wait_for(process.communicate(), WAIT)
    finally:
        if process.returncode is None:  # a failed assertion above: leave no process behind
            process.kill()
            await process.wait()
    assert process.returncode == 0, err.decode()
    assert (
        out.decode() == "=== replay/a · done ===\na says hello.\n\n=== replay/b · done ===\nb says hello.\n\n"
    )
    tree = await engine.store.load_tree(session_id)
    path = tree.path(tree.active_leaf)
    assert [m.text for m in path] == ["first", "".join(pieces(25)), "next", "a says hello."]


async def test_ask_models_gives_up_at_its_bound_and_stores_nothing(
    tmp_path: Path,
    engine: Engine,  # noqa: F811  (the fixture imported above)
    replay_server: ReplayServer,
    processes: Processes,  # noqa: F811  (the fixture imported above)
) -> None:
    session_id, _ = await start_slow_turn(engine, replay_server, 300)  # 30 s unless stopped
    process = await ask(
        processes, tmp_path, "--session", session_id, "--wait", "1", "--models", "replay/a,replay/b", "no"
    )
    out, err = await asyncio.wait_for(process.communicate(), WAIT)
    assert process.returncode == 1
    lines = err.decode().splitlines()
    assert lines[-1].startswith("threadline: this chat is still replying on ")
    assert out == b""  # no empty "done" blocks
    engine.turns.cancel(session_id)
    await engine.turns.wait_idle(session_id)
    tree = await engine.store.load_tree(session_id)
    assert [m.text for m in tree if m.kind is MessageKind.PROMPT] == ["first"]


async def test_a_compare_turned_away_prints_one_line_and_fails(
    tmp_path: Path,
    engine: Engine,  # noqa: F811  (the fixture imported above)
    replay_server: ReplayServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The other instance took the chat after the wait looked (here: no wait at all)."""
    session_id, _ = await start_slow_turn(engine, replay_server, 300)
    here = await Engine.open(tmp_path / "cli", database_url=Store.sqlite_url(tmp_path / DATABASE_FILENAME))
    try:
        targets = (CompareTarget("replay", "a"), CompareTarget("replay", "b"))
        code = await asyncio.wait_for(cli_compare.run(here, session_id, "too soon", targets), WAIT)
        live = here.sessions.live(session_id)
        assert live is not None and live.conversation.ready_for_input
    finally:
        await here.aclose()
    printed = capsys.readouterr()
    assert code == cli_compare.EXIT_FAILURE
    assert printed.out == ""
    assert printed.err.splitlines()[-1] == (
        "threadline: this chat started replying elsewhere, so the compare was not sent and nothing "
        "was stored; try again when that reply ends"
    )
    assert not [r for r in replay_server.requests if r.body and r.body.get("model") in ("a", "b")]
    engine.turns.cancel(session_id)
    await engine.turns.wait_idle(session_id)
    tree = await engine.store.load_tree(session_id)
    assert [m.text for m in tree if m.kind is MessageKind.PROMPT] == ["first"]
