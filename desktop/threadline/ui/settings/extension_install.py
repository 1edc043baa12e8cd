"""Opening the install dialog on a bundle, from the window or from Settings → MCP.

One place for both doors, so the dialog is opened, kept alive and answered the same way:
when it installs, ``tell`` gets one line saying so and ``on_installed`` (Settings → MCP
reloading its list) the new extension.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QWidget

from threadline.engine.api import EngineApi
from threadline.engine.extensions import InstalledExtension
from threadline.ui.settings.extension_install_dialog import ExtensionInstallDialog

BUNDLE_SUFFIXES = (".mcpb", ".dxt")
BUNDLE_FILTER = "MCP extensions (*.mcpb *.dxt)"


def open_install_dialog(
    parent: QWidget,
    engine: EngineApi,
    path: Path,
    *,
    tell: Callable[[str], None],
    on_installed: Callable[[InstalledExtension], object] | None = None,
) -> ExtensionInstallDialog:
    dialog = ExtensionInstallDialog(engine, path, parent)

    def accepted() -> None:
        record = dialog.installed
        if record is None:
            return
        tell(f"Installed {record.title} {record.version} as MCP server {record.name}.")
        if on_installed is not None:
            on_installed(record)

    dialog.accepted.connect(accepted)
    dialog.finished.connect(lambda _code: dialog.deleteLater())
    dialog.open()
    dialog.load()
    return dialog


def choose_and_install(
    parent: QWidget,
    engine: EngineApi,
    *,
    tell: Callable[[str], None],
    on_installed: Callable[[InstalledExtension], object] | None = None,
) -> ExtensionInstallDialog | None:
    """Ask for a ``.mcpb`` file, then open the install dialog on it (``None``: none chosen)."""
    from PySide6.QtWidgets import QFileDialog

    path, _ = QFileDialog.getOpenFileName(parent, "Install MCP extension", "", BUNDLE_FILTER)
    if not path:
        return None
    return open_install_dialog(parent, engine, Path(path), tell=tell, on_installed=on_installed)
