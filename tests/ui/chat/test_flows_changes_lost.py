"""A window that only reads loses its link to the database: the chat tab says other windows'
changes are not arriving, and stops saying so once the link is back.

The window's engine reaches the tests' PostgreSQL server through a relay
(``tests/support/tcp_proxy.py``) whose link the test cuts: a network drop on this
window only, while it writes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from tests.support.postgres import PostgresServer, postgres_server  # noqa: F401  (fixture)
from tests.support.tcp_proxy import TcpProxy
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.waiting import WAIT_MS

pytestmark = pytest.mark.postgres

SHOTS = os.environ.get("THREADLINE_SCREENSHOTS")
"""A folder to save screenshots in (looked at by hand), or unset."""
LOST = "Not receiving other windows' changes — reconnecting…"


def test_the_tab_says_while_other_windows_changes_do_not_arrive(
    harness: Any,
    postgres_server: PostgresServer,  # noqa: F811
) -> None:
    url = postgres_server.create_database()
    port = url.rsplit(":", 1)[1].split("/", 1)[0]
    proxy = TcpProxy("127.0.0.1", int(port)).start()
    harness.database_url = url.replace(f":{port}/", f":{proxy.port}/")
    try:
        harness.open()
        tab = new_tab(harness)
        strip = tab.busy_elsewhere
        watch = harness.engine.change_watch
        harness.qtbot.waitUntil(lambda: watch.receiving is True, timeout=WAIT_MS)
        assert not strip.isVisible()

        proxy.cut()
        harness.qtbot.waitUntil(strip.isVisible, timeout=WAIT_MS)
        assert strip.label.text() == LOST
        assert not strip.button.isVisible()  # nothing to stop: only news
        if SHOTS:
            tab.window().grab().save(str(Path(SHOTS) / "changes_not_arriving.png"))

        proxy.restore()
        harness.qtbot.waitUntil(lambda: not strip.isVisible(), timeout=60000)
        assert watch.receiving is True
    finally:
        proxy.restore()
        harness.close()
        proxy.close()
        postgres_server.drop_database(url)
