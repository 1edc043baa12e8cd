"""Several chats at once: what is selected in a sidebar list, and the menu acting on all of them.

The lists select with Ctrl+click, Shift+click and Ctrl+A (Qt's extended selection);
Ctrl+A takes the rows loaded so far, since the list loads its pages as it scrolls.
Each entry of the menu does exactly what it says to exactly the selected chats: Pin
pins them (Unpin when all are pinned already), Archive archives them, Delete deletes
them with one undo for all, Export… opens the export dialog for them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QMenu, QWidget

from threadline.core.session import SessionInfo
from threadline.ui.sessions.session_list_model import SessionRole


def selected_sessions(view: QAbstractItemView) -> list[SessionInfo]:
    """The selected chats of ``view`` in list order (group headers are not selectable)."""
    rows = sorted(view.selectionModel().selectedRows(), key=lambda index: index.row())
    infos = [index.data(SessionRole) for index in rows]
    return [info for info in infos if isinstance(info, SessionInfo)]


class SelectionCommands:
    """What the sidebar does to several chats; the menu only calls these."""

    def __init__(
        self,
        *,
        export: Callable[[Sequence[str]], None],
        pin: Callable[[Sequence[str], bool], None],
        archive: Callable[[Sequence[str]], None],
        unarchive: Callable[[Sequence[str]], None],
        delete: Callable[[Sequence[str]], None],
    ) -> None:
        self.export = export
        self.pin = pin
        self.archive = archive
        self.unarchive = unarchive
        self.delete = delete


def build_selection_menu(parent: QWidget, infos: Sequence[SessionInfo], commands: SelectionCommands) -> QMenu:
    """The context menu for several selected chats (all archived, or all in the main list)."""
    ids = [info.id for info in infos]
    count = len(ids)
    menu = QMenu(parent)
    menu.addAction(f"Export {count} chats…", lambda: commands.export(ids))
    if all(info.archived for info in infos):
        menu.addAction(f"Unarchive {count} chats", lambda: commands.unarchive(ids))
    else:
        all_pinned = all(info.pinned for info in infos)
        label = f"Unpin {count} chats" if all_pinned else f"Pin {count} chats"
        menu.addAction(label, lambda: commands.pin(ids, not all_pinned))
        menu.addSeparator()
        menu.addAction(f"Archive {count} chats", lambda: commands.archive(ids))
    delete = menu.addAction(f"Delete {count} chats", lambda: commands.delete(ids))
    delete.setShortcut(QKeySequence(Qt.Key.Key_Delete))
    return menu
