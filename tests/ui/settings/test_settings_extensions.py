"""Settings → MCP → Install extension… and Remove, clicked through with the real Engine.

The bundle is built here around a real Python MCP server (``tests/support/mcp_bundles.py``);
the file dialog is answered by replacing QFileDialog's static call. Installed, the server
is listed and selected and starts with its tools; removed on the page, its folder and its
secret settings go too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import keyring
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox
from tests.support.mcp_bundles import HELLO_KEY, python_on_path, write_bundle
from tests.support.memory_keyring import MemoryKeyring
from tests.support.waiting import WAIT_MS

from threadline.tools.mcp.state import ServerStatus
from threadline.ui.settings.extension_install_dialog import ExtensionInstallDialog


def test_install_from_the_mcp_page_then_remove_takes_files_and_secrets(
    harness: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python_on_path(monkeypatch)
    backend = keyring.get_keyring()
    assert isinstance(backend, MemoryKeyring)
    bundle = write_bundle(tmp_path / "hello.mcpb")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(bundle), "")))
    harness.open()
    window = harness.window
    window.open_settings("mcp")
    settings = window._settings_dialog
    harness.qtbot.waitUntil(lambda: settings.isVisible() and settings.loaded.done(), timeout=WAIT_MS)
    page = settings.mcp
    harness.qtbot.mouseClick(page.install_button, Qt.MouseButton.LeftButton)

    def dialog() -> ExtensionInstallDialog | None:
        return next((d for d in page.findChildren(ExtensionInstallDialog) if d.isVisible()), None)

    harness.qtbot.waitUntil(lambda: (d := dialog()) is not None and d.preview is not None, timeout=WAIT_MS)
    shown = dialog()
    assert shown is not None
    harness.qtbot.keyClicks(shown.form.fields["api_key"], HELLO_KEY)
    with harness.qtbot.waitSignal(shown.finished, timeout=WAIT_MS):
        harness.qtbot.mouseClick(shown.install_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: page.current_name() == "hello-tools", timeout=WAIT_MS)
    assert page.message.text() == "Installed Hello Tools 1.0.0 as MCP server hello-tools."
    folder = harness.data_dir / "extensions" / "hello-tools"
    assert (folder / "1.0.0" / "server" / "main.py").is_file()

    harness.qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: page.states["hello-tools"].status is ServerStatus.READY, timeout=WAIT_MS)
    assert {t.name for t in page.states["hello-tools"].tools} == {"greet", "key_ok"}

    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.StandardButton.Yes))
    harness.qtbot.mouseClick(page.remove_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: page.list.count() == 0, timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: not folder.exists(), timeout=WAIT_MS)
    assert not [k for k in backend.entries if k[1].startswith("hello-tools/")]
    assert harness.run(harness.engine.extensions.installed()) == []
    settings.close_and_save()
    harness.qtbot.waitUntil(lambda: not settings.isVisible(), timeout=WAIT_MS)
