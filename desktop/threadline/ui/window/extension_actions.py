"""File → Install MCP extension… and a ``.mcpb`` dropped on the window: the install dialog.

Kept apart from ``main_window`` (which wires the menu entry and routes drops here first) and
from ``interchange_actions`` (a dropped chat export is imported): a dropped file ending in
``.mcpb`` (or the older ``.dxt``) is an extension, anything else goes on to the import.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from PySide6.QtGui import QDragEnterEvent, QDropEvent
    from PySide6.QtWidgets import QWidget

    from threadline.engine.api import EngineApi


class ExtensionHost(Protocol):
    @property
    def engine(self) -> EngineApi | None: ...
    def window(self) -> QWidget: ...
    def show_message(self, text: str) -> None: ...


class ExtensionActions:
    def __init__(self, window: ExtensionHost) -> None:
        self.window = window

    def install_from_dialog(self) -> None:
        from threadline.ui.settings.extension_install import choose_and_install

        engine = self.window.engine
        if engine is not None:
            choose_and_install(self.window.window(), engine, tell=self.window.show_message)

    def install(self, path: Path) -> None:
        from threadline.ui.settings.extension_install import open_install_dialog

        engine = self.window.engine
        if engine is not None:
            open_install_dialog(self.window.window(), engine, path, tell=self.window.show_message)

    def drag_enter(self, event: QDragEnterEvent) -> bool:
        """Accept a dragged bundle; ``False`` when it is not one (the import may want it)."""
        if _bundle(event) is None:
            return False
        event.acceptProposedAction()
        return True

    def drop(self, event: QDropEvent) -> bool:
        path = _bundle(event)
        if path is None:
            return False
        event.acceptProposedAction()
        self.install(path)
        return True


def _bundle(event: QDragEnterEvent | QDropEvent) -> Path | None:
    """The one local ``.mcpb`` file dropped, if that is what it is."""
    urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
    if len(urls) != 1 or not urls[0].isLocalFile():
        return None
    path = Path(urls[0].toLocalFile())
    from threadline.ui.settings.extension_install import BUNDLE_SUFFIXES

    return path if path.suffix.lower() in BUNDLE_SUFFIXES and path.is_file() else None
