"""The window's import and export: File → Import…, File → Export…, files dropped on the window,
and Export… on chats selected in the sidebar. Kept apart from ``main_window`` so the window
only wires actions and events here."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from PySide6.QtGui import QDragEnterEvent, QDropEvent
    from PySide6.QtWidgets import QWidget

    from threadline.engine.api import EngineApi
    from threadline.ui.sessions.session_sidebar import SessionSidebar
    from threadline.ui.window.import_dialog import ImportRun
    from threadline.ui.window.tab_container import TabContainer


class InterchangeHost(Protocol):
    """What import and export need of the main window (typed apart so this module does not
    import ``main_window``, which imports it)."""

    @property
    def engine(self) -> EngineApi | None: ...
    @property
    def tabs(self) -> TabContainer: ...
    @property
    def sidebar(self) -> SessionSidebar: ...
    def window(self) -> QWidget:
        """The top-level widget, the dialogs' parent (Qt's ``QWidget.window``: the main window itself)."""
        ...

    def show_message(self, text: str) -> None: ...


class InterchangeActions:
    def __init__(self, window: InterchangeHost) -> None:
        self.window = window
        self.running: ImportRun | None = None
        """The import under way (one at a time)."""

    # -- import -----------------------------------------------------------------------------

    def import_from_dialog(self) -> None:
        from PySide6.QtWidgets import QFileDialog  # its enums: made on use, not in the first frame

        from threadline.ui.window.import_dialog import IMPORT_FILTER

        if self._busy():
            return
        path, _ = QFileDialog.getOpenFileName(self.window.window(), "Import chats", "", IMPORT_FILTER)
        if path:
            self.import_path(Path(path))

    def import_path(self, path: Path) -> None:
        from threadline.ui.window.import_dialog import ImportRun

        if self._busy():
            return
        engine = self.window.engine
        assert engine is not None
        run = ImportRun(self.window.window(), engine, path)
        run.finished.connect(self._import_finished)
        self.running = run
        run.start()

    def _import_finished(self, _report: Any) -> None:
        if self.running is not None:
            self.running.deleteLater()
        self.running = None

    def _busy(self) -> bool:
        if self.window.engine is None:
            return True
        if self.running is not None:
            self.window.show_message("An import is already running; wait for it or cancel it.")
            return True
        return False

    def drag_enter(self, event: QDragEnterEvent) -> None:
        if self._dropped_file(event) is not None:
            event.acceptProposedAction()

    def drop(self, event: QDropEvent) -> None:
        path = self._dropped_file(event)
        if path is not None:
            event.acceptProposedAction()
            self.import_path(path)

    @staticmethod
    def _dropped_file(event: QDragEnterEvent | QDropEvent) -> Path | None:
        """The one local file dropped (a folder, a link or several files are not imports)."""
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        if len(urls) != 1 or not urls[0].isLocalFile():
            return None
        path = Path(urls[0].toLocalFile())
        return path if path.is_file() else None

    # -- export -----------------------------------------------------------------------------

    def export(self, selected: list[str] | None = None) -> None:
        """The export dialog; from the sidebar's menu ``selected`` chats come preselected."""
        from threadline.ui.window.export_dialog import export_chats

        window = self.window
        if window.engine is None:
            return
        tab = window.tabs.current_tab()
        export_chats(
            window.window(),
            window.engine,
            current=None if tab is None else str(tab.session_id),
            current_title="" if tab is None else str(tab.title),
            selected=selected if selected is not None else window.sidebar.selected_ids(),
            prefer_selected=selected is not None,
            tell=window.show_message,
        )
