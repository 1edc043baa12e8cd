"""Settings → Data: a person types the test PostgreSQL server's address, tests it, copies their
conversations there, saves (the password to the keychain only) and switches back."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QSpinBox
from tests.support.fixtures import memory_keyring, no_keyring  # noqa: F401  (fixtures)
from tests.support.memory_keyring import MemoryKeyring
from tests.support.postgres import PostgresServer, free_port, postgres_server  # noqa: F401
from tests.support.waiting import WAIT_MS

from threadline.engine.database_choice import CONFIG_FILENAME, KEYCHAIN_SERVICE

PASSWORD = "correct horse battery"
SCREENSHOT_DIR = Path(os.environ.get("THREADLINE_SCREENSHOTS", "/tmp"))


def open_data_page(harness: Any) -> Any:
    harness.window.open_settings("data")
    dialog = harness.window._settings_dialog
    harness.qtbot.waitUntil(lambda: dialog.isVisible() and dialog.loaded.done(), timeout=WAIT_MS)
    assert dialog.pages.currentWidget() is dialog.data_page
    return dialog


def type_into(qtbot: Any, field: QLineEdit, text: str) -> None:
    field.setFocus()
    field.selectAll()
    qtbot.keyClick(field, Qt.Key.Key_Delete)
    qtbot.keyClicks(field, text)


def type_port(qtbot: Any, box: QSpinBox, port: int) -> None:
    box.setFocus()
    box.selectAll()
    qtbot.keyClicks(box, str(port))
    qtbot.keyClick(box, Qt.Key.Key_Tab)


def click(qtbot: Any, button: Any) -> None:
    assert button.isEnabled()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def wait_message(qtbot: Any, section: Any, start: str, timeout: int = 30000) -> str:
    qtbot.waitUntil(lambda: section.message.text().startswith(start), timeout=timeout)
    return str(section.message.text())


def test_use_a_server_database_from_settings(
    harness: Any,
    postgres_server: PostgresServer,  # noqa: F811
    memory_keyring: MemoryKeyring,  # noqa: F811
) -> None:
    url = postgres_server.create_database()
    database = url.rsplit("/", 1)[1]
    port = int(postgres_server.sqlalchemy_base.rsplit(":", 1)[1])
    try:
        harness.open()
        dialog = open_data_page(harness)
        section = dialog.database
        qtbot = harness.qtbot
        assert section.in_use.text() == f"This window uses the file {harness.data_dir / 'threadline.db'}."
        assert not section.copy_button.isEnabled()

        type_into(qtbot, section.host, "127.0.0.1")
        type_port(qtbot, section.port, port)
        type_into(qtbot, section.database, database)
        type_into(qtbot, section.user, "postgres")
        type_into(qtbot, section.password, PASSWORD)
        assert section.password.echoMode() is QLineEdit.EchoMode.Password

        click(qtbot, section.test_button)
        text = wait_message(qtbot, section, "Connected — ")
        assert text.startswith("Connected — empty database."), text
        assert section.copy_button.isEnabled()
        dialog.resize(860, 760)
        SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
        dialog.grab().save(str(SCREENSHOT_DIR / "settings-data-page.png"))

        click(qtbot, section.copy_button)
        qtbot.waitUntil(lambda: not section.message.text().startswith("Copying"), timeout=120000)
        text = section.message.text()
        assert text.startswith("Copied ") and "counts and checksums match" in text, text
        assert not section.copy_button.isEnabled()

        click(qtbot, section.test_button)
        text = wait_message(qtbot, section, "Connected — this database already holds")
        assert not section.copy_button.isEnabled()  # a copy goes only into an empty database

        wrong = free_port()
        type_port(qtbot, section.port, wrong)
        click(qtbot, section.test_button)
        text = wait_message(qtbot, section, "Nothing answered")
        assert text == (
            f"Nothing answered at 127.0.0.1 port {wrong}: the connection was refused. Check the port, "
            "and that the database server is running."
        )
        assert section.message.objectName() == "FormError"
        dialog.grab().save(str(SCREENSHOT_DIR / "settings-data-page-refused.png"))
        type_port(qtbot, section.port, port)

        click(qtbot, section.save_button)
        text = wait_message(qtbot, section, "Saved.")
        assert "Restart Threadline" in text and f"postgres@127.0.0.1:{port}/{database}" in text
        raw = (harness.data_dir / CONFIG_FILENAME).read_bytes()
        assert PASSWORD.encode() not in raw and b"horse" not in raw
        stored = json.loads(raw)
        assert stored["backend"] == "postgresql"
        assert stored["server"] == {
            "host": "127.0.0.1",
            "port": port,
            "database": database,
            "user": "postgres",
            "tls": "prefer",
            "ca_file": "",
        }
        assert memory_keyring.entries[(KEYCHAIN_SERVICE, f"postgres@127.0.0.1:{port}/{database}")] == PASSWORD
        assert section.password.text() == ""
        assert "keychain" in section.password.placeholderText()
        assert "server database" in section.next_start.text()

        click(qtbot, section.local_button)
        wait_message(qtbot, section, "Saved. Restart Threadline to switch back")
        assert json.loads((harness.data_dir / CONFIG_FILENAME).read_bytes())["backend"] == "sqlite"
        assert not section.local_button.isEnabled()
        dialog.reject()

        again = open_data_page(harness).database  # the form remembers the server, not the password
        assert (again.host.text(), again.port.value(), again.database.text()) == ("127.0.0.1", port, database)
        qtbot.waitUntil(lambda: "keychain" in again.password.placeholderText(), timeout=WAIT_MS)
        assert again.password.text() == ""
        harness.window._settings_dialog.reject()
    finally:
        if harness.window is not None:
            harness.close()
        postgres_server.drop_database(url)


def test_missing_fields_are_named_before_connecting(harness: Any) -> None:
    harness.open()
    section = open_data_page(harness).database
    type_into(harness.qtbot, section.host, "")
    click(harness.qtbot, section.test_button)
    text = wait_message(harness.qtbot, section, "Enter the server's host name")
    assert "user name" in text
    assert not (harness.data_dir / CONFIG_FILENAME).exists()


def test_without_a_keychain_the_password_is_not_saved_anywhere(
    harness: Any,
    no_keyring: None,  # noqa: F811
) -> None:
    harness.open(provider=False)  # a provider's key would need the keychain too
    section = open_data_page(harness).database
    qtbot = harness.qtbot
    type_into(qtbot, section.host, "db.example.org")
    type_into(qtbot, section.user, "ana")
    type_into(qtbot, section.password, PASSWORD)
    click(qtbot, section.save_button)
    text = wait_message(qtbot, section, "There is no system keychain")
    assert "THREADLINE_DB_PASSWORD" in text and "Nothing was saved" in text
    assert section.message.objectName() == "FormError"
    assert not (harness.data_dir / CONFIG_FILENAME).exists()
    assert not any(PASSWORD.encode() in p.read_bytes() for p in harness.data_dir.rglob("*.json"))

    type_into(qtbot, section.password, "")  # the variable's way: save without a password
    click(qtbot, section.save_button)
    text = wait_message(qtbot, section, "Saved.")
    assert "No password is stored" in text
    assert json.loads((harness.data_dir / CONFIG_FILENAME).read_bytes())["server"]["user"] == "ana"
