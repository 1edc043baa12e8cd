"""Test a server database before switching to it: can we sign in, and what does it hold?

Settings → Data runs ``probe_server`` on a worker thread. It makes one real connection
with a short timeout, runs ``SELECT 1``, then looks at the tables to tell an empty
database (ready to be set up, or to receive a copy) from one Threadline already set up,
one a newer Threadline set up (this version must not touch it), and one holding someone
else's tables. Failures come back as sentences a person can act on — refused, timed out,
unknown host, wrong password, no such database, TLS required or refused, certificate not
trusted — never the driver's text, which goes to the log (it holds no password).
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass

from threadline.engine.database_choice import ServerChoice, connect_options

log = logging.getLogger("threadline.engine.database_probe")

PROBE_TIMEOUT_S = 5
"""Seconds to wait for the server during a test: long enough for a distant server, short for a typo."""


class ServerContents(enum.Enum):
    EMPTY = "empty"
    THREADLINE = "threadline"
    NEWER = "newer"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """A connection test's outcome; ``message`` is what the page shows."""

    ok: bool
    message: str
    contents: ServerContents | None = None
    chats: int = 0


def probe_server(server: ServerChoice, password: str | None) -> ProbeResult:
    """Connect, ``SELECT 1``, and classify what the database holds. Blocks: run it off the GUI thread."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    options = connect_options(server)
    options["connect_timeout"] = str(PROBE_TIMEOUT_S)
    try:
        conninfo = make_conninfo(
            host=server.host,
            port=server.port,
            dbname=server.database,
            user=server.user,
            password=password or None,
            **options,
        )
        with psycopg.connect(conninfo, autocommit=True) as connection:
            connection.execute("SELECT 1").fetchone()
            contents, chats = _contents(connection)
    except psycopg.Error as err:
        log.info("connection test to %s failed: %s", server.describe(), err)
        return ProbeResult(ok=False, message=explain_failure(err, server))
    return ProbeResult(ok=True, message=_describe_contents(contents, chats), contents=contents, chats=chats)


def _contents(connection: object) -> tuple[ServerContents, int]:
    from threadline.store.migrate import KNOWN_REVISIONS, VERSION_TABLE

    execute = connection.execute  # type: ignore[attr-defined]
    tables = {
        str(row[0])
        for row in execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall()
    }
    if not tables:
        return ServerContents.EMPTY, 0
    if VERSION_TABLE not in tables:
        return ServerContents.OTHER, 0
    revisions = [str(row[0]) for row in execute(f"SELECT version_num FROM {VERSION_TABLE}").fetchall()]
    if any(r not in KNOWN_REVISIONS for r in revisions):
        return ServerContents.NEWER, 0
    chats = int(execute("SELECT count(*) FROM sessions").fetchone()[0]) if "sessions" in tables else 0
    return ServerContents.THREADLINE, chats


def _describe_contents(contents: ServerContents, chats: int) -> str:
    if contents is ServerContents.EMPTY:
        return (
            "Connected — empty database. Threadline sets it up the first time it opens it; you can "
            "copy your conversations there first."
        )
    if contents is ServerContents.THREADLINE:
        held = f"{chats} chat{'s' if chats != 1 else ''}"
        return f"Connected — this database already holds Threadline's conversations ({held})."
    if contents is ServerContents.NEWER:
        return (
            "Connected — but a newer version of Threadline set this database up. Update Threadline "
            "on this computer before using it."
        )
    return (
        "Connected — but this database holds other tables, not Threadline's. Choose an empty "
        "database, or one Threadline set up."
    )


def explain_failure(err: Exception, server: ServerChoice) -> str:
    """A sentence for a failed connection, from its SQLSTATE or, for libpq's own errors, its text."""
    text = str(err).lower()
    state = getattr(err, "sqlstate", None) or ""
    where = f"{server.host} port {server.port}"
    if state == "3D000" or ("database" in text and "does not exist" in text):
        return (
            f"The server at {where} has no database named “{server.database}”. Check the name, or "
            "ask its administrator to create it."
        )
    if "no password supplied" in text:
        return "The server asks for a password. Type it in the Password field and test again."
    if state == "28P01" or "password authentication failed" in text or "authentication failed" in text:
        return f"The server refused to sign in user “{server.user}”: the user name or password is wrong."
    if "no encryption" in text or ("pg_hba.conf" in text and server.tls == "disable"):
        return (
            "The server only accepts encrypted connections. Set TLS to “require” (or “verify-full”) "
            "and test again."
        )
    if "does not support ssl" in text:
        return (
            "The server does not offer TLS, but TLS was required. Set TLS to “prefer” or "
            "“disable”, or turn TLS on at the server."
        )
    if "root certificate" in text or "certificate verify failed" in text or "certificate" in text:
        return (
            "The server's certificate could not be checked against the CA file. Check that the "
            "CA file is the one that signed the server's certificate and that the host name matches it."
        )
    if state.startswith("28") or "pg_hba.conf" in text:
        return (
            f"The server does not let user “{server.user}” connect to “{server.database}” from this "
            "computer. Ask its administrator to allow it."
        )
    if "could not translate host name" in text or "name or service not known" in text:
        return f"No server called “{server.host}” could be found. Check the host name."
    if "timeout" in text or "timed out" in text:
        return (
            f"The server at {where} did not answer within {PROBE_TIMEOUT_S} seconds. Check the host "
            "and port, and that a firewall lets the connection through."
        )
    if "connection refused" in text:
        return (
            f"Nothing answered at {where}: the connection was refused. Check the port, and that "
            "the database server is running."
        )
    if "too many connections" in text or state == "53300":
        return "The server has too many connections right now. Try again in a moment."
    return (
        f"Could not connect to {where}. Check the host, port, user and password, and that the "
        "server is running."
    )
