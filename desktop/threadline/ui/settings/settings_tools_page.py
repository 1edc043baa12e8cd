"""Settings → Tools: which built-in tools the assistant gets, where they may work, and the approval rules.

Every change is saved at once, read-modify-write on the agent as stored: the
engine adds "Always allow" rules while a turn runs, and the page must not
overwrite them with an older copy. This is where those rules show up and can be
revoked. MCP servers have their own page (``McpServersPage``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QStyle,
    QStyleOptionButton,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from threadline.core.config import DEFAULT_AGENT_ID, AgentConfig, Approval, ApprovalRule
from threadline.engine.api import EngineApi
from threadline.ui.common.message_bridge import UserMessage
from threadline.ui.common.tasks import spawn
from threadline.ui.settings.page_layout import scrolling_page, section

log = logging.getLogger("threadline.ui.settings_tools")

BUILTIN_TOOLS: tuple[tuple[str, str, str], ...] = (
    ("read_file", "Read files", "Text files and images inside the allowed folders."),
    ("list_directory", "List folders", "What a folder inside the allowed folders contains."),
    ("search_files", "Search in files", "Find text in files under an allowed folder."),
    ("write_file", "Write files", "Always asks first and shows the changes as a diff."),
    ("shell", "Run commands", "Shell commands in an allowed folder; asks first unless trusted."),
    ("notes", "Notes", "Short notes the assistant keeps in the conversation."),
    ("search_past_chats", "Search past chats", "Full-text search in your other chats (Settings → Memory)."),
    ("propose_memory", "Propose memories", "Suggests a fact to remember; you accept, edit or decline it."),
)
APPROVAL_TEXT = {Approval.ALLOW: "Allow", Approval.ASK: "Ask", Approval.DENY: "Deny"}
PATTERN_COLUMN, ARGUMENTS_COLUMN, APPROVAL_COLUMN, REMOVE_COLUMN = range(4)


def approval_combo(value: Approval) -> QComboBox:
    combo = QComboBox()
    for approval in (Approval.ALLOW, Approval.ASK, Approval.DENY):
        combo.addItem(APPROVAL_TEXT[approval], approval.value)
    combo.setCurrentIndex(combo.findData(value.value))
    return combo


def _label_indent(box: QCheckBox) -> int:
    """Where the style puts a check box's label: its hint lines up with the label, not the box."""
    option = QStyleOptionButton()
    box.initStyleOption(option)
    return box.style().subElementRect(QStyle.SubElement.SE_CheckBoxContents, option, box).left()


class ToolsPage(QWidget):
    agentChanged = Signal()

    def __init__(self, engine: EngineApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.agent: AgentConfig | None = None
        self.agent_id = DEFAULT_AGENT_ID
        """The agent whose tools this page edits (the Agents page points it at the one selected)."""
        self._lock = asyncio.Lock()
        self._filling = False

        v = scrolling_page(self, "Tool settings")

        # -- built-in tools
        title, hint = section(
            "Built-in tools",
            "Off unless you turn them on. Tools that read or change files only "
            "work inside the allowed folders below.",
        )
        v.addWidget(title)
        assert hint is not None
        v.addWidget(hint)
        grid = QGridLayout()
        grid.setHorizontalSpacing(28)
        grid.setVerticalSpacing(2)
        self.builtin: dict[str, QCheckBox] = {}
        for i, (name, label, about) in enumerate(BUILTIN_TOOLS):
            box = QCheckBox(label)
            box.setToolTip(f"{name}: {about}")
            box.setAccessibleDescription(about)
            box.setProperty("tool", name)
            box.toggled.connect(self._builtin_toggled)
            self.builtin[name] = box
            desc = QLabel(about)
            desc.setObjectName("Hint")
            desc.setWordWrap(True)
            desc.setContentsMargins(_label_indent(box), 0, 0, 6)  # under the check box's label
            row, column = divmod(i, 2)
            grid.addWidget(box, row * 2, column)
            grid.addWidget(desc, row * 2 + 1, column, Qt.AlignmentFlag.AlignTop)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        v.addLayout(grid)
        v.addSpacing(10)

        # -- allowed folders
        title, hint = section(
            "Allowed folders",
            "File tools and commands are confined to these folders; the "
            "first one is where relative paths start.",
        )
        v.addWidget(title)
        assert hint is not None
        v.addWidget(hint)
        folders_row = QHBoxLayout()
        self.folders = QListWidget()
        self.folders.setObjectName("ProviderList")
        self.folders.setFixedHeight(76)
        self.folders.setAccessibleName("Allowed folders")
        self.folders.currentRowChanged.connect(lambda _r: self._update_buttons())
        folders_row.addWidget(self.folders, 1)
        buttons = QVBoxLayout()
        self.add_folder_button = QPushButton("Add folder…")
        self.add_folder_button.setObjectName("SecondaryButton")
        self.add_folder_button.clicked.connect(self.add_folder)
        self.remove_folder_button = QPushButton("Remove")
        self.remove_folder_button.setObjectName("SecondaryButton")
        self.remove_folder_button.clicked.connect(self.remove_folder)
        buttons.addWidget(self.add_folder_button)
        buttons.addWidget(self.remove_folder_button)
        buttons.addStretch(1)
        folders_row.addLayout(buttons)
        v.addLayout(folders_row)
        v.addSpacing(10)

        # -- approval rules
        title, hint = section(
            "Approval rules",
            "The first rule that matches decides. “Always allow” adds rules here: remove one to be asked "
            "again. Wildcards work (git/*); for shell, Arguments matches the command line.",
        )
        v.addWidget(title)
        assert hint is not None
        v.addWidget(hint)
        self.rules = QTableWidget(0, 4)
        self.rules.setObjectName("RulesTable")
        self.rules.setAccessibleName("Approval rules")
        self.rules.setHorizontalHeaderLabels(["Tool", "Arguments", "Approval", ""])
        self.rules.verticalHeader().hide()
        self.rules.setShowGrid(False)
        self.rules.verticalHeader().setDefaultSectionSize(34)
        self.rules.setAlternatingRowColors(False)
        self.rules.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.rules.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.rules.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        header = self.rules.horizontalHeader()
        header.setSectionResizeMode(PATTERN_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(ARGUMENTS_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(APPROVAL_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(REMOVE_COLUMN, QHeaderView.ResizeMode.Fixed)
        header.resizeSection(REMOVE_COLUMN, 34)
        header.setHighlightSections(False)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.rules.setMinimumHeight(150)
        self.rules.itemChanged.connect(self._rule_edited)
        v.addWidget(self.rules)
        self.no_rules = QLabel("No rules yet: every tool call asks.")
        self.no_rules.setObjectName("Hint")
        v.addWidget(self.no_rules)

        add = QHBoxLayout()
        add.setSpacing(6)
        self.new_pattern = QLineEdit()
        self.new_pattern.setAccessibleName("New rule: tool")
        self.new_pattern.setPlaceholderText("Tool, e.g. read_file or git/*")
        self.new_pattern.returnPressed.connect(self.add_rule)
        self.new_arguments = QLineEdit()
        self.new_arguments.setAccessibleName("New rule: arguments")
        self.new_arguments.setPlaceholderText("Arguments (optional), e.g. git status*")
        self.new_arguments.returnPressed.connect(self.add_rule)
        self.new_approval = approval_combo(Approval.ALLOW)
        self.add_rule_button = QPushButton("Add rule")
        self.add_rule_button.setObjectName("SecondaryButton")
        self.add_rule_button.clicked.connect(self.add_rule)
        add.addWidget(self.new_pattern, 3)
        add.addWidget(self.new_arguments, 3)
        add.addWidget(self.new_approval)
        add.addWidget(self.add_rule_button)
        v.addLayout(add)

        default_row = QHBoxLayout()
        default_label = QLabel("When no rule matches:")
        self.default_approval = approval_combo(Approval.ASK)
        self.default_approval.setAccessibleName("When no rule matches")
        self.default_approval.currentIndexChanged.connect(self._default_changed)
        default_row.addWidget(default_label)
        default_row.addWidget(self.default_approval)
        default_row.addStretch(1)
        v.addLayout(default_row)

        self.message = QLabel()
        self.message.setObjectName("Hint")
        self.message.setWordWrap(True)
        v.addWidget(self.message)
        v.addStretch(1)
        self._update_buttons()

    # -- loading ---------------------------------------------------------------------------------

    async def load(self) -> None:
        self.agent = await self.engine.agents.get_agent(self.agent_id)
        self._fill(self.agent)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        # A turn may have added an "Always allow" rule since the page was filled.
        if self.agent is not None:
            spawn(self.load(), tell=self, context="Not saved")

    def _fill(self, agent: AgentConfig) -> None:
        self._filling = True
        try:
            for name, box in self.builtin.items():
                box.setChecked(name in agent.enabled_tools)
            current = self.folders.currentItem().text() if self.folders.currentItem() else None
            self.folders.clear()
            for folder in agent.allowed_folders:
                self.folders.addItem(QListWidgetItem(folder))
                if folder == current:
                    self.folders.setCurrentRow(self.folders.count() - 1)
            self.rules.setRowCount(0)
            for rule in agent.approval_rules:
                self._add_rule_row(rule)
            self.no_rules.setVisible(not agent.approval_rules)
            self.default_approval.setCurrentIndex(
                self.default_approval.findData(agent.default_approval.value)
            )
        finally:
            self._filling = False
        self._update_buttons()

    def _add_rule_row(self, rule: ApprovalRule) -> None:
        r = self.rules.rowCount()
        self.rules.insertRow(r)
        pattern = QTableWidgetItem(rule.pattern)
        pattern.setToolTip("Double-click to edit")
        self.rules.setItem(r, PATTERN_COLUMN, pattern)
        arguments = QTableWidgetItem(rule.argument_pattern)
        arguments.setToolTip("Matches the command line of shell calls (wildcards * and ?)")
        self.rules.setItem(r, ARGUMENTS_COLUMN, arguments)
        combo = approval_combo(rule.approval)
        combo.setAccessibleName(f"Approval for {rule.pattern}")
        combo.currentIndexChanged.connect(lambda _i: self._save_rules())
        self.rules.setCellWidget(r, APPROVAL_COLUMN, combo)
        remove = QToolButton()
        remove.setObjectName("RemoveRule")
        remove.setText("×")
        remove.setAutoRaise(True)
        remove.setCursor(Qt.CursorShape.PointingHandCursor)
        remove.setToolTip(f"Remove this rule ({rule.pattern})")
        remove.setAccessibleName(f"Remove rule {rule.pattern}")
        remove.clicked.connect(lambda _=False, b=remove: self._remove_rule_of(b))
        self.rules.setCellWidget(r, REMOVE_COLUMN, remove)

    def _update_buttons(self) -> None:
        self.remove_folder_button.setEnabled(self.folders.currentItem() is not None)

    # -- saving (read-modify-write on the stored agent) -----------------------------------------

    def _change(self, change: Callable[[AgentConfig], AgentConfig], done: str = "") -> None:
        async def do() -> None:
            async with self._lock:
                agent = await self.engine.agents.get_agent(self.agent_id)
                updated = change(agent)
                if updated != agent:
                    await self.engine.agents.save_agent(updated)
                self.agent = updated
                self._fill(updated)

        def finished(_r: object) -> None:
            self.message.setText(done)
            self.agentChanged.emit()

        spawn(do(), tell=self, on_done=finished, context="Not saved")

    def show_user_message(self, message: UserMessage) -> None:
        """This page's line, for the settings dialog (docs/ui-layout.md, "Telling the user")."""
        self.message.setText(message.text)

    def _builtin_toggled(self, _on: bool) -> None:
        if self._filling:
            return
        wanted = {name for name, box in self.builtin.items() if box.isChecked()}

        def change(agent: AgentConfig) -> AgentConfig:
            others = [p for p in agent.enabled_tools if p not in self.builtin]
            mine = [name for name, *_ in BUILTIN_TOOLS if name in wanted]
            return replace(agent, enabled_tools=tuple(mine + others))

        self._change(change)

    def add_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Allow the assistant's tools in a folder")
        if not folder:
            return
        self._change(
            lambda a: replace(a, allowed_folders=tuple(dict.fromkeys((*a.allowed_folders, folder)))),
            f"Tools may now work in {folder}.",
        )

    def remove_folder(self) -> None:
        item = self.folders.currentItem()
        if item is None:
            return
        folder = item.text()
        self._change(
            lambda a: replace(a, allowed_folders=tuple(f for f in a.allowed_folders if f != folder)),
            f"Removed {folder}.",
        )

    def add_rule(self) -> None:
        pattern = self.new_pattern.text().strip()
        if not pattern:
            self.message.setText("Type the tool a rule is for, e.g. read_file or git/*.")
            self.new_pattern.setFocus()
            return
        rule = ApprovalRule(
            pattern, Approval(self.new_approval.currentData()), self.new_arguments.text().strip()
        )
        self.new_pattern.clear()
        self.new_arguments.clear()
        self._change(
            lambda a: replace(a, approval_rules=(rule, *(r for r in a.approval_rules if r != rule))),
            f"Added a rule for {pattern}.",
        )

    def _rule_edited(self, _item: QTableWidgetItem) -> None:
        if not self._filling:
            self._save_rules()

    def _rules_in_table(self) -> tuple[ApprovalRule, ...]:
        rules = []
        for r in range(self.rules.rowCount()):
            pattern_item = self.rules.item(r, PATTERN_COLUMN)
            arguments_item = self.rules.item(r, ARGUMENTS_COLUMN)
            combo = self.rules.cellWidget(r, APPROVAL_COLUMN)
            pattern = pattern_item.text().strip() if pattern_item else ""
            if not pattern or not isinstance(combo, QComboBox):
                continue
            arguments = arguments_item.text().strip() if arguments_item else ""
            rules.append(ApprovalRule(pattern, Approval(combo.currentData()), arguments))
        return tuple(dict.fromkeys(rules))

    def _save_rules(self) -> None:
        if self._filling:
            return
        shown = tuple(self.agent.approval_rules) if self.agent else ()
        edited = self._rules_in_table()

        def change(agent: AgentConfig) -> AgentConfig:
            # Rules added meanwhile (a turn's "Always allow") are kept, in front.
            added = tuple(r for r in agent.approval_rules if r not in shown)
            return replace(agent, approval_rules=added + edited)

        self._change(change, "Rules saved.")

    def _remove_rule_of(self, button: QToolButton) -> None:
        for r in range(self.rules.rowCount()):
            if self.rules.cellWidget(r, REMOVE_COLUMN) is button:
                self.remove_rule(r)
                return

    def remove_rule(self, row: int) -> None:
        rules = self._rules_in_table()
        if not 0 <= row < len(rules):
            return
        gone = rules[row]
        self._change(
            lambda a: replace(a, approval_rules=tuple(r for r in a.approval_rules if r != gone)),
            f"Removed the rule for {gone.pattern}: it asks again.",
        )

    def _default_changed(self, _index: int) -> None:
        if self._filling:
            return
        value = Approval(self.default_approval.currentData())
        self._change(lambda a: replace(a, default_approval=value))
