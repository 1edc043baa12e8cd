"""File → Install MCP Extension… and a ``.mcpb`` dropped on the window, driven as a person would.

The bundles are built here (``tests/support/mcp_bundles.py``) around a real Python MCP
server; the file dialog is answered by replacing QFileDialog's static call, as the other
UI tests do. The dialog shows what the bundle is and the command it runs; the form is
filled and Install clicked; the secret ends in the (memory) keychain and in no file of the
data folder; the server starts and lists the tools that prove it got its settings. A
refused bundle says why in the dialog and writes nothing; an update keeps the settings.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import keyring
import pytest
from PySide6.QtCore import QMimeData, QPoint, Qt, QTimer, QUrl
from PySide6.QtWidgets import QFileDialog, QLineEdit, QPlainTextEdit
from tests.support.mcp_bundles import HELLO_KEY, hello_manifest, python_on_path, symlink_member, write_bundle
from tests.support.memory_keyring import MemoryKeyring
from tests.support.waiting import WAIT_MS
from tests.ui.conftest import AppHarness

from threadline.tools.mcp.state import ServerStatus
from threadline.ui.settings.extension_install_dialog import ExtensionInstallDialog


def install_dialog(harness: AppHarness) -> ExtensionInstallDialog:
    found: list[ExtensionInstallDialog] = []

    def shown() -> bool:
        found[:] = [d for d in harness.window.findChildren(ExtensionInstallDialog) if d.isVisible()]
        return bool(found)

    harness.qtbot.waitUntil(shown, timeout=WAIT_MS)
    return found[0]


def loaded(harness: AppHarness) -> ExtensionInstallDialog:
    dialog = install_dialog(harness)
    harness.qtbot.waitUntil(lambda: dialog.preview is not None or dialog.message.isVisible(), timeout=WAIT_MS)
    return dialog


def drop_file(harness: AppHarness, path: Path) -> None:
    from PySide6.QtGui import QDropEvent

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    window = harness.window
    at = QPoint(window.width() // 2, window.height() // 2)
    drop = QDropEvent(
        at, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    window.dropEvent(drop)
    assert drop.isAccepted()


def files_holding(folder: Path, secret: str) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def tools_after_start(harness: AppHarness, name: str) -> set[str]:
    state = harness.run(harness.engine.tool_servers.start(name))
    assert state.status is ServerStatus.READY, state.error
    return {t.name for t in state.tools}


def click_install(harness: AppHarness, dialog: ExtensionInstallDialog) -> None:
    assert dialog.install_button.isEnabled()
    harness.qtbot.mouseClick(dialog.install_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(
        lambda: dialog.installed is not None or dialog.message.isVisible(), timeout=WAIT_MS
    )
    assert dialog.installed is not None, dialog.message.text()


@pytest.fixture
def keychain() -> MemoryKeyring:
    backend = keyring.get_keyring()
    assert isinstance(backend, MemoryKeyring)
    return backend


def test_file_menu_installs_a_bundle_with_its_form_and_keeps_the_secret_in_the_keychain(
    harness: AppHarness, tmp_path: Path, monkeypatch: Any, keychain: MemoryKeyring, caplog: Any
) -> None:
    caplog.set_level(logging.DEBUG)
    python_on_path(monkeypatch)
    bundle = write_bundle(tmp_path / "hello.mcpb")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(bundle), "")))
    harness.open()
    bar = harness.window.menuBar()
    file_menu = next(a.menu() for a in bar.actions() if a.text() == "&File")
    action = next(a for a in file_menu.actions() if a.text() == "Install &MCP Extension…")
    QTimer.singleShot(0, action.trigger)

    dialog = loaded(harness)
    assert dialog.title.text() == "Hello Tools 1.0.0"
    assert "Ada Lovelace" in dialog.byline.text()
    folder = harness.data_dir / "extensions" / "hello-tools" / "1.0.0"
    assert dialog.command.text().startswith(f"python {folder / 'server' / 'main.py'} --greeting")
    assert "HELLO_API_KEY=${user_config.api_key}" in dialog.command.text()
    assert "Tools: greet, key_ok" in dialog.declares.text()
    form = dialog.form
    key = form.fields["api_key"]
    assert isinstance(key, QLineEdit) and key.echoMode() is QLineEdit.EchoMode.Password
    greeting = form.fields["greeting"]
    assert isinstance(greeting, QLineEdit) and greeting.text() == "Hello"  # the default

    harness.qtbot.mouseClick(dialog.install_button, Qt.MouseButton.LeftButton)  # the key is required
    assert dialog.message.text() == "Fill in API key." and dialog.installed is None
    harness.qtbot.keyClicks(key, HELLO_KEY)
    flags = form.fields["flags"]
    assert isinstance(flags, QPlainTextEdit)
    flags.setPlainText("--loud")
    click_install(harness, dialog)
    told = "Installed Hello Tools 1.0.0 as MCP server hello-tools."
    harness.qtbot.waitUntil(lambda: told in [m.text for m in harness.window.bridge.history], timeout=WAIT_MS)

    assert keychain.entries[("threadline-mcp-extension", "hello-tools/api_key")] == HELLO_KEY
    assert (folder / "server" / "main.py").is_file()
    assert tools_after_start(harness, "hello-tools") == {"greet", "key_ok", "loud"}
    assert files_holding(harness.data_dir, HELLO_KEY) == []
    assert HELLO_KEY not in caplog.text


def test_a_dropped_bundle_with_a_symbolic_link_is_refused_in_the_dialog(
    harness: AppHarness, tmp_path: Path, keychain: MemoryKeyring
) -> None:
    bundle = write_bundle(tmp_path / "linked.mcpb", extra=[symlink_member("server/link", "/etc/passwd")])
    harness.open()
    drop_file(harness, bundle)
    dialog = loaded(harness)
    harness.qtbot.waitUntil(dialog.message.isVisible, timeout=WAIT_MS)
    assert "symbolic link ('server/link')" in dialog.message.text()
    assert dialog.title.text() == "linked.mcpb cannot be installed"
    assert not dialog.install_button.isVisible()
    dialog.reject()
    assert not (harness.data_dir / "extensions").exists()
    assert harness.run(harness.engine.tool_servers.list_servers()) == []


def test_a_dropped_newer_version_updates_and_keeps_the_settings(
    harness: AppHarness, tmp_path: Path, monkeypatch: Any, keychain: MemoryKeyring
) -> None:
    python_on_path(monkeypatch)
    harness.open()
    first = write_bundle(tmp_path / "hello.mcpb")
    harness.run(
        harness.engine.extensions.install(
            first, {"api_key": HELLO_KEY, "greeting": "Ahoy", "flags": ["--loud"]}
        )
    )
    newer = write_bundle(tmp_path / "hello-1.1.mcpb", hello_manifest(version="1.1.0"))
    drop_file(harness, newer)
    dialog = loaded(harness)
    assert dialog.title.text() == "Update Hello Tools from 1.0.0 to 1.1.0"
    assert dialog.install_button.text() == "Update"
    key = dialog.form.fields["api_key"]
    assert isinstance(key, QLineEdit) and key.text() == "" and "type to replace" in key.placeholderText()
    greeting = dialog.form.fields["greeting"]
    assert isinstance(greeting, QLineEdit) and greeting.text() == "Ahoy"
    click_install(harness, dialog)
    assert not (harness.data_dir / "extensions" / "hello-tools" / "1.0.0").exists()
    assert (harness.data_dir / "extensions" / "hello-tools" / "1.1.0" / "server" / "main.py").is_file()
    assert tools_after_start(harness, "hello-tools") == {"greet", "key_ok", "loud"}
    assert files_holding(harness.data_dir, HELLO_KEY) == []


def test_a_secret_on_the_command_line_is_refused_before_any_question(
    harness: AppHarness, tmp_path: Path
) -> None:
    manifest = hello_manifest()
    manifest["server"]["mcp_config"]["args"].append("--token=${user_config.api_key}")
    harness.open()
    drop_file(harness, write_bundle(tmp_path / "leaky.mcpb", manifest))
    dialog = loaded(harness)
    harness.qtbot.waitUntil(dialog.message.isVisible, timeout=WAIT_MS)
    assert "Hello Tools passes a secret setting on its command line" in dialog.message.text()
    assert dialog.preview is None and not dialog.form.fields
    dialog.reject()
