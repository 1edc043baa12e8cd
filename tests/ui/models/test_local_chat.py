"""Chatting with a downloaded model in the window, through the real llama.cpp server of the
``threadline[local]`` extra: "On this computer" picked in the model menu, a message typed and
sent, the reply streamed; the runtime killed, and the next send works again; the Models page
shows the runtime's log; a context too big for this computer is refused with the figure."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from tests.support.tiny_gguf import make_tiny_gguf
from tests.support.ui_driving import new_tab_by_click, texts, type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.messages import MessageStatus
from threadline.models.runtime import llama_cpp_installed

pytestmark = pytest.mark.skipif(
    not llama_cpp_installed(), reason="needs the threadline[local] extra (llama-cpp-python[server])"
)

LOCAL = "tiny.gguf  ·  On this computer"
LOAD_MS = 5 * WAIT_MS
"""A model load on a busy 2-core machine: seconds, but a start of Python and llama.cpp first."""


def put_model(data_dir: Path, context: int = 256) -> None:
    (data_dir / "models").mkdir(parents=True)
    make_tiny_gguf(data_dir / "models" / "tiny.gguf")
    (data_dir / "local-models.json").write_text(json.dumps({"runtime": {"context": context}}))


def pick_local(harness: Any, tab: Any) -> None:
    picker = tab.composer.model_picker
    picker.showPopup()
    harness.qtbot.waitUntil(
        lambda: picker.findText(LOCAL) >= 0 and not harness.window.catalog.refreshing, timeout=WAIT_MS
    )
    picker.hidePopup()
    index = picker.findText(LOCAL)
    picker.setCurrentIndex(index)
    picker.activated.emit(index)  # what a click on the item does
    harness.qtbot.waitUntil(lambda: tab.info.provider == "On this computer", timeout=WAIT_MS)


def last_reply(tab: Any) -> Any:
    return tab.live.conversation.path()[-1]


def test_a_reply_streams_from_the_runtime_and_a_killed_runtime_restarts(harness: Any) -> None:
    put_model(harness.data_dir)
    harness.open(provider=False)
    tab = new_tab_by_click(harness)
    pick_local(harness, tab)
    assert tab.info.model == "tiny.gguf"
    type_and_send(harness.qtbot, tab, "Hello")
    harness.qtbot.waitUntil(lambda: len(texts(tab)) == 2 and texts(tab)[-1] != "", timeout=LOAD_MS)
    wait_idle(harness, tab, timeout=LOAD_MS)
    assert last_reply(tab).status is MessageStatus.COMPLETE, (tab.banner.error, last_reply(tab))
    assert harness.engine.hub.context_window("On this computer", "tiny.gguf") == 256  # the loaded context
    status = harness.run(harness.engine.models.runtime_status())
    assert status is not None and status["model"] == "tiny.gguf"

    os.kill(status["pid"], signal.SIGKILL)  # out of memory, say
    # A new chat: random weights talk until the 256 tokens of context are full, so this one has no room.
    tab = new_tab_by_click(harness)
    pick_local(harness, tab)
    type_and_send(harness.qtbot, tab, "Again")
    harness.qtbot.waitUntil(lambda: len(texts(tab)) == 2 and texts(tab)[-1] != "", timeout=LOAD_MS)
    wait_idle(harness, tab, timeout=LOAD_MS)
    assert last_reply(tab).status is MessageStatus.COMPLETE, (tab.banner.error, last_reply(tab))
    again = harness.run(harness.engine.models.runtime_status())
    assert again is not None and again["pid"] != status["pid"]

    window = harness.window
    (action,) = [a for a in window.menus.titles["file"].actions() if a.text() == "Local &Models…"]
    action.trigger()
    page = window.models_page
    harness.qtbot.waitUntil(page.isVisible, timeout=WAIT_MS)
    harness.qtbot.mouseClick(page.runtime.show_log, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: page.runtime.log_dialog is not None, timeout=WAIT_MS)
    assert "Serving tiny.gguf on 127.0.0.1:" in page.runtime.log_view.toPlainText()
    page.runtime.log_dialog.close()
    page.close()


def test_a_context_too_big_for_this_computer_is_refused_with_the_figure(harness: Any) -> None:
    put_model(harness.data_dir, context=1_000_000)
    (harness.data_dir / "local-models.json").write_text(json.dumps({"runtime": {"context": 1_000_000_000}}))
    harness.open(provider=False)
    tab = new_tab_by_click(harness)
    pick_local(harness, tab)
    type_and_send(harness.qtbot, tab, "Hello")
    harness.qtbot.waitUntil(lambda: tab.banner.error is not None, timeout=LOAD_MS)
    message = tab.banner.error.message
    assert message.startswith("tiny.gguf needs about "), message
    assert "with a context of 1,000,000,000 tokens, and this computer has " in message
    assert harness.run(harness.engine.models.runtime_status()) is None
