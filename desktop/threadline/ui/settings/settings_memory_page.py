"""Settings → Memory: the saved memories, the memory switch and how far past-chat search reaches.

The list shows each memory's text, scope and date, filtered by scope; Add…, Edit… and Delete
change it through ``engine.memory`` (docs/memory.md). The switch turns memory off entirely:
no memory reaches a request and neither memory tool is offered. The past-chat section says
whether ``search_past_chats`` reaches the chats of the same project or all chats, and in
which projects it is offered whatever the agent enables.

The list follows ``MemoriesChanged`` (a session event): a memory saved in a chat, in
another window or by another process on the same database shows here while the page is
open, without reopening Settings (docs/memory.md).
"""

from __future__ import annotations

import asyncio

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from threadline.core.config import AgentConfig
from threadline.core.memory import MAX_MEMORY_CHARS, Memory, MemoryScope, PastChatsScope
from threadline.core.project import Project
from threadline.engine.api import EngineApi
from threadline.engine.events import MemoriesChanged, SessionEvent
from threadline.engine.memory import MemorySettings
from threadline.ui.common.message_bridge import MessageLevel, UserMessage
from threadline.ui.common.tasks import spawn
from threadline.ui.settings.page_layout import hint_label, scrolling_page, section_title

MEMORY_HINT = (
    "Short facts and preferences you keep for the assistant. Each goes into the system prompt "
    "of the chats in its scope, marked as your saved notes. The assistant may propose one; "
    "nothing is saved until you accept it."
)
PAST_CHATS_HINT = (
    "The “Search past chats” tool finds earlier messages by their words. Turn it on for an "
    "agent on the Tools page, or here for every chat of a project. It never finds the chat "
    "that asks."
)
TEXT_COLUMN, SCOPE_COLUMN, CREATED_COLUMN = range(3)
ALL = ""


def scope_key(scope: MemoryScope, target: str = "") -> str:
    return f"{scope.value}:{target}"


class MemoryPage(QWidget):
    def __init__(self, engine: EngineApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.memories: list[Memory] = []
        self.projects: list[Project] = []
        self.agents: list[AgentConfig] = []
        self.editing: str | None = None
        """The id of the memory in the form; ``None`` while adding a new one."""
        self._filling = False
        self._lock = asyncio.Lock()
        self.saving: asyncio.Task[None] | None = None
        """The last settings change being stored (tests wait on it)."""
        v = scrolling_page(self, "Memory settings")
        v.addWidget(section_title("Memory"))
        v.addWidget(hint_label(MEMORY_HINT))
        self.enabled = QCheckBox("&Use memory")
        self.enabled.setToolTip("Off: no memory goes into a request and the memory tools are not offered")
        self.enabled.toggled.connect(self._settings_changed)
        v.addWidget(self.enabled)

        v.addSpacing(8)
        v.addWidget(section_title("Saved memories"))
        top = QHBoxLayout()
        show = QLabel("&Show")
        self.filter = QComboBox()
        self.filter.setAccessibleName("Show memories of")
        show.setBuddy(self.filter)
        self.filter.currentIndexChanged.connect(lambda _i: self._fill_table())
        top.addWidget(show)
        top.addWidget(self.filter, 1)
        v.addLayout(top)
        self.table = QTableWidget(0, 3)
        self.table.setObjectName("RulesTable")
        self.table.setAccessibleName("Saved memories")
        self.table.setHorizontalHeaderLabels(["Memory", "Scope", "Saved"])
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(TEXT_COLUMN, QHeaderView.ResizeMode.Stretch)
        for column in (SCOPE_COLUMN, CREATED_COLUMN):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setMinimumHeight(160)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.table.itemDoubleClicked.connect(lambda _item: self.start_edit())
        v.addWidget(self.table)
        buttons = QHBoxLayout()
        self.add_button = QPushButton("&Add…")
        self.edit_button = QPushButton("&Edit…")
        self.delete_button = QPushButton("&Delete")
        for button, slot in (
            (self.add_button, self.start_add),
            (self.edit_button, self.start_edit),
            (self.delete_button, self.delete_selected),
        ):
            button.setObjectName("SecondaryButton")
            button.clicked.connect(slot)
            buttons.addWidget(button)
        buttons.addStretch(1)
        v.addLayout(buttons)

        self.form = QWidget()
        form = QHBoxLayout(self.form)
        form.setContentsMargins(0, 0, 0, 0)
        self.text = QLineEdit()
        self.text.setAccessibleName("Memory text")
        self.text.setPlaceholderText("A fact or preference, e.g. “I use PostgreSQL 16”")
        self.text.setMaxLength(MAX_MEMORY_CHARS)
        self.text.returnPressed.connect(self.save)
        self.scope = QComboBox()
        self.scope.setAccessibleName("Memory scope")
        self.save_button = QPushButton("Sa&ve")
        self.save_button.clicked.connect(self.save)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("SecondaryButton")
        self.cancel_button.clicked.connect(self.close_form)
        form.addWidget(self.text, 1)
        form.addWidget(self.scope)
        form.addWidget(self.save_button)
        form.addWidget(self.cancel_button)
        self.form.hide()
        v.addWidget(self.form)

        v.addSpacing(8)
        v.addWidget(section_title("Search past chats"))
        v.addWidget(hint_label(PAST_CHATS_HINT))
        reach = QHBoxLayout()
        reach_label = QLabel("&Reaches")
        self.reach = QComboBox()
        self.reach.setAccessibleName("Past-chat search reaches")
        self.reach.addItem(
            "Chats of the same project (or outside projects)", PastChatsScope.SAME_PROJECT.value
        )
        self.reach.addItem("All chats", PastChatsScope.ALL.value)
        reach_label.setBuddy(self.reach)
        self.reach.currentIndexChanged.connect(lambda _i: self._settings_changed())
        reach.addWidget(reach_label)
        reach.addWidget(self.reach, 1)
        v.addLayout(reach)
        v.addWidget(QLabel("Offer it in every chat of these projects:"))
        self.past_chat_projects = QListWidget()
        self.past_chat_projects.setAccessibleName("Projects that offer past-chat search")
        self.past_chat_projects.setMaximumHeight(120)
        self.past_chat_projects.itemChanged.connect(lambda _item: self._settings_changed())
        v.addWidget(self.past_chat_projects)

        self.message = QLabel()
        self.message.setWordWrap(True)
        v.addWidget(self.message)
        v.addStretch(1)
        self._selection_changed()
        unsubscribe = engine.sessions.subscribe_sessions(self._session_event)
        self.destroyed.connect(lambda *_: unsubscribe())

    # -- reading --------------------------------------------------------------------------------

    async def load(self) -> None:
        async with self._lock:
            settings = await self.engine.memory.settings()
            self.memories = await self.engine.memory.memories()
            self.projects = await self.engine.projects.list_projects()
            self.agents = await self.engine.agents.list_agents()
        if not shiboken6.isValid(self):
            return
        self._filling = True
        try:
            self.enabled.setChecked(settings.enabled)
            self.reach.setCurrentIndex(max(0, self.reach.findData(settings.past_chats.value)))
            self.past_chat_projects.clear()
            for project in self.projects:
                item = QListWidgetItem(project.name)
                item.setData(Qt.ItemDataRole.UserRole, project.id)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                checked = project.id in settings.past_chat_projects
                item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
                self.past_chat_projects.addItem(item)
            self._fill_scopes()
        finally:
            self._filling = False
        self._fill_table()

    def _session_event(self, event: SessionEvent) -> None:
        """Another window, process or chat changed the memories: show the list as it is now."""
        if isinstance(event, MemoriesChanged) and shiboken6.isValid(self):
            self.memories = list(event.memories)
            self._fill_table()

    def scope_words(self, memory: Memory) -> str:
        if memory.scope is MemoryScope.GLOBAL:
            return "All chats"
        if memory.scope is MemoryScope.PROJECT:
            name = next((p.name for p in self.projects if p.id == memory.target), "a deleted project")
            return f"Project {name}"
        name = next((a.name for a in self.agents if a.id == memory.target), "a deleted agent")
        return f"Agent {name}"

    def _fill_scopes(self) -> None:
        current_filter = self.filter.currentData()
        self.filter.clear()
        self.scope.clear()
        self.filter.addItem("All memories", ALL)
        choices = [("All chats", scope_key(MemoryScope.GLOBAL))]
        choices += [(f"Project {p.name}", scope_key(MemoryScope.PROJECT, p.id)) for p in self.projects]
        choices += [(f"Agent {a.name}", scope_key(MemoryScope.AGENT, a.id)) for a in self.agents]
        for label, key in choices:
            self.filter.addItem(label, key)
            self.scope.addItem(label, key)
        self.filter.setCurrentIndex(max(0, self.filter.findData(current_filter)))

    def shown_memories(self) -> list[Memory]:
        wanted = self.filter.currentData()
        if not wanted:
            return list(self.memories)
        return [m for m in self.memories if scope_key(m.scope, m.target) == wanted]

    def _fill_table(self) -> None:
        shown = self.shown_memories()
        self.table.setRowCount(len(shown))
        for row, memory in enumerate(shown):
            text = QTableWidgetItem(memory.text)
            text.setData(Qt.ItemDataRole.UserRole, memory.id)
            text.setToolTip(memory.text)
            self.table.setItem(row, TEXT_COLUMN, text)
            self.table.setItem(row, SCOPE_COLUMN, QTableWidgetItem(self.scope_words(memory)))
            created = memory.created_at.astimezone().strftime("%Y-%m-%d")
            self.table.setItem(row, CREATED_COLUMN, QTableWidgetItem(created))
        self._selection_changed()

    def selected(self) -> Memory | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        item = self.table.item(rows[0].row(), TEXT_COLUMN)
        memory_id = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return next((m for m in self.memories if m.id == memory_id), None)

    def _selection_changed(self) -> None:
        chosen = self.selected() is not None
        self.edit_button.setEnabled(chosen)
        self.delete_button.setEnabled(chosen)

    # -- changing -------------------------------------------------------------------------------

    def start_add(self) -> None:
        self.editing = None
        self.text.clear()
        wanted = self.filter.currentData()
        self.scope.setCurrentIndex(max(0, self.scope.findData(wanted or scope_key(MemoryScope.GLOBAL))))
        self._open_form()

    def start_edit(self) -> None:
        memory = self.selected()
        if memory is None:
            return
        self.editing = memory.id
        self.text.setText(memory.text)
        self.scope.setCurrentIndex(max(0, self.scope.findData(scope_key(memory.scope, memory.target))))
        self._open_form()

    def _open_form(self) -> None:
        self.message.clear()
        self.form.show()
        self.text.setFocus(Qt.FocusReason.OtherFocusReason)
        self.text.selectAll()

    def close_form(self) -> None:
        self.form.hide()
        self.editing = None

    def save(self) -> None:
        scope_value, _, target = str(self.scope.currentData() or scope_key(MemoryScope.GLOBAL)).partition(":")
        scope = MemoryScope(scope_value)
        text = self.text.text()
        memory = self.engine.memory
        if self.editing is None:
            work = memory.add(text, scope, target)
        else:
            work = memory.edit(self.editing, text, scope, target)
        self.save_button.setEnabled(False)

        def done(_saved: Memory) -> None:
            if shiboken6.isValid(self):
                self.save_button.setEnabled(True)
                self.close_form()
                self.message.setObjectName("")
                self.message.setText("Memory saved.")
                spawn(self.load(), tell=self)

        def failed(_err: BaseException) -> None:
            if shiboken6.isValid(self):
                self.save_button.setEnabled(True)

        spawn(work, tell=self, on_done=done, on_failed=failed, context="Memory not saved")

    def delete_selected(self) -> None:
        memory = self.selected()
        if memory is None:
            return

        def done(_none: None) -> None:
            if shiboken6.isValid(self):
                self.message.setObjectName("")
                self.message.setText("Memory deleted.")
                spawn(self.load(), tell=self)

        spawn(self.engine.memory.delete(memory.id), tell=self, on_done=done, context="Memory not deleted")

    def current_settings(self) -> MemorySettings:
        projects = tuple(
            str(item.data(Qt.ItemDataRole.UserRole))
            for item in (self.past_chat_projects.item(i) for i in range(self.past_chat_projects.count()))
            if item is not None and item.checkState() == Qt.CheckState.Checked
        )
        return MemorySettings(
            enabled=self.enabled.isChecked(),
            past_chats=PastChatsScope(self.reach.currentData() or PastChatsScope.SAME_PROJECT.value),
            past_chat_projects=projects,
        )

    def _settings_changed(self) -> None:
        if self._filling:
            return
        self.saving = spawn(
            self.engine.memory.set_settings(self.current_settings()),
            tell=self,
            context="Memory settings not saved",
        )

    def show_user_message(self, message: UserMessage) -> None:
        """This page's line (docs/ui-layout.md, "Telling the user")."""
        if shiboken6.isValid(self):
            self.message.setObjectName("FormError" if message.level is not MessageLevel.INFO else "")
            self.message.setText(message.text)
