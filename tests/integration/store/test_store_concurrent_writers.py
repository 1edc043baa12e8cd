"""Two processes streaming into one session at once: nothing lost, no error, ordinals unique."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.postgres import PostgresServer

from threadline.core.messages import MessageStatus
from threadline.core.tree import ConversationTree
from threadline.store.repository import Store

REPO = Path(__file__).resolve().parents[3]
WRITER = Path(__file__).with_name("store_writer.py")
ROUNDS = 20


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield Store.sqlite_url(tmp_path / "threadline.db")
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    url = server.create_database()
    try:
        yield url
    finally:
        server.drop_database(url)


async def _new_session(url: str) -> str:
    store = await Store.open(url)
    try:
        return (await store.create_session(title="shared")).id
    finally:
        await store.close()


async def _load(url: str, session_id: str) -> ConversationTree:
    store = await Store.open(url)
    try:
        return await store.load_tree(session_id)
    finally:
        await store.close()


def test_two_processes_append_to_one_session(shared_url: str, tmp_path: Path) -> None:
    session_id = asyncio.run(_new_session(shared_url))

    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "desktop"), str(REPO)])}
    writers = [
        subprocess.Popen(
            [sys.executable, str(WRITER), shared_url, session_id, tag, str(ROUNDS), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for tag in ("A", "B")
    ]
    go.touch()
    results = [(w.wait(timeout=300), w.communicate()[1]) for w in writers]
    assert [code for code, _ in results] == [0, 0], results

    messages = list(asyncio.run(_load(shared_url, session_id)))
    assert len(messages) == 2 * ROUNDS * 2
    for tag in ("A", "B"):
        prompts = sorted(m.text for m in messages if m.text.startswith(f"{tag} prompt"))
        assert prompts == sorted(f"{tag} prompt {i}" for i in range(ROUNDS))
        replies = [m for m in messages if m.text.startswith(f"{tag} reply")]
        assert len(replies) == ROUNDS
        assert all(m.status is MessageStatus.COMPLETE and m.text.endswith("part 4. ") for m in replies)


def test_two_stores_saving_one_setting_at_once_both_succeed(shared_url: str) -> None:
    """Two instances saving the same key (the last-used model) race; the later write wins, neither fails."""

    async def race() -> tuple[object, object]:
        a, b = await Store.open(shared_url), await Store.open(shared_url)
        try:
            for round_ in range(ROUNDS):
                key = f"last_used_model.{round_}"
                await asyncio.gather(
                    a.set_setting(key, {"by": "a", "round": round_}),
                    b.set_setting(key, {"by": "b", "round": round_}),
                    a.set_ui_state(key, ["a"]),
                    b.set_ui_state(key, ["b"]),
                )
                got = await a.get_setting(key)
                assert got in ({"by": "a", "round": round_}, {"by": "b", "round": round_}), got
            await a.set_setting("cleared", {"x": 1})
            await b.set_setting("cleared", None)
            return await a.get_setting("cleared", "default"), await b.get_ui_state("last_used_model.0")
        finally:
            await a.close()
            await b.close()

    cleared, state = asyncio.run(race())
    assert cleared is None and state in (["a"], ["b"])
