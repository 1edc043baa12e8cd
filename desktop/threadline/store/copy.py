"""Copy a whole Threadline database to another (SQLite ↔ PostgreSQL), then prove the copy equal.

``threadline db copy`` uses this to move a person's conversations, agents, providers,
projects and settings to a server database (to share them between machines) or back
to a file. Rules:

* The source is read in **one** transaction (``REPEATABLE READ`` on PostgreSQL, a
  single read transaction on SQLite's WAL), so a window still writing into it
  cannot make the copy a mix of two moments.
* The target must be empty (a fresh file or an empty server database): merging two
  histories is what import is for, and a copy must never overwrite one.
* Rows go over as they are — ids, ordinals, timestamps, JSON — in primary-key order
  and batches, so memory stays flat at 100,000 messages. Derived data is not
  copied: each backend rebuilds its own full-text index from its triggers or its
  stored column.
* Verification reads the target back and compares, table by table, the number of
  rows and a SHA-256 over every row in primary-key order (values normalised so
  SQLite and PostgreSQL agree: aware UTC times, JSON with sorted keys; text keys
  ordered by their bytes on both, whatever the server database's collation). The source's
  figures are taken from the very rows that were copied.

Secrets are not in the database (they live in the keychain), and the copy makes sure of
it column by column rather than trusting the source: a provider row goes over with its
header names only (``convert.stored_header_sources``), and a value of an MCP server's
environment or headers that an older version left in plain text (not marked "not a
secret", not ``${VAR}``) becomes the keychain marker, so the target asks for it again
instead of holding it (docs/storage.md, "Secrets"). The target URL's password is never
printed or logged.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlmodel import SQLModel

from threadline.core.config import STORED_IN_KEYCHAIN, env_reference
from threadline.store import db, migrate
from threadline.store.convert import stored_header_sources
from threadline.store.errors import StoreError
from threadline.store.tables import (
    AgentRow,
    ChangeSetRow,
    FileChangeRow,
    MemoryRow,
    MessageRow,
    ProjectRow,
    ProviderRow,
    SessionRow,
    SettingRow,
    UIStateRow,
)

log = logging.getLogger("threadline.store.copy")

COPIED_TABLES: tuple[type[SQLModel], ...] = (
    ProviderRow,
    AgentRow,
    SettingRow,
    UIStateRow,
    ProjectRow,
    SessionRow,
    MessageRow,
    ChangeSetRow,
    FileChangeRow,
    MemoryRow,
    # Not ``ChangeLogRow``: the change feed's log is derived; the target's triggers write its own.
    # Not ``SessionLeaseRow``: a lease belongs to a process running a turn on the source right now.
)
"""Every table of the schema, parents before the rows that point at them."""
BATCH_ROWS = 2000
"""Rows read and written at a time: a few MB of messages, and few round trips to a server."""

Progress = Callable[[str, int], None]
"""Told ``(table, rows copied so far)`` after each batch."""


class CopyError(StoreError):
    """A copy that cannot start or did not come out identical; ``user_message`` says which."""

    default_message = "The database could not be copied."


@dataclass(frozen=True, slots=True)
class TableFigures:
    """One table's row count and checksum, on one side of a copy."""

    table: str
    rows: int
    checksum: str


@dataclass(frozen=True, slots=True)
class CopyReport:
    """What a copy moved and whether the target reads back identical."""

    source: tuple[TableFigures, ...]
    target: tuple[TableFigures, ...]
    seconds: float

    @property
    def identical(self) -> bool:
        return self.source == self.target

    def differences(self) -> list[str]:
        """One line per table whose rows or checksum differ (``[]`` when identical)."""
        theirs = {f.table: f for f in self.target}
        lines: list[str] = []
        for mine in self.source:
            other = theirs.get(mine.table)
            if other is None or other != mine:
                got = f"{other.rows} rows" if other is not None else "nothing"
                lines.append(
                    f"{mine.table}: {mine.rows} rows copied, the target holds {got} (checksums differ)"
                )
        return lines


def safe_url(url: str) -> str:
    """``url`` as it may be shown or logged: the password masked."""
    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "(a database URL that could not be read)"


def copy_database(source_url: str, target_url: str, progress: Progress | None = None) -> CopyReport:
    """Copy everything from ``source_url`` into the empty database at ``target_url`` and verify.

    Both are brought to the current schema first (the source's file gets its usual
    backup before an upgrade). Raises ``CopyError`` when the target is not empty or
    the copy does not read back identical, and the store's errors for databases that
    cannot be opened.
    """
    started = time.monotonic()
    if _same_database(source_url, target_url):
        raise CopyError(user_message="The source and the target are the same database.")
    source = _open(source_url)
    try:
        target = _open(target_url)
        try:
            _require_empty(target, target_url)
            copied = _copy(source, target, progress)
            _after_copy(target)
            verified = tuple(_figures(target, model) for model in COPIED_TABLES)
        finally:
            target.dispose()
    finally:
        source.dispose()
    report = CopyReport(source=copied, target=verified, seconds=time.monotonic() - started)
    log.info(
        "copied %s rows to %s in %.1f s", sum(f.rows for f in copied), safe_url(target_url), report.seconds
    )
    return report


# -- opening -------------------------------------------------------------------------------


def _open(url: str) -> Engine:
    try:
        engine = db.create_engine(url)
    except Exception as error:
        raise CopyError(
            str(error),
            user_message=f"{safe_url(url)} is not a usable database address. Use a file path or a URL "
            "such as postgresql+psycopg://user@host/threadline.",
        ) from error
    try:
        migrate.ensure_schema(engine, sqlite_file=db.sqlite_path(url), backup_dir=None)
    except StoreError:
        engine.dispose()
        raise
    except Exception as error:
        engine.dispose()
        raise CopyError(
            str(error),
            user_message=f"Could not open {safe_url(url)}: check that the server runs and the "
            "address, user and password are right.",
        ) from error
    return engine


def _same_database(a: str, b: str) -> bool:
    first, second = db.sqlite_path(a), db.sqlite_path(b)
    if first is not None and second is not None:
        return first.resolve() == second.resolve()
    try:
        return sa.make_url(a) == sa.make_url(b)
    except Exception:
        return False


def _require_empty(target: Engine, url: str) -> None:
    with target.connect() as connection:
        held = {
            model.__tablename__: connection.execute(
                sa.select(sa.func.count()).select_from(_table(model))
            ).scalar_one()
            for model in COPIED_TABLES
        }
    filled = {name: count for name, count in held.items() if count}
    if filled:
        chats = filled.get(SessionRow.__tablename__, 0)
        what = f"{chats} chats" if chats else ", ".join(f"{n} {t}" for t, n in filled.items())
        raise CopyError(
            user_message=f"{safe_url(url)} already holds {what}. Copy only into an empty database "
            "(a new file, or a new database on the server); to add chats to one in use, export and "
            "import them."
        )


# -- copying -----------------------------------------------------------------------------


def _copy(source: Engine, target: Engine, progress: Progress | None) -> tuple[TableFigures, ...]:
    """Every table in one source snapshot; returns the figures of what was read."""
    figures: list[TableFigures] = []
    options: dict[str, Any] = {}
    if source.dialect.name == "postgresql":
        options["isolation_level"] = "REPEATABLE READ"
    with source.connect().execution_options(**options) as reading, reading.begin():
        for model in COPIED_TABLES:
            table = _table(model)
            digest = hashlib.sha256()
            count = 0
            with target.begin() as writing:
                for batch in _batches(reading, table):
                    rows = [_without_secrets(table.name, dict(row._mapping)) for row in batch]
                    writing.execute(table.insert(), rows)
                    for values in rows:
                        digest.update(_row_bytes(values.values()))
                    count += len(rows)
                    if progress is not None:
                        progress(table.name, count)
            figures.append(TableFigures(table.name, count, digest.hexdigest()))
    return tuple(figures)


MCP_SERVERS_SETTING = "mcp_servers"
"""The setting that holds the MCP server records (``threadline.tools.mcp.config``)."""


def _without_secrets(table: str, row: dict[str, Any]) -> dict[str, Any]:
    """``row`` as it may be written to the target: no header value of a provider, no plain MCP secret."""
    if table == ProviderRow.__tablename__:
        row["headers"] = stored_header_sources(row.get("headers"))
    elif table == SettingRow.__tablename__ and row.get("key") == MCP_SERVERS_SETTING:
        row["value"] = _mcp_records_without_secrets(row.get("value"))
    return row


def _mcp_records_without_secrets(records: Any) -> Any:
    """The MCP server records with every plain secret value replaced by the keychain marker.

    A record's ``env`` and ``headers`` values are secrets unless listed in ``public_env`` /
    ``public_headers`` or written ``${VAR}`` (``threadline.tools.mcp.secrets``). One still in
    plain text was saved by an older version on a computer without a keychain.
    """
    if not isinstance(records, list):
        return records
    cleaned: list[Any] = []
    for record in records:
        if isinstance(record, dict):
            record = dict(record)
            hidden: list[str] = []
            for field, public_field in (("env", "public_env"), ("headers", "public_headers")):
                pairs, public = record.get(field), record.get(public_field) or ()
                if not isinstance(pairs, dict):
                    continue
                record[field] = {
                    k: v if _not_secret(k, v, public) else STORED_IN_KEYCHAIN for k, v in pairs.items()
                }
                hidden += [k for k, v in pairs.items() if not _not_secret(k, v, public)]
            if hidden:
                log.warning(
                    "MCP server %s: not copying the plain-text value of %s (enter it again on the target)",
                    record.get("name", "?"),
                    ", ".join(hidden),
                )
        cleaned.append(record)
    return cleaned


def _not_secret(name: str, value: Any, public: Any) -> bool:
    if value is None or value == "" or name in public:
        return True
    return isinstance(value, str) and (value == STORED_IN_KEYCHAIN or env_reference(value) is not None)


def _after_copy(target: Engine) -> None:
    """A server's id sequence must continue after the copied message ids."""
    if target.dialect.name != "postgresql":
        return
    with target.begin() as connection:
        connection.execute(
            sa.text(
                "SELECT setval(pg_get_serial_sequence('messages', 'seq'), "
                "COALESCE((SELECT MAX(seq) FROM messages), 0) + 1, false)"
            )
        )


def _figures(engine: Engine, model: type[SQLModel]) -> TableFigures:
    table = _table(model)
    digest = hashlib.sha256()
    count = 0
    with engine.connect() as connection:
        for batch in _batches(connection, table):
            for row in batch:
                digest.update(_row_bytes(row))
            count += len(batch)
    return TableFigures(table.name, count, digest.hexdigest())


def _batches(connection: Connection, table: sa.Table) -> Iterator[Sequence[sa.Row[Any]]]:
    """The table's rows in primary-key order, ``BATCH_ROWS`` at a time (keyset paging)."""
    keys = list(table.primary_key.columns)
    ordered = _bytewise(connection, keys)
    columns = list(table.columns)
    last: tuple[Any, ...] | None = None
    while True:
        statement = sa.select(*columns).order_by(*ordered).limit(BATCH_ROWS)
        if last is not None:
            statement = statement.where(sa.tuple_(*ordered) > sa.tuple_(*last))
        batch = connection.execute(statement).all()
        if not batch:
            return
        yield batch
        last = tuple(batch[-1]._mapping[k.name] for k in keys)


def _bytewise(connection: Connection, keys: list[sa.Column[Any]]) -> list[sa.ColumnElement[Any]]:
    """Key columns that order text by its bytes on either backend, so both sides agree.

    SQLite compares text with ``BINARY`` (the bytes of its UTF-8); PostgreSQL with the
    database's collation, which for a server set up with, say, ``en_US`` or ICU puts
    ``_x`` before ``a`` before ``B``. Read in different orders, identical tables got
    different checksums. ``COLLATE "C"`` compares UTF-8 bytes, as SQLite does; it is
    used for the ordering and for the keyset comparison that pages, so no row is
    skipped or read twice. (The tables with text keys are small; ``messages`` pages
    by its integer ``seq`` and keeps its index.)
    """
    if connection.dialect.name != "postgresql":
        return list(keys)
    return [key.collate("C") if _is_text(key) else key for key in keys]


def _is_text(column: sa.Column[Any]) -> bool:
    """Whether a column holds text (SQLModel's ``AutoString`` wraps ``String`` as a decorator)."""
    kind = column.type
    return isinstance(kind, sa.String) or isinstance(getattr(kind, "impl", None), sa.String)


def _row_bytes(row: sa.Row[Any] | Iterable[Any]) -> bytes:
    """One row as canonical bytes: the same on SQLite and PostgreSQL for the same values."""
    return (
        json.dumps([_canonical(v) for v in row], sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n"
    )


def _canonical(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, bytes | memoryview):  # file paths as the file system spells them
        return bytes(value).hex()
    return value


def _table(model: type[SQLModel]) -> sa.Table:
    table = model.__table__  # type: ignore[attr-defined]
    assert isinstance(table, sa.Table)
    return table
