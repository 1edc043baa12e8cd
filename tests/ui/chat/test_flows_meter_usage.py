"""The context meter and each reply's figures, as a person sees them in the window."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from tests.support.sse_server import openai_text_stream, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.meter import MeterLevel, MeterPart
from threadline.engine.providers import CONTEXT_WINDOWS_SETTING
from threadline.engine.usage_report import PRICES_SETTING
from threadline.ui.chat.composer.context_meter_button import MeterBreakdown
from threadline.ui.chat.view.message_labels import usage_label
from threadline.ui.common.announce import Announcer


def meter_part(tab: Any, part: MeterPart) -> int:
    meter = tab.composer.meter.current()
    return 0 if meter is None else int(meter.tokens(part))


def meter_total(tab: Any) -> int:
    meter = tab.composer.meter.current()
    return 0 if meter is None else int(meter.total)


def test_meter_counts_the_parts_and_replies_show_tokens_speed_and_cost(harness: Any) -> None:
    harness.open()
    harness.run(harness.engine.settings.set_setting(CONTEXT_WINDOWS_SETTING, {"replay/gpt-4o-mini": 100_000}))
    harness.run(
        harness.engine.settings.set_setting(
            PRICES_SETTING,
            [{"provider": "replay", "model": "gpt-4o-mini", "input_per_mtok": 2, "output_per_mtok": 8}],
        )
    )
    tab = new_tab(harness)
    meter = tab.composer.meter
    harness.qtbot.waitUntil(lambda: meter.current() is not None, timeout=WAIT_MS)

    harness.server.enqueue(sse_response(openai_text_stream(["Paris ", "is the capital."], usage=(1200, 300))))
    type_and_send(harness.qtbot, tab, "What is the capital of France?")
    wait_idle(harness, tab)
    harness.qtbot.waitUntil(lambda: meter_part(tab, MeterPart.HISTORY) > 0, timeout=WAIT_MS)
    current = meter.current()
    assert current is not None and current.window == 100_000
    assert meter.text().endswith("/ 100k")

    before = meter_total(tab)
    harness.qtbot.keyClicks(tab.composer.edit, "x" * 400)  # about 100 tokens, counted as you type
    assert meter_part(tab, MeterPart.PROMPT) == 100
    assert meter_total(tab) == before + 100

    reply = tab.live.conversation.path()[-1]
    harness.qtbot.waitUntil(lambda: tab.view.price_of is not None, timeout=WAIT_MS)
    label = usage_label(reply, tab.view.price_of, reply.created_at)
    assert label.startswith("1,200 in · 300 out") and "$0.0048" in label  # 1200×2 + 300×8 per million

    harness.qtbot.waitUntil(lambda: "1 reply ·" in meter.usage_text(), timeout=WAIT_MS)
    harness.qtbot.mouseClick(meter, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: meter.findChild(MeterBreakdown) is not None, timeout=WAIT_MS)
    popup = meter.findChild(MeterBreakdown)
    shown = " ".join(label.text() for label in popup.findChildren(QLabel))
    assert "Conversation" in shown and "Your message" in shown and "Window: 100,000 tokens" in shown
    assert "This chat so far (every version): 1 reply" in shown and "$0.0048" in shown
    popup.close()


def test_a_small_window_warns_and_the_warning_is_announced(harness: Any) -> None:
    harness.open()
    harness.run(harness.engine.settings.set_setting(CONTEXT_WINDOWS_SETTING, {"replay/gpt-4o-mini": 6000}))
    tab = new_tab(harness)
    meter = tab.composer.meter
    harness.qtbot.waitUntil(lambda: meter.current() is not None, timeout=WAIT_MS)
    assert meter.level() is MeterLevel.OK
    spoken: list[str] = []
    Announcer.of().announced.connect(lambda _w, text, _a: spoken.append(text))
    tab.composer.edit.setPlainText("word " * 1000)  # about 1,250 tokens: close to where compaction starts
    assert meter.level() is MeterLevel.WARNING and meter.property("level") == "warning"
    assert spoken and "close to the point where older messages are summarised" in spoken[-1]
    tab.composer.edit.setPlainText("word " * 4000)
    assert meter.level() is MeterLevel.FULL
    assert "compacts the conversation first" in meter.accessibleDescription()


def test_a_server_without_usage_shows_estimates(harness: Any) -> None:
    harness.open()
    tab = new_tab(harness)
    harness.server.enqueue(sse_response(openai_text_stream(["A short answer."], usage=None)))
    type_and_send(harness.qtbot, tab, "Hello?")
    wait_idle(harness, tab)
    reply = tab.live.conversation.path()[-1]
    label = usage_label(reply, None, reply.created_at)
    assert label.startswith("≈4 out") and "$" not in label
