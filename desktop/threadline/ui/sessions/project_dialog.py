"""The project editor: name, colour, instructions, context files and knowledge bases of a project.

One dialog makes a new project and edits an existing one. Saving goes through the
engine (``create_project`` / ``save_project``); a refused name is shown in the dialog
and nothing closes, so what was typed is never lost.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from threadline.core.knowledge import AttachScope
from threadline.core.project import MAX_PROJECT_NAME, PROJECT_COLOURS, Project
from threadline.ui.common.inline_messages import claim_while_open, show_in_label
from threadline.ui.common.message_bridge import UserMessage
from threadline.ui.common.save_buttons import add_save_foot
from threadline.ui.common.sticky_context_editor import StickyContextEditor
from threadline.ui.common.tasks import spawn
from threadline.ui.knowledge.knowledge_picker import KnowledgePicker

if TYPE_CHECKING:  # the engine's modules load after the first paint
    from threadline.engine.api import EngineApi

COLOUR_NAMES = ("Blue", "Green", "Amber", "Red", "Violet", "Pink", "Teal", "Slate")


def colour_icon(colour: str, size: int = 14) -> QIcon:
    """A filled round swatch of ``colour`` (menus and the colour buttons)."""
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(colour))
    painter.drawEllipse(1, 1, size - 2, size - 2)
    painter.end()
    return QIcon(pixmap)


class ProjectDialog(QDialog):
    """Create (``project=None``) or edit a project; ``saved`` holds the stored project once accepted."""

    def __init__(
        self,
        engine: EngineApi,
        project: Project | None = None,
        parent: QWidget | None = None,
        *,
        colour: str = PROJECT_COLOURS[0],
    ) -> None:
        super().__init__(parent)
        self.engine = engine
        self.project = project
        self.saved: Project | None = None
        self.setObjectName("ProjectDialog")
        self.setWindowTitle("Edit project" if project else "New project")
        self.setMinimumWidth(600)
        v = QVBoxLayout(self)
        v.setContentsMargins(18, 16, 18, 12)
        v.setSpacing(10)
        intro = QLabel(
            "A project groups chats in the sidebar. Its instructions and context files are sent with "
            "every chat in it, after the agent's own."
        )
        intro.setObjectName("Hint")
        intro.setWordWrap(True)
        v.addWidget(intro)

        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        self.name = QLineEdit(project.name if project else "")
        self.name.setObjectName("ProjectName")
        self.name.setMaxLength(MAX_PROJECT_NAME)
        self.name.setPlaceholderText("e.g. Garden redesign")
        self.name.setAccessibleName("Project name")
        self.name.textChanged.connect(self._name_changed)
        form.addRow("Name", self.name)

        swatches = QHBoxLayout()
        swatches.setSpacing(6)
        self.colours = QButtonGroup(self)
        self.colours.setExclusive(True)
        chosen = (project.colour if project else colour).lower()
        for value, label in zip(PROJECT_COLOURS, COLOUR_NAMES, strict=True):
            button = QToolButton()
            button.setObjectName("ColourSwatch")
            button.setCheckable(True)
            button.setIcon(colour_icon(value, 18))
            button.setToolTip(label)
            button.setAccessibleName(f"Colour {label}")
            button.setProperty("colour", value)
            button.setChecked(value == chosen)
            self.colours.addButton(button)
            swatches.addWidget(button)
        if self.colours.checkedButton() is None:
            self.colours.buttons()[0].setChecked(True)
        swatches.addStretch(1)
        form.addRow("Colour", swatches)

        self.instructions = QPlainTextEdit(project.instructions if project else "")
        self.instructions.setObjectName("ProjectInstructions")
        self.instructions.setPlaceholderText(
            "Standing instructions for every chat in this project, e.g. “Answer in metric units.”"
        )
        self.instructions.setAccessibleName("Project instructions")
        self.instructions.setTabChangesFocus(True)
        self.instructions.setMinimumHeight(90)
        form.addRow("Instructions", self.instructions)
        v.addLayout(form)

        files = QLabel("Context files")
        files.setObjectName("SectionTitle")
        v.addWidget(files)
        self.context = StickyContextEditor(self, show_share=False)
        if project is not None:
            self.context.set_value(project.context)
        v.addWidget(self.context)

        knowledge = QLabel("Knowledge")
        knowledge.setObjectName("SectionTitle")
        v.addWidget(knowledge)
        self.knowledge = KnowledgePicker("Every chat in the project searches the ticked knowledge bases.")
        v.addWidget(self.knowledge)

        foot = add_save_foot(self, v, self.save)  # Enter in the path field adds it, it does not save
        self.message, self.buttons, self.save_button = foot.message, foot.buttons, foot.save_button
        self.save_button.setText("Create" if project is None else "Save")
        self.knowledge_loaded = spawn(
            self.knowledge.load(engine.knowledge, AttachScope.PROJECT, project.id if project else ""),
            tell=self,
            context="Knowledge bases not listed",
        )
        self._name_changed(self.name.text())
        self.bridge = claim_while_open(self, self)

    def chosen_colour(self) -> str:
        button = self.colours.checkedButton()
        return str(button.property("colour")) if button is not None else PROJECT_COLOURS[0]

    def _name_changed(self, text: str) -> None:
        self.save_button.setEnabled(bool(text.strip()))

    def save(self) -> None:
        """Store the project; the dialog closes only once the engine confirmed it."""
        self.save_button.setEnabled(False)
        self.message.hide()
        engine = self.engine
        base = self.project or Project.create(self.name.text())
        edited = replace(
            base,
            name=self.name.text(),
            colour=self.chosen_colour(),
            instructions=self.instructions.toPlainText().strip(),
            context=self.context.value(),
        )

        async def store() -> Project:
            saved = await engine.projects.save_project(edited)
            await self.knowledge.apply(engine.knowledge, AttachScope.PROJECT, saved.id)
            return saved

        spawn(store(), tell=self, on_done=self._saved, on_failed=self._failed)

    def _saved(self, project: Project) -> None:
        self.saved = project
        self.accept()

    def _failed(self, _err: BaseException) -> None:
        self.save_button.setEnabled(True)  # the bridge shows why, in this dialog's line

    def show_user_message(self, message: UserMessage) -> None:
        show_in_label(self.message, message)
