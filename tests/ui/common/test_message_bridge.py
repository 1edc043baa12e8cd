"""The message bridge: every user-visible message in one place, with its level and session."""

from __future__ import annotations

from typing import Any

from threadline.engine.errors import SessionBusyError
from threadline.store.errors import StorageFullError
from threadline.ui.common.message_bridge import MessageBridge, MessageLevel, UserMessage, user_message_of


def test_each_level_reaches_the_common_signal_and_its_own(qtbot: Any) -> None:
    bridge = MessageBridge()
    seen: list[UserMessage] = []
    errors: list[str] = []
    bridge.shown.connect(seen.append)
    bridge.error_shown.connect(errors.append)

    bridge.info("Exported to /tmp/chat.md")
    bridge.warning("The model list is out of date.")
    bridge.error("The disk is full.", session_id="s1")

    assert [(m.level, m.text, m.session_id) for m in seen] == [
        (MessageLevel.INFO, "Exported to /tmp/chat.md", None),
        (MessageLevel.WARNING, "The model list is out of date.", None),
        (MessageLevel.ERROR, "The disk is full.", "s1"),
    ]
    assert errors == ["The disk is full."]
    assert seen[2].timeout_ms > seen[0].timeout_ms  # errors stay longer than info
    assert bridge.history == seen


def test_report_shows_only_the_user_message_of_an_expected_error(qtbot: Any) -> None:
    bridge = MessageBridge()
    seen: list[UserMessage] = []
    bridge.shown.connect(seen.append)

    shown = bridge.report(
        StorageFullError("database or disk is full (SQLITE_FULL)"), context="Could not save"
    )

    assert shown
    assert seen[0].text.startswith("Could not save: The disk holding the conversation database is full")
    assert "SQLITE" not in seen[0].text  # the driver's text stays in the log


def test_report_refuses_an_error_without_a_user_message(qtbot: Any) -> None:
    bridge = MessageBridge()
    seen: list[UserMessage] = []
    bridge.shown.connect(seen.append)

    assert not bridge.report(KeyError("no session 'x'"))
    assert seen == []


def test_user_message_of_decides_what_is_expected() -> None:
    assert user_message_of(SessionBusyError()) == SessionBusyError.default_message
    assert user_message_of(ValueError("bad")) is None
    blank = RuntimeError()
    blank.user_message = "  "  # type: ignore[attr-defined]
    assert user_message_of(blank) is None
