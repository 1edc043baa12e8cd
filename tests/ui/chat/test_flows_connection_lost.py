"""The chat tab while the database server is gone: it says so, keeps the reply, and clears once saved.

A real outage: the window's engine runs on the test session's private PostgreSQL
server, which is stopped (``pg_ctl stop -m fast``) while a reply streams from the
replay server, then started again on the same port.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.postgres import PostgresServer, postgres_server  # noqa: F401  (fixture)
from tests.support.sse_server import openai_text_stream, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

pytestmark = pytest.mark.postgres

PIECES = [f"word{n} " for n in range(60)]
REPLY = "".join(PIECES)
LOST = "connection to the database server was lost"


@pytest.fixture
def server_url(postgres_server: PostgresServer) -> Iterator[str]:  # noqa: F811
    if not postgres_server.can_restart:
        pytest.skip("the PostgreSQL server was not started by the tests, so they may not stop it")
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


@contextlib.contextmanager
def server_down(server: PostgresServer) -> Iterator[None]:
    server.stop_for_a_while()
    try:
        yield
    finally:
        server.start_again()


def reply_text(tab: Any) -> str:
    path = tab.live.conversation.path()
    return str(path[-1].text) if len(path) == 2 else ""


def stored_texts(server: PostgresServer, url: str, session_id: str) -> list[tuple[str, str]]:
    import psycopg

    conninfo = f"{server.admin_url.rsplit('/', 1)[0]}/{url.rsplit('/', 1)[1]}"
    with psycopg.connect(conninfo) as connection:
        rows = connection.execute(
            "SELECT text, status FROM messages WHERE session_id = %s ORDER BY ordinal", (session_id,)
        ).fetchall()
    return [(str(text), str(status)) for text, status in rows]


def test_the_tab_says_the_connection_was_lost_and_clears_once_the_reply_is_saved(
    server_url: str,  # first: its database is dropped only after the window closed
    postgres_server: PostgresServer,  # noqa: F811
    harness: Any,
    tmp_path: Path,
) -> None:
    harness.server.enqueue(sse_response(openai_text_stream(PIECES), chunk_delay=0.1))
    harness.database_url = server_url
    harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Tell me something long")
    harness.qtbot.waitUntil(lambda: len(reply_text(tab)) > 10, timeout=WAIT_MS)  # mid-stream

    with server_down(postgres_server):
        at_stop = reply_text(tab)
        harness.qtbot.waitUntil(lambda: "Saving" in tab.composer.held_reason, timeout=WAIT_MS)
        harness.qtbot.waitUntil(
            lambda: tab.banner.isVisible() and tab.banner.error is not None, timeout=WAIT_MS
        )
        said = tab.banner.label.text()
        assert LOST in said and "kept in memory" in said, said
        assert not any(w in said.lower() for w in ("psycopg", "refused", "select", "traceback")), said
        assert "Saving…" in tab.status
        harness.qtbot.waitUntil(  # the reply goes on streaming into the tab meanwhile
            lambda: len(reply_text(tab)) > len(at_stop) + 20, timeout=WAIT_MS
        )
        tab.window().grab().save(str(tmp_path / "connection_lost.png"))
        harness.qtbot.keyClicks(tab.composer.edit, "typed while the server was down")
        assert "Saving" in tab.composer.held_reason  # sending waits

    harness.qtbot.waitUntil(lambda: tab.composer.held_reason == "", timeout=60000)
    harness.qtbot.waitUntil(lambda: not tab.banner.isVisible(), timeout=WAIT_MS)
    assert "Saving" not in tab.status
    wait_idle(harness, tab, timeout=60000)
    assert tab.composer.text() == "typed while the server was down"  # kept in the box
    assert stored_texts(postgres_server, server_url, tab.session_id) == [
        ("Tell me something long", "complete"),
        (REPLY, "complete"),
    ]
