"""Two parts of Settings → Knowledge: where a base is attached, and the files its last run could not read.

``AttachLists`` ticks the projects and agents a base is attached to; ticking or unticking
one attaches or detaches it at once through the engine (like the MCP page's "Offer"
box), and chats are counted (each chat's own Context… changes those). ``ProblemList``
shows each file that could not be read with the reason, selectable, so a person can
find and fix the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from threadline.core.knowledge import AttachScope, KnowledgeBase
from threadline.ui.common.tasks import spawn

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi
    from threadline.engine.capability_apis import KnowledgeApi
    from threadline.knowledge import FileProblem


def _subtitle(text: str) -> QLabel:
    label = QLabel(text)
    label.setObjectName("SubTitle")
    return label


class AttachLists(QWidget):
    attachedChanged = Signal(object)
    """The base as stored after a tick (``KnowledgeBase``)."""

    def __init__(self, knowledge: KnowledgeApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.knowledge = knowledge
        self.base: KnowledgeBase | None = None
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 8, 0, 0)
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(4)
        grid.addWidget(_subtitle("Attached to projects"), 0, 0)
        grid.addWidget(_subtitle("Attached to agents"), 0, 1)
        self.projects = self._list("Projects it is attached to")
        self.agents = self._list("Agents it is attached to")
        grid.addWidget(self.projects, 1, 0)
        grid.addWidget(self.agents, 1, 1)
        self.chats = QLabel()
        self.chats.setObjectName("Hint")
        self.chats.setWordWrap(True)
        grid.addWidget(self.chats, 2, 0, 1, 2)

    def _list(self, accessible: str) -> QListWidget:
        widget = QListWidget()
        widget.setObjectName("ProviderList")
        widget.setAccessibleName(accessible)
        widget.setMaximumHeight(96)
        widget.itemChanged.connect(self._ticked)
        return widget

    async def load_targets(self, engine: EngineApi) -> None:
        projects = [(p.id, p.name) for p in await engine.projects.list_projects()]
        agents = [(a.id, a.name) for a in await engine.agents.list_agents()]
        for widget, scope, targets in (
            (self.projects, AttachScope.PROJECT, projects),
            (self.agents, AttachScope.AGENT, agents),
        ):
            widget.blockSignals(True)
            widget.clear()
            for target, name in targets:
                item = QListWidgetItem(name)
                item.setData(Qt.ItemDataRole.UserRole, (scope.value, target))
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Unchecked)
                widget.addItem(item)
            if not targets:
                empty = QListWidgetItem("No projects yet" if scope is AttachScope.PROJECT else "No agents")
                empty.setFlags(Qt.ItemFlag.NoItemFlags)
                widget.addItem(empty)
            widget.blockSignals(False)

    def show_base(self, base: KnowledgeBase) -> None:
        self.base = base
        for widget in (self.projects, self.agents):
            widget.blockSignals(True)
            for i in range(widget.count()):
                item = widget.item(i)
                pair = item.data(Qt.ItemDataRole.UserRole)
                if pair:
                    on = (AttachScope(pair[0]), pair[1]) in base.attached
                    item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
            widget.blockSignals(False)
        chats = sum(1 for scope, _t in base.attached if scope is AttachScope.SESSION)
        self.chats.setText(
            f"Also attached to {chats} chat{'s' if chats != 1 else ''} (each chat's Context… changes that)."
            if chats
            else "To attach it to one chat, use that chat's Context… button."
        )

    def _ticked(self, item: QListWidgetItem) -> None:
        base = self.base
        pair = item.data(Qt.ItemDataRole.UserRole)
        if base is None or not pair:
            return
        on = item.checkState() == Qt.CheckState.Checked
        scope, target = AttachScope(pair[0]), str(pair[1])
        spawn(
            self.knowledge.attach(base.name, scope, target, attached=on),
            tell=self,
            on_done=self._stored,
            on_failed=lambda _e: self.show_base(base),
            context="Not attached" if on else "Not detached",
        )

    def _stored(self, base: KnowledgeBase) -> None:
        if self.base is not None and self.base.id == base.id:
            self.base = base
        self.attachedChanged.emit(base)


class ProblemList(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 8, 0, 0)
        v.setSpacing(4)
        self.title = _subtitle("Files that could not be read")
        v.addWidget(self.title)
        self.tree = QTreeWidget()
        self.tree.setObjectName("RulesTable")  # the settings dialog's look for its tables
        self.tree.setAccessibleName("Files that could not be read, with the reason")
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["File", "Reason"])
        self.tree.setRootIsDecorated(False)
        self.tree.setWordWrap(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.resizeSection(0, 260)
        v.addWidget(self.tree, 1)
        self.none = QLabel("Every file could be read at the last indexing.")
        self.none.setObjectName("Hint")
        self.none.setWordWrap(True)  # one long line widened the page and squeezed the list of bases
        v.addWidget(self.none)
        v.addStretch(0)  # takes the room when the list is hidden, none when it is shown

    def show_problems(
        self,
        problems: list[FileProblem],
        roots: tuple[str, ...] = (),
        *,
        indexed: bool = True,
        partial: bool = False,
    ) -> None:
        """List ``problems``; a file under one of ``roots`` is named from that folder's name on.
        ``partial``: the last run stopped before the end, so the files not read yet are not known."""
        if not indexed:
            none = "Files that cannot be read are listed here, with the reason, once the base is indexed."
        elif partial:
            none = "None so far; the files not reached yet are read when the indexing carries on."
        else:
            none = "Every file could be read at the last indexing."
        self.none.setText(none)
        self.tree.clear()
        for problem in problems:
            item = QTreeWidgetItem([_shown_path(problem.path, roots), problem.reason])
            item.setToolTip(0, problem.path)
            item.setToolTip(1, problem.reason)
            self.tree.addTopLevelItem(item)
        # The names are short (from the folder's name on); the reasons need the room.
        self.tree.resizeColumnToContents(0)
        self.tree.header().resizeSection(0, min(self.tree.header().sectionSize(0) + 16, 260))
        self.title.setText(
            f"Files that could not be read ({len(problems)})" if problems else "Files that could not be read"
        )
        self.tree.setVisible(bool(problems))
        self.none.setVisible(not problems)

    def rows(self) -> list[tuple[str, str]]:
        """What the list shows, row by row (file as shown, reason)."""
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [(item.text(0), item.text(1)) for item in items if item is not None]


def _shown_path(path: str, roots: tuple[str, ...]) -> str:
    """``Handbook/notes/a.md`` for a file of the folder ``/home/me/Handbook``: the long common
    start of every row would push the part that tells the files apart out of sight."""
    for root in sorted(roots, key=len, reverse=True):
        parent = Path(root).parent
        if Path(path).is_relative_to(root) and path != root:
            return str(Path(path).relative_to(parent))
    return path
