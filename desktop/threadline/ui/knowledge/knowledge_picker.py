"""A checkable list of knowledge bases: which ones a project, an agent or a chat draws on.

The project dialog, Settings → Agents and a chat's Context… use it the same way: ``load``
ticks the bases attached to the target, ``apply`` (when the dialog saves) attaches the
ticked ones and detaches the others, changing only what the person changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from threadline.core.knowledge import AttachScope
    from threadline.engine.capability_apis import KnowledgeApi

NONE_YET = "No knowledge bases yet. Add one in Settings → Knowledge to let chats search your folders."


class KnowledgePicker(QWidget):
    def __init__(self, hint: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("KnowledgePicker")
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        v.setSpacing(4)
        self.hint = QLabel(hint)
        self.hint.setObjectName("Hint")
        self.hint.setWordWrap(True)
        v.addWidget(self.hint)
        self.list = QListWidget()
        self.list.setObjectName("ProviderList")  # the look of the lists in Settings → Knowledge
        self.list.setAccessibleName("Knowledge bases")
        self.list.setMaximumHeight(110)
        v.addWidget(self.list)
        self.none_yet = QLabel(NONE_YET)
        self.none_yet.setObjectName("Hint")
        self.none_yet.setWordWrap(True)
        v.addWidget(self.none_yet)
        self._attached: set[str] = set()
        self._show_empty(True)

    def _show_empty(self, empty: bool) -> None:
        self.list.setVisible(not empty)
        self.none_yet.setVisible(empty)

    async def load(self, knowledge: KnowledgeApi, scope: AttachScope, target: str) -> None:
        """List every base, ticked where attached to ``target`` ("" for one not saved yet)."""
        bases = await knowledge.bases()
        self._attached = {b.name for b in bases if target and (scope, target) in b.attached}
        self.list.clear()
        for base in bases:
            item = QListWidgetItem(base.name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(
                Qt.CheckState.Checked if base.name in self._attached else Qt.CheckState.Unchecked
            )
            item.setToolTip("\n".join(base.paths))
            self.list.addItem(item)
        self._show_empty(not bases)

    def chosen(self) -> set[str]:
        items = (self.list.item(i) for i in range(self.list.count()))
        return {item.text() for item in items if item.checkState() == Qt.CheckState.Checked}

    def set_chosen(self, name: str, chosen: bool) -> None:
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.text() == name:
                item.setCheckState(Qt.CheckState.Checked if chosen else Qt.CheckState.Unchecked)

    async def apply(self, knowledge: KnowledgeApi, scope: AttachScope, target: str) -> None:
        """Attach what was ticked and detach what was unticked since ``load``."""
        chosen = self.chosen()
        for name in sorted(chosen - self._attached):
            await knowledge.attach(name, scope, target)
        for name in sorted(self._attached - chosen):
            await knowledge.attach(name, scope, target, attached=False)
        self._attached = chosen
