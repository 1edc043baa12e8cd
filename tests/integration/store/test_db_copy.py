"""``threadline db copy``: SQLite → PostgreSQL → SQLite gives back the same database, verified by
counts and checksums, through the command a person types; a target that holds anything is refused."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from tests.support.chat_trees import Chat, chats, store_chat
from tests.support.postgres import PostgresServer

from threadline.__main__ import main
from threadline.core.config import AgentConfig, ProviderConfig, ProviderKind
from threadline.core.messages import Message
from threadline.core.project import Project
from threadline.core.session import SessionInfo
from threadline.core.sticky import ContextSource, StickyContext
from threadline.store.copy import CopyError, copy_database
from threadline.store.repository import Store

KNOWN_TEXT = "the lighthouse at dawn"


async def fill(url: str, generated: list[Chat]) -> None:
    store = await Store.open(url)
    try:
        await store.save_provider(
            ProviderConfig("local", ProviderKind.OPENAI, base_url="http://127.0.0.1:9/v1", default_model="m")
        )
        await store.save_agent(
            AgentConfig(
                id="reviewer",
                name="Reviewer",
                system_prompt="Be strict.",
                temperature=0.25,
                context=StickyContext(sources=(ContextSource("~/notes/*.md"),)),
            )
        )
        await store.set_setting("prices", {"local/m": {"input": 1.5, "output": 2.0}})
        await store.set_ui_state("window", {"tabs": ["a"], "maximised": True})
        project = await store.save_project(replace(Project.create("Garden"), instructions="Metric."))
        await store_chat(store, Chat(SessionInfo(id="known", title="Known"), [Message.prompt(KNOWN_TEXT)]))
        for chat in generated:
            await store_chat(store, chat)
        await store.set_session_project("known", project.id)
        if generated:
            await store.pin_session(generated[-1].info.id, True)
    finally:
        await store.close()
    # Opening marks replies left streaming as interrupted (moving their chats' activity time):
    # let that happen here, so each copy holds exactly what the source will show.
    await (await Store.open(url)).close()


def same(mine: dict[str, object], theirs: dict[str, object]) -> None:
    """Equal dumps, or a failure that names the first differing part (reprs are long)."""
    for key in mine:
        if mine[key] != theirs[key]:
            a, b = str(mine[key]), str(theirs[key])
            at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
            raise AssertionError(
                f"{key} differs at {at}: …{a[max(0, at - 80) : at + 80]}… vs …{b[max(0, at - 80) : at + 80]}…"
            )


async def append(url: str, session_id: str, message: Message) -> None:
    store = await Store.open(url)
    try:
        await store.append_message(session_id, message)
    finally:
        await store.close()


async def dump(url: str) -> dict[str, object]:
    """What a person would notice: every listing and tree, as the app reads them."""
    store = await Store.open(url)
    try:
        sessions = await store.list_sessions(limit=10_000) + await store.list_sessions(
            archived=True, limit=10_000
        )
        trees = {s.id: ([repr(m) for m in await store.load_tree(s.id)]) for s in sessions}
        hits = await store.search("lighthouse")  # random text tokenises differently per backend
        return {
            "sessions": sorted(sessions, key=lambda s: s.id),  # compared as values: JSONB keeps no key order
            "trees": trees,
            "agents": [repr(a) for a in await store.list_agents()],
            "providers": [repr(p) for p in await store.list_providers()],
            "projects": [repr(p) for p in await store.list_projects()],
            "prices": await store.get_setting("prices"),
            "window": await store.get_ui_state("window"),
            "hits": sorted(h.message_id for h in hits),
        }
    finally:
        await store.close()


@pytest.mark.postgres
@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=[Phase.explicit, Phase.generate],
)
@given(generated=st.lists(chats(), min_size=1, max_size=4, unique_by=lambda c: c.info.id))
def test_sqlite_to_postgres_and_back_is_identical(
    generated: list[Chat], postgres_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("copy")
    first = Store.sqlite_url(folder / "first.db")
    back = Store.sqlite_url(folder / "back.db")
    server = postgres_server.create_database()
    try:
        asyncio.run(fill(first, generated))
        there = copy_database(first, server)
        assert there.identical, there.differences()
        again = copy_database(server, back)
        assert again.identical, again.differences()
        assert [f.checksum for f in there.source] == [f.checksum for f in again.target]
        same(asyncio.run(dump(first)), asyncio.run(dump(server)))
        same(asyncio.run(dump(first)), asyncio.run(dump(back)))
        # The server's ids go on after the copied ones: a new message there gets a fresh seq.
        asyncio.run(append(server, "known", Message.prompt("one more")))
    finally:
        postgres_server.drop_database(server)


@pytest.mark.postgres
def test_the_command_copies_to_a_server_and_refuses_a_full_target(
    postgres_server: PostgresServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    asyncio.run(fill(Store.sqlite_url(data / "threadline.db"), []))
    server = postgres_server.create_database()
    try:
        plain = server.replace("+psycopg", "")
        assert main(["db", "copy", "--data-dir", str(data), "--to", plain]) == 0
        out = capsys.readouterr().out
        assert "counts and checksums match" in out and "projects" in out
        assert main(["db", "copy", "--data-dir", str(data), "--to", plain]) == 1
        err = capsys.readouterr().err
        assert "already holds" in err and "Copy only into an empty database" in err
        assert main(["db", "copy", "--data-dir", str(tmp_path / "empty"), "--from", plain]) == 0
        assert main(["db", "copy", "--data-dir", str(data), "--to", str(data / "threadline.db")]) == 1
        assert "same database" in capsys.readouterr().err
    finally:
        postgres_server.drop_database(server)


def test_a_damaged_target_address_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    asyncio.run(fill(Store.sqlite_url(data / "threadline.db"), []))
    code = main(
        ["db", "copy", "--data-dir", str(data), "--to", "postgresql://nobody:secret-pw@127.0.0.1:9/none"]
    )
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("threadline: ") and "secret-pw" not in err
    with pytest.raises(CopyError):
        copy_database(Store.sqlite_url(data / "threadline.db"), Store.sqlite_url(data / "threadline.db"))


ORDER_SENSITIVE_KEYS = ("a", "B", "_x", "b", "A", "é", "z-1", "z1")
"""Keys a natural-language collation orders differently from bytes (SQLite's order)."""


def icu_database(server: PostgresServer) -> str:
    """A database whose default collation is ICU's en-US (as a server set up for people often is)."""
    import psycopg

    url = server.create_database()
    name = url.rsplit("/", 1)[1]
    server.drop_database(url)
    with psycopg.connect(server.admin_url, autocommit=True) as conn:
        try:
            conn.execute(
                f'CREATE DATABASE "{name}" TEMPLATE template0 ENCODING UTF8 '
                "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'"
            )
        except psycopg.Error as err:
            pytest.skip(f"this PostgreSQL server cannot make an ICU database: {err}")
        row = conn.execute("SELECT daticulocale FROM pg_database WHERE datname = %s", (name,)).fetchone()
    assert row is not None and row[0] == "en-US"
    return url


async def fill_order_sensitive(url: str) -> None:
    store = await Store.open(url)
    try:
        for key in ORDER_SENSITIVE_KEYS:
            await store_chat(store, Chat(SessionInfo(id=key, title=f"chat {key}"), [Message.prompt(key)]))
            await store.set_setting(key, {"key": key})
            await store.save_provider(
                ProviderConfig(key, ProviderKind.OPENAI, base_url="http://127.0.0.1:9/v1", default_model="m")
            )
    finally:
        await store.close()
    await (await Store.open(url)).close()


@pytest.mark.postgres
def test_a_copy_through_a_server_with_a_natural_language_collation_verifies(
    postgres_server: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL orders text keys by the database's collation, SQLite by bytes: rows are read in
    byte order on both (and paged by it: two rows a batch here), so the checksums agree."""
    import threadline.store.copy as copying

    monkeypatch.setattr(copying, "BATCH_ROWS", 2)
    first, back = Store.sqlite_url(tmp_path / "first.db"), Store.sqlite_url(tmp_path / "back.db")
    server = icu_database(postgres_server)
    try:
        asyncio.run(fill_order_sensitive(first))
        there = copy_database(first, server)
        assert there.identical, there.differences()
        again = copy_database(server, back)
        assert again.identical, again.differences()
        assert [f.checksum for f in there.source] == [f.checksum for f in again.target]
        assert {f.table: f.rows for f in again.target}["sessions"] == len(ORDER_SENSITIVE_KEYS)
        same(asyncio.run(dump(first)), asyncio.run(dump(back)))
    finally:
        postgres_server.drop_database(server)
