"""Announcements: the approval bar and the error banner speak when they appear, once.

Qt offers Python no hook on accessibility updates, so the tests listen on the
``Announcer`` that ``announce`` reports to after sending the real
``QAccessibleAnnouncementEvent``; a widget that forgets to announce fails here.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QLabel, QWidget

from threadline.core.messages import ToolCall
from threadline.engine.events import ErrorAction, UserFacingError
from threadline.ui.approval.approval_bar import ApprovalBar
from threadline.ui.common.announce import Announcer, announce
from threadline.ui.common.error_banner import ErrorBanner


class Heard:
    """Every announcement made while it listens."""

    def __init__(self) -> None:
        self.items: list[tuple[QWidget, str, bool]] = []
        Announcer.of().announced.connect(self._heard)

    def _heard(self, widget: QWidget, text: str, assertive: bool) -> None:
        self.items.append((widget, text, assertive))

    def close(self) -> None:
        Announcer.of().announced.disconnect(self._heard)


def test_announce_sends_the_event_and_reports_it(qtbot: Any) -> None:
    widget = QLabel("meter")
    qtbot.addWidget(widget)
    heard = Heard()
    was_active = QAccessible.isActive()
    QAccessible.setActive(True)  # the event is built and dispatched, not dropped early
    try:
        announce(widget, "  Context   80% full  ")
        announce(widget, "   ")
    finally:
        QAccessible.setActive(was_active)
        heard.close()
    assert heard.items == [(widget, "Context 80% full", False)]
    assert Announcer.of().last == (widget, "Context 80% full", False)


def test_the_approval_bar_announces_itself_assertively(qtbot: Any) -> None:
    bar = ApprovalBar()
    qtbot.addWidget(bar)
    heard = Heard()
    try:
        bar.ask([ToolCall("c1", "shell", '{"command": "ls"}')], {})
    finally:
        heard.close()
    assert len(heard.items) == 1
    widget, text, assertive = heard.items[0]
    assert widget is bar and assertive
    assert "The assistant wants to run a command" in text
    assert "Esc stops the reply" in text


def test_an_error_banner_announces_the_error_and_its_choices(qtbot: Any) -> None:
    banner = ErrorBanner()
    qtbot.addWidget(banner)
    heard = Heard()
    try:
        actions = (ErrorAction.RETRY, ErrorAction.SETTINGS)
        banner.show_error(UserFacingError("network", "Could not reach the server.", actions))
    finally:
        heard.close()
    assert heard.items == [(banner, "Could not reach the server. Choices: Retry, Open Settings….", True)]


def test_an_info_banner_announces_when_it_appears_not_at_every_countdown_tick(qtbot: Any) -> None:
    banner = ErrorBanner()
    qtbot.addWidget(banner)
    heard = Heard()
    try:
        banner.show_info("Retrying (1 of 4) in 3 s")
        banner.show_info("Retrying (1 of 4) in 2 s")
        banner.show_info("Retrying (1 of 4) in 1 s")
        banner.hide()
        banner.show_info("Retrying (2 of 4) in 3 s")
    finally:
        heard.close()
    assert [(w, t, a) for w, t, a in heard.items] == [
        (banner, "Retrying (1 of 4) in 3 s", False),
        (banner, "Retrying (2 of 4) in 3 s", False),
    ]
