"""Settings → Providers: the connect and first-reply timeouts, typed, saved and shown again."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDoubleSpinBox, QFormLayout
from tests.support.fixtures import no_keyring  # noqa: F401  (fixture)
from tests.support.waiting import WAIT_MS

from threadline.core.config import ProviderConfig
from threadline.llm.timeouts import CONNECT_SETTING, FIRST_BYTE_SETTING


def open_settings(harness: Any, page: str) -> Any:
    harness.window.open_settings(page)
    dialog = harness.window._settings_dialog
    harness.qtbot.waitUntil(lambda: dialog.isVisible() and dialog.loaded.done(), timeout=WAIT_MS)
    assert dialog.loaded.exception() is None
    return dialog


def close(harness: Any, dialog: Any) -> None:
    dialog.reject()
    harness.qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT_MS)


def type_seconds(harness: Any, box: QDoubleSpinBox, text: str) -> None:
    """Select what the box shows and type over it, as a user does."""
    box.setFocus()
    box.selectAll()
    harness.qtbot.keyClicks(box, text)
    harness.qtbot.keyClick(box, Qt.Key.Key_Tab)


def stored(harness: Any, name: str) -> ProviderConfig:
    config: ProviderConfig | None = harness.run(harness.engine.store.get_provider(name))
    assert config is not None
    return config


def label_of(page: Any, field: QDoubleSpinBox) -> str:
    """The text of the form label beside ``field``."""
    for form in page.findChildren(QFormLayout):
        label = form.labelForField(field)
        if label is not None:
            return str(label.text())
    return ""


def test_timeouts_typed_in_settings_are_saved_and_shown_again(harness: Any) -> None:
    harness.open()
    dialog = open_settings(harness, "replay")
    page = dialog.providers
    assert page.name.text() == "replay"
    assert page.connect_timeout.text() == "default (10 s)"  # no value of its own yet
    assert page.first_byte_timeout.text() == "default (60 s)"
    assert label_of(page, page.connect_timeout) == CONNECT_SETTING  # the field the messages name
    assert label_of(page, page.first_byte_timeout) == FIRST_BYTE_SETTING
    assert page.timeouts_hint.isVisible() and "twice" in page.timeouts_hint.text()

    type_seconds(harness, page.connect_timeout, "4")
    type_seconds(harness, page.first_byte_timeout, "150")
    harness.qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: page.message.text() == "Saved replay.", timeout=WAIT_MS)
    config = stored(harness, "replay")
    assert (config.connect_timeout, config.first_byte_timeout) == (4.0, 150.0)
    assert config.base_url == harness.server.openai_base_url  # the rest is kept
    close(harness, dialog)

    again = open_settings(harness, "replay").providers
    harness.qtbot.waitUntil(lambda: again.name.text() == "replay", timeout=WAIT_MS)
    assert again.connect_timeout.value() == 4.0 and again.first_byte_timeout.value() == 150.0
    assert again.first_byte_timeout.text() == "150.0 s"

    type_seconds(harness, again.first_byte_timeout, "0")  # back to the default
    harness.qtbot.mouseClick(again.save_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: again.message.text() == "Saved replay.", timeout=WAIT_MS)
    assert stored(harness, "replay").first_byte_timeout is None
    assert stored(harness, "replay").connect_timeout == 4.0
    assert again.first_byte_timeout.text() == "default (60 s)"


def test_a_new_provider_starts_with_the_defaults(harness: Any) -> None:
    harness.open()
    page = open_settings(harness, "replay").providers
    type_seconds(harness, page.first_byte_timeout, "90")
    harness.qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
    assert page.name.text() == ""
    assert page.connect_timeout.value() == 0 and page.first_byte_timeout.value() == 0  # nothing carried over


HEADER_SECRET = "org-secret-c0ffee"


def test_a_header_typed_in_settings_goes_to_the_keychain_and_reaches_the_server(harness: Any) -> None:
    import keyring

    from threadline.core.config import STORED_IN_KEYCHAIN
    from threadline.engine.engine import DATABASE_FILENAME
    from threadline.llm.credentials import HEADER_SERVICE

    harness.open()
    page = open_settings(harness, "replay").providers
    assert page.name.text() == "replay" and page.headers.rows == []
    harness.qtbot.mouseClick(page.headers.add_button, Qt.MouseButton.LeftButton)
    (row,) = page.headers.rows
    assert not row.public.isVisible()  # a provider header's value is always a secret
    harness.qtbot.keyClicks(row.name, "X-Org")
    harness.qtbot.keyClicks(row.value, HEADER_SECRET)
    assert row.masked()  # typed, but shown as dots
    harness.qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: page.message.text() == "Saved replay.", timeout=WAIT_MS)
    assert stored(harness, "replay").headers == (("X-Org", STORED_IN_KEYCHAIN),)
    assert keyring.get_password(HEADER_SERVICE, "replay/X-Org") == HEADER_SECRET
    files = harness.data_dir.glob(DATABASE_FILENAME + "*")
    assert not [f for f in files if HEADER_SECRET.encode() in f.read_bytes()]

    # Shown again: the name, an empty masked field that keeps the stored value.
    harness.qtbot.waitUntil(
        lambda: len(page.headers.rows) == 1 and page.headers.rows[0].stored, timeout=WAIT_MS
    )
    (kept,) = page.headers.rows
    assert (
        kept.name.text() == "X-Org" and kept.value.text() == "" and "keychain" in kept.value.placeholderText()
    )
    asked = len(harness.server.requests)
    harness.qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: page.message.text().startswith("Connected"), timeout=WAIT_MS)
    listings = [r for r in harness.server.requests[asked:] if r.path.endswith("/models")]
    assert listings and all(r.headers.get("x-org") == HEADER_SECRET for r in listings)


def test_an_upgrade_that_dropped_a_header_value_says_so_once_in_the_window(
    harness: Any,
    no_keyring: None,  # noqa: F811
) -> None:
    from PySide6.QtWidgets import QMessageBox
    from tests.support.legacy_databases import provider_with_headers

    from threadline.engine.engine import DATABASE_FILENAME

    harness.data_dir.mkdir(parents=True)
    provider_with_headers(harness.data_dir / DATABASE_FILENAME, [["X-Org", HEADER_SECRET]])
    harness.open(provider=False)
    harness.qtbot.waitUntil(
        lambda: harness.window.findChild(QMessageBox, "UpgradeNotice") is not None, timeout=WAIT_MS
    )
    box = harness.window.findChild(QMessageBox, "UpgradeNotice")
    assert "Provider work: the value of header X-Org" in box.text()
    assert "threadline provider add work --header 'X-Org=${X_ORG}'" in box.text()
    assert HEADER_SECRET not in box.text()
    box.button(QMessageBox.StandardButton.Ok).click()
    harness.qtbot.waitUntil(
        lambda: harness.window.findChild(QMessageBox, "UpgradeNotice") is None, timeout=WAIT_MS
    )
    assert (
        harness.run(harness.engine.settings.take_notices()) == []
    )  # told once: nothing left for the next start


def test_removing_a_provider_asks_first_and_cancel_keeps_it_and_its_key(harness: Any) -> None:
    from PySide6.QtWidgets import QMessageBox

    harness.open()
    page = open_settings(harness, "replay").providers
    harness.qtbot.waitUntil(lambda: page.name.text() == "replay", timeout=WAIT_MS)

    def answer(button_text: str) -> None:
        harness.qtbot.mouseClick(page.remove_button, Qt.MouseButton.LeftButton)
        harness.qtbot.waitUntil(
            lambda: page.remove_question is not None and page.remove_question.isVisible(), timeout=WAIT_MS
        )
        box = page.remove_question
        assert "replay" in box.text() and "keychain" in box.informativeText()
        button = next(b for b in box.buttons() if b.text().replace("&", "") == button_text)
        harness.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        harness.qtbot.waitUntil(lambda: not box.isVisible(), timeout=WAIT_MS)

    answer("Cancel")
    assert stored(harness, "replay").name == "replay"  # nothing removed
    assert harness.run(harness.engine.store.get_provider("replay")) is not None
    assert isinstance(page.remove_question, QMessageBox) and page.name.text() == "replay"

    answer("Remove")
    harness.qtbot.waitUntil(lambda: page.message.text() == "Removed replay.", timeout=WAIT_MS)
    assert harness.run(harness.engine.store.get_provider("replay")) is None
