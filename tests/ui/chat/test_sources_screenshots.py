"""Screenshots of a reply's Sources and citations in the real window, to be looked at (only
when asked for: ``THREADLINE_SHOTS=build/screenshots``): the box closed and open, a source
pinned and one excluded, and the viewer at a Markdown passage's lines. Light and dark."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from tests.ui.chat.test_flows_sources import NETWORK, chat_with_sources, click, number_of, open_box

from threadline.ui.common.theme import ThemeChoice

pytestmark = pytest.mark.skipif(
    not os.environ.get("THREADLINE_SHOTS"), reason="screenshots only when asked for"
)
TIMEOUT = 20000
REPLY = (
    "The ALBATROSS valve must be torqued to **42 N·m** [1], in two passes: first by hand, "
    "then with the torque wrench [1].\n\n"
    "The lab's proxy listens on port `3128` [2]; set it before installing anything.\n\n"
    "```ini\nproxy = http://kestrel:3128  # [1] stays text in code\n```\n"
)


def save(widget: Any, name: str) -> None:
    folder = Path(os.environ["THREADLINE_SHOTS"])
    folder.mkdir(parents=True, exist_ok=True)
    assert widget.grab().save(str(folder / name))


def test_screenshots_of_sources(harness: Any, tmp_path: Path) -> None:
    tab, reply = chat_with_sources(harness, tmp_path, REPLY)
    window = harness.window
    window.resize(980, 720)
    harness.qtbot.wait(200)
    save(window, "sources-closed-light.png")
    open_box(harness, tab, reply)
    click(harness, tab, reply.id, "source:pin:1")
    harness.qtbot.waitUntil(
        lambda: tab.live.conversation.tree.get(reply.id).sources[0].pinned, timeout=TIMEOUT
    )
    click(harness, tab, reply.id, f"source:exclude:{len(reply.sources)}")
    harness.qtbot.waitUntil(lambda: bool(tab.message_commands.sources.excluded), timeout=TIMEOUT)
    tab.view.scroll_to_bottom()
    harness.qtbot.wait(200)
    save(window, "sources-open-light.png")
    window.set_theme(ThemeChoice.DARK)
    harness.qtbot.wait(300)
    save(window, "sources-open-dark.png")
    click(harness, tab, reply.id, f"source:open:{number_of(reply, NETWORK)}")
    harness.qtbot.waitUntil(lambda: tab.message_commands.sources.viewer is not None, timeout=TIMEOUT)
    viewer = tab.message_commands.sources.viewer
    harness.qtbot.waitUntil(viewer.isVisible, timeout=TIMEOUT)
    harness.qtbot.wait(200)
    save(viewer, "sources-viewer-dark.png")
    viewer.close()
    window.set_theme(ThemeChoice.LIGHT)
