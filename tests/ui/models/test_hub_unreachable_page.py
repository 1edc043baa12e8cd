"""A search on the Models page while the Hub cannot be reached (nothing listens on its port)
says so in the page's own line within seconds, not after the library's ~23 s of retries."""

from __future__ import annotations

import json
import time
from typing import Any

from PySide6.QtCore import Qt
from tests.support.embedding_server import closed_port
from tests.ui.models.test_models_page import open_page

FAST = 8.0
"""Seconds: far below the old ~23 s of retries, generous for a busy machine."""


def test_a_refused_search_says_the_hub_could_not_be_reached(harness: Any) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    harness.data_dir.mkdir(parents=True, exist_ok=True)
    (harness.data_dir / "local-models.json").write_text(json.dumps({"hub_endpoint": endpoint}))
    harness.open()
    qtbot = harness.qtbot
    page = open_page(harness)

    qtbot.keyClicks(page.search.box, "llama")
    started = time.monotonic()
    qtbot.keyClick(page.search.box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: page.message.isVisible(), timeout=60000)
    took = time.monotonic() - started

    assert (
        f"Could not reach the model hub at {endpoint}: connection refused. "
        "Check your connection or the hub address in Settings."
    ) in page.message.text()
    assert took < FAST, f"the search took {took:.1f} s to fail"
    assert page.search.button.isEnabled() and page.search.results.count() == 0
