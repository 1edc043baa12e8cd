"""``threadline db copy`` writes no secret to the target, whatever an older version left in the source.

The source is built with the real migrations up to 0009 and holds what older versions
could write: a provider header value in ``providers.headers`` and an MCP server header
kept in plain text in the ``mcp_servers`` setting. A row with a header value is also put
in after the upgrade, as nothing but a bug could, to prove the copy checks each column
itself. Copied to SQLite and to PostgreSQL, none of the values is anywhere in the target.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from tests.support.fixtures import memory_keyring  # noqa: F401  (fixture)
from tests.support.legacy_databases import insert_provider
from tests.support.memory_keyring import MemoryKeyring
from tests.support.postgres import PostgresServer

from threadline.__main__ import main
from threadline.core.config import STORED_IN_KEYCHAIN
from threadline.llm.credentials import HEADER_SERVICE
from threadline.store import db, migrate
from threadline.store.repository import Store

PROVIDER_SECRET = "org-secret-5b1e77"
LATE_SECRET = "late-secret-9d20c4"
MCP_SECRET = "mcp-token-3c8e41"
SECRETS = (PROVIDER_SECRET, LATE_SECRET, MCP_SECRET)

pytestmark = pytest.mark.expected_log_warnings(
    r"MCP server remote: not copying the plain-text value of X-Token"
)


def legacy_source(data: Path) -> str:
    """``data/threadline.db`` as older versions left it, then brought to head, then a stray value."""
    data.mkdir(parents=True)
    url = Store.sqlite_url(data / "threadline.db")
    engine = db.create_engine(url)
    try:
        migrate.run_alembic_upgrade(engine, "0009")
        mcp = [
            {
                "name": "remote",
                "transport": "http",
                "url": "http://127.0.0.1:9/mcp",
                "headers": {"X-Token": MCP_SECRET, "X-Trace": "on", "X-Ref": "${REF}"},
                "public_headers": ["X-Trace"],
            }
        ]
        with engine.begin() as connection:
            insert_provider(connection, "work", [["X-Org", PROVIDER_SECRET]])
            connection.execute(
                sa.text("INSERT INTO settings (key, value) VALUES ('mcp_servers', :v)"),
                {"v": json.dumps(mcp)},
            )
        migrate.run_alembic_upgrade(engine)
        with engine.begin() as connection:
            insert_provider(connection, "stray", [["X-Key", LATE_SECRET]])
    finally:
        engine.dispose()
    return url


def everything(url: str) -> str:
    """Every row of every table of the database at ``url``, as text."""
    engine = db.create_engine(url)
    try:
        with engine.connect() as connection:
            tables = sa.inspect(connection).get_table_names()
            parts = []
            for table in tables:
                if connection.dialect.name == "postgresql":
                    rows = connection.execute(sa.text(f'SELECT t::text FROM "{table}" t'))
                else:
                    rows = connection.execute(sa.text(f'SELECT * FROM "{table}"'))
                parts.extend(str(tuple(row)) for row in rows)
            return "\n".join(parts)
    finally:
        engine.dispose()


def file_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


def copied_settings(url: str) -> object:
    engine = db.create_engine(url)
    try:
        with engine.connect() as connection:
            value = connection.execute(
                sa.text("SELECT value FROM settings WHERE key = 'mcp_servers'")
            ).scalar()
            return json.loads(value) if isinstance(value, str) else value
    finally:
        engine.dispose()


def check_target(url: str, keyring: MemoryKeyring) -> None:
    text = everything(url)
    assert not [s for s in SECRETS if s in text]
    assert "X-Org" in text and "X-Key" in text  # the names went over
    (server,) = copied_settings(url)  # type: ignore[misc]
    assert server["headers"] == {"X-Token": STORED_IN_KEYCHAIN, "X-Trace": "on", "X-Ref": "${REF}"}
    assert keyring.entries[(HEADER_SERVICE, "work/X-Org")] == PROVIDER_SECRET  # moved at the upgrade


def test_a_copy_to_sqlite_holds_no_secret(
    tmp_path: Path,
    memory_keyring: MemoryKeyring,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = tmp_path / "data"
    legacy_source(data)
    target = tmp_path / "copy.db"
    assert main(["db", "copy", "--data-dir", str(data), "--to", str(target)]) == 0
    assert "counts and checksums match" in capsys.readouterr().out
    check_target(Store.sqlite_url(target), memory_keyring)
    held = file_bytes(target)
    assert not [s for s in SECRETS if s.encode() in held]


@pytest.mark.postgres
def test_a_copy_to_postgres_holds_no_secret(
    tmp_path: Path,
    postgres_server: PostgresServer,
    memory_keyring: MemoryKeyring,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = tmp_path / "data"
    legacy_source(data)
    server = postgres_server.create_database()
    try:
        assert main(["db", "copy", "--data-dir", str(data), "--to", server.replace("+psycopg", "")]) == 0
        assert "counts and checksums match" in capsys.readouterr().out
        check_target(server, memory_keyring)
    finally:
        postgres_server.drop_database(server)
