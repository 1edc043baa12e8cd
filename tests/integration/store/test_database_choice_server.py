"""The server choice against the real PostgreSQL test server: what a connection test says for
each outcome, and a command that reads ``database.json`` when no --database-url is given."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest
from tests.support.postgres import PostgresServer, free_port

from threadline.engine.database_choice import POSTGRESQL, DatabaseChoice, ServerChoice, save_choice
from threadline.engine.database_probe import ServerContents, probe_server
from threadline.store.repository import Store

ENV = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
ENV.pop("THREADLINE_DB_PASSWORD", None)


@pytest.fixture
def server_db(postgres_server: PostgresServer) -> Iterator[tuple[str, ServerChoice]]:
    url = postgres_server.create_database()
    port = int(postgres_server.sqlalchemy_base.rsplit(":", 1)[1])
    yield url, ServerChoice("127.0.0.1", port, url.rsplit("/", 1)[1], "postgres", "disable")
    postgres_server.drop_database(url)


def test_probe_tells_empty_threadline_and_other_databases(
    server_db: tuple[str, ServerChoice], postgres_server: PostgresServer
) -> None:
    url, server = server_db
    empty = probe_server(server, None)
    assert empty.ok and empty.contents is ServerContents.EMPTY
    assert empty.message.startswith("Connected — empty database.")

    async def fill() -> None:
        store = await Store.open(url)
        try:
            await store.create_session(title="On the server")
        finally:
            await store.close()

    asyncio.run(fill())
    ours = probe_server(server, "any password: the test server trusts loopback")
    assert ours.contents is ServerContents.THREADLINE and ours.chats == 1
    assert ours.message == "Connected — this database already holds Threadline's conversations (1 chat)."

    with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
    newer = probe_server(server, None)
    assert newer.contents is ServerContents.NEWER and "newer version" in newer.message

    other_url = postgres_server.create_database()
    try:
        with psycopg.connect(other_url.replace("+psycopg", ""), autocommit=True) as conn:
            conn.execute("CREATE TABLE invoices (id int)")
        other = probe_server(replace(server, database=other_url.rsplit("/", 1)[1]), None)
        assert other.contents is ServerContents.OTHER and "not Threadline's" in other.message
    finally:
        postgres_server.drop_database(other_url)


def test_probe_failures_are_sentences(server_db: tuple[str, ServerChoice]) -> None:
    _url, server = server_db
    refused = probe_server(replace(server, port=free_port()), None)
    assert not refused.ok and "the connection was refused" in refused.message
    missing = probe_server(replace(server, database="no_such_db"), None)
    assert missing.message.startswith("The server at 127.0.0.1 port") and "“no_such_db”" in missing.message
    tls = probe_server(replace(server, tls="require"), None)  # the test server has no TLS
    assert tls.message.startswith("The server does not offer TLS, but TLS was required."), tls.message
    unknown = probe_server(replace(server, host="no-such-host.invalid"), None)
    assert unknown.message == "No server called “no-such-host.invalid” could be found. Check the host name."
    for result in (refused, missing, tls, unknown):
        assert "psycopg" not in result.message and "FATAL" not in result.message


def run_threadline(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "threadline", *args, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
        check=False,
    )


def test_a_command_uses_the_chosen_server_unless_a_url_is_given(
    server_db: tuple[str, ServerChoice], tmp_path: Path
) -> None:
    url, server = server_db

    async def fill() -> None:
        store = await Store.open(url)
        try:
            await store.create_session(title="Chat kept on the server")
        finally:
            await store.close()

    asyncio.run(fill())
    data_dir = tmp_path / "data"
    save_choice(data_dir, DatabaseChoice(POSTGRESQL, server))
    listed = run_threadline(data_dir, "list")
    assert listed.returncode == 0, listed.stderr
    assert "Chat kept on the server" in listed.stdout
    assert not (data_dir / "threadline.db").exists()  # the local file was never opened

    local = tmp_path / "local.db"
    flagged = run_threadline(data_dir, "list", "--database-url", f"sqlite:///{local}")
    assert flagged.returncode == 0, flagged.stderr
    assert "Chat kept on the server" not in flagged.stdout and local.exists()

    save_choice(data_dir, DatabaseChoice(POSTGRESQL, replace(server, port=free_port())))
    down = run_threadline(data_dir, "list")
    assert down.returncode == 1 and down.stderr.startswith("threadline: ")

    # The TLS mode reaches the driver: the test server offers no TLS, so "require" cannot connect.
    save_choice(data_dir, DatabaseChoice(POSTGRESQL, replace(server, tls="require")))
    no_tls = run_threadline(data_dir, "list")
    assert no_tls.returncode == 1 and "Chat kept on the server" not in no_tls.stdout


def test_the_window_opens_the_chosen_server(server_db: tuple[str, ServerChoice], tmp_path: Path) -> None:
    from threadline.app.start import open_chosen_engine

    _url, server = server_db
    data_dir = tmp_path / "data"
    save_choice(data_dir, DatabaseChoice(POSTGRESQL, server))

    async def opened_url() -> str:
        engine = await open_chosen_engine(data_dir, None)
        try:
            return str(engine.store.url)
        finally:
            await engine.aclose()

    chosen = asyncio.run(opened_url())
    assert chosen.startswith(f"postgresql+psycopg://postgres@127.0.0.1:{server.port}/{server.database}?")
    assert "sslmode=disable" in chosen
    assert not (data_dir / "threadline.db").exists()
