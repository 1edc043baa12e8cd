"""Settings → Data → Local models folder: a person picks another folder; the Models page and the
command line use it from then on (kept in the data folder's ``local-models.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt


def test_change_the_models_folder_and_back(harness: Any, tmp_path: Path) -> None:
    harness.open()
    harness.window.open_settings("data")
    dialog = harness.window._settings_dialog
    harness.qtbot.waitUntil(lambda: dialog.isVisible(), timeout=15000)
    section = dialog.models_folder
    assert section.path.text() == str(harness.data_dir / "models")
    assert not section.default.isEnabled()

    chosen = tmp_path / "big disk" / "models"
    section.ask_folder = lambda: chosen  # the folder dialog's answer
    harness.qtbot.mouseClick(section.change, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: section.path.text() == str(chosen), timeout=15000)
    assert harness.engine.models.folder == chosen and chosen.is_dir()
    config = json.loads((harness.data_dir / "local-models.json").read_text())
    assert config["folder"] == str(chosen)

    assert section.default.isEnabled()
    harness.qtbot.mouseClick(section.default, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: section.path.text() == str(harness.data_dir / "models"), timeout=15000)
    assert harness.engine.models.folder == harness.data_dir / "models"
