"""The composer: where a prompt is written, with its attachments, model and send/stop button.

Enter sends and Shift+Enter breaks the line; Esc stops a running reply (or leaves
edit mode). The text is *not* cleared when Send is pressed: the tab clears it only
after the engine accepted the prompt (``accept_sent``), so a refused send keeps
every character. Files dropped, pasted or attached become context (text: documents
are read in a worker, see ``attachment_tray``) or images, each shown as a chip;
unreadable or oversized files get a chip that says why, never half-attached, and
Send waits (disabled, with the reason as its tooltip) while a file is being read.
An MCP server's resource (Attach → From MCP server…) is read again when Send is pressed,
and sent once read: what goes is the resource as it is then (docs/mcp.md).

What is typed and attached is the session's draft: ``draftChanged`` tells the tab,
which saves it through the engine so it survives a restart (``draft``/``set_draft``).

The model picker shows the session's own model. When the session has none, or its
model or provider was removed, the picker says so ("Pick a model") instead of
showing some other model that the session would not use. Opening it asks for a
fresh list (``modelListWanted``), and so does its "Refresh models" entry; while the
list loads, a disabled "Loading models…" entry shows under the cached models.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QFontMetrics, QKeyEvent, QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from threadline.core.messages import ContextFile, ImageBlock
from threadline.core.request import estimate_tokens_by_chars
from threadline.engine.drafts import Draft
from threadline.ui.chat.composer.agent_picker import AgentPicker
from threadline.ui.chat.composer.attachment_tray import AttachmentTray, local_paths
from threadline.ui.chat.composer.compare_picker import CompareButton
from threadline.ui.chat.composer.context_meter_button import ContextMeterButton
from threadline.ui.chat.composer.model_catalog import ModelChoice

log = logging.getLogger("threadline.ui.chat.composer.composer")

MAX_VISIBLE_LINES = 10
LOADING_MODELS = "Loading models…"
REFRESH_MODELS = "Refresh models"


def estimate_tokens(chars: int) -> int:
    """A rough token count (about four characters a token for English text and code)."""
    return (chars + 3) // 4


class _Edit(QPlainTextEdit):
    """The text box: Enter submits, Shift+Enter is a newline, Esc escapes."""

    submit = Signal()
    escape = Signal()
    fontChanged = Signal()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self.fontChanged.emit()  # text zoom: the box's height follows the new line height

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & (Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.AltModifier):
                self.insertPlainText("\n")
                return
            self.submit.emit()
            return
        if key == Qt.Key.Key_Escape:
            self.escape.emit()
            return
        super().keyPressEvent(event)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return source.hasUrls() or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        if paths := local_paths(source):  # pasted files, or a pasted file:// URL
            parent = self.parent()
            while parent is not None and not isinstance(parent, Composer):
                parent = parent.parent()
            if isinstance(parent, Composer):
                parent.attach_paths(paths)
                return
        super().insertFromMimeData(source)


MODEL_PICKER_MIN_WIDTH = 80


class ModelPicker(QComboBox):
    """The model combo box; says when its list is about to show, so the list can be refreshed
    then rather than at start (listing models imports the provider SDKs, docs/design.md §9)."""

    popupAboutToShow = Signal()

    def showPopup(self) -> None:
        self.popupAboutToShow.emit()
        super().showPopup()

    def minimumSizeHint(self) -> QSize:
        """As wide as its model's name when there is room, down to ``MODEL_PICKER_MIN_WIDTH``
        (the name elided) in a narrow window: the composer's row must not set the window's
        minimum width."""
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), MODEL_PICKER_MIN_WIDTH), hint.height())


class Composer(QWidget):
    submitted = Signal(str, object, object)  # text, tuple[ImageBlock], tuple[ContextFile]
    stopRequested = Signal()
    editCancelled = Signal()
    modelChosen = Signal(object)  # ModelChoice
    modelListWanted = Signal()
    """The model picker is opening: a good moment to refresh the list of models."""
    attachmentRefused = Signal(str)
    draftChanged = Signal()
    """The text or the attachments changed (the tab saves the draft, debounced)."""
    mcpResourcesWanted = Signal()
    """Attach → From MCP server… (the tab's ``ChatMcp`` opens the resource browser)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._busy = False
        self._held = ""
        self._editing: str | None = None
        self._history_chars = 0
        self._models: list[ModelChoice | None] = []
        """The picker's entries in order; ``None`` is the "Pick a model" entry."""
        self._refresh_index = -1
        """The picker's "Refresh models" entry (-1: none)."""
        self._selected_index = 0
        """The entry the session's model is at, restored after "Refresh models"."""
        self.setAcceptDrops(True)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(4)
        self.edit_banner = QLabel()
        self.edit_banner.setObjectName("ComposerHint")
        self.edit_banner.hide()
        outer.addWidget(self.edit_banner)

        self.frame = QFrame()
        self.frame.setObjectName("ComposerFrame")
        outer.addWidget(self.frame)
        box = QVBoxLayout(self.frame)
        box.setContentsMargins(10, 8, 8, 6)
        box.setSpacing(4)

        self.chips = AttachmentTray()
        self.chips.changed.connect(self._attachments_changed)
        self.chips.readingChanged.connect(self._update_buttons)
        self.chips.readingChanged.connect(self._read_for_send)
        self._send_when_read = False
        box.addWidget(self.chips)

        self.edit = _Edit()
        self.edit.setObjectName("ComposerEdit")
        self.edit.setAccessibleName("Message")
        self.edit.setPlaceholderText("Message…  (Enter to send, Shift+Enter for a new line)")
        self.edit.setTabChangesFocus(True)
        self.edit.setFrameShape(QFrame.Shape.NoFrame)
        self.edit.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.edit.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.edit.document().setDocumentMargin(2)
        self.edit.textChanged.connect(self._text_changed)
        self.edit.submit.connect(self.submit)
        self.edit.escape.connect(self._escape)
        self.edit.installEventFilter(self)
        box.addWidget(self.edit)

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        self.attach_button = QPushButton("Attach")
        self.attach_button.setObjectName("FlatButton")
        self.attach_button.setToolTip("Attach documents (PDF, Word, Excel, PowerPoint, text…) or images")
        self.attach_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.attach_button.clicked.connect(self._attach_clicked)
        # With MCP servers configured (``set_mcp_available``), Attach offers their resources too.
        self.attach_menu = QMenu(self.attach_button)
        self.attach_menu.setAccessibleName("Attach")
        self.attach_menu.addAction("Files…", self._choose_files)
        self.attach_menu.addAction("From MCP server…", self.mcpResourcesWanted.emit)
        self._mcp_available = False
        row.addWidget(self.attach_button)
        self.agent_picker = AgentPicker()
        row.addWidget(self.agent_picker)
        self.model_picker = ModelPicker()
        self.model_picker.setObjectName("ModelPicker")
        self.model_picker.popupAboutToShow.connect(self.modelListWanted)
        self.model_picker.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.model_picker.setToolTip("Model for this conversation")
        self.model_picker.activated.connect(self._model_activated)
        row.addWidget(self.model_picker)
        self.compare_button = CompareButton()  # ticks 2–4 models: the next Send asks them all
        row.addWidget(self.compare_button)
        row.addStretch(1)
        self.meter = ContextMeterButton()
        row.addWidget(self.meter)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("SendButton")
        self.send_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.send_button.clicked.connect(self._send_or_stop)
        row.addWidget(self.send_button)
        box.addLayout(row)
        self._button_row = row

        self._grow_timer = QTimer(self)
        self._grow_timer.setSingleShot(True)
        self._grow_timer.timeout.connect(self._fit_height)
        self.edit.fontChanged.connect(lambda: self._grow_timer.start(0))
        self._fit_height()
        self._update_buttons()
        self._update_tokens()

    # -- public -------------------------------------------------------------------------

    def add_beside_send(self, widget: QWidget) -> None:
        """Put another room's control (the voice's microphone) in the button row, before Send."""
        self._button_row.insertWidget(self._button_row.indexOf(self.send_button), widget)

    def insert_at_cursor(self, text: str) -> None:
        """Type ``text`` where the cursor is, a space apart from the words around it (dictation)."""
        cursor = self.edit.textCursor()
        before = self.edit.toPlainText()[: cursor.position()]
        if before and not before[-1].isspace():
            text = " " + text
        cursor.insertText(text)
        self.edit.setTextCursor(cursor)
        self.edit.setFocus()

    def text(self) -> str:
        return self.edit.toPlainText()

    def set_text(self, text: str) -> None:
        self.edit.setPlainText(text)
        cursor = self.edit.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self.edit.setTextCursor(cursor)

    @property
    def editing(self) -> str | None:
        """Id of the prompt being edited, or None when composing a new one."""
        return self._editing

    def begin_edit(self, message_id: str, text: str, hint: str = "") -> None:
        self._editing = message_id
        self.edit_banner.setText(
            hint or "Editing an earlier message — Enter resends it as a new version, Esc cancels."
        )
        self.edit_banner.show()
        self.set_text(text)
        self.edit.setFocus()

    def end_edit(self) -> None:
        if self._editing is not None:
            self._editing = None
            self.edit_banner.hide()

    def accept_sent(self) -> None:
        """The engine accepted the prompt: now the box may be emptied."""
        self.end_edit()
        self.edit.clear()
        self.chips.clear()
        self._update_tokens()
        self.draftChanged.emit()

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.agent_picker.set_busy(busy)
        self._update_buttons()

    def set_held(self, reason: str) -> None:
        """Hold sending (``reason`` is the Send button's tooltip, e.g. "Saving…"); "" releases it."""
        self._held = reason
        self._update_buttons()

    @property
    def held_reason(self) -> str:
        """Why sending is held ("Saving…"), or "" when it is not."""
        return self._held

    def draft(self) -> Draft:
        return Draft(self.text(), tuple(self.chips.ready_items()))

    def set_draft(self, draft: Draft) -> None:
        """Put a saved draft back (text and attachments)."""
        self.set_text(draft.text)
        self.chips.set_items(list(draft.attachments))
        self._update_tokens()
        self.draftChanged.emit()

    @property
    def busy(self) -> bool:
        return self._busy

    def set_history_chars(self, chars: int) -> None:
        self._history_chars = chars
        self._update_tokens()

    def set_models(
        self,
        models: list[ModelChoice],
        current: ModelChoice | None,
        *,
        problem: str = "",
        loading: bool = False,
    ) -> None:
        """Offer ``models`` with the session's ``current`` one selected.

        With no ``current`` model, or a ``problem`` with it (its provider or model was
        removed), the selected entry is "Pick a model" (the problem as its text), so the
        picker never shows a model the next send would not use. After the models come
        a disabled "Loading models…" while the providers are asked (``loading``) and
        "Refresh models", which asks them again (``modelListWanted``).
        """
        self.compare_button.set_models(models)
        entries: list[ModelChoice | None] = list(models)
        wanted = (current.provider, current.model) if current is not None and not problem else None
        if wanted is not None and not any(m is not None and (m.provider, m.model) == wanted for m in entries):
            entries.insert(0, current)
        if wanted is None and (models or problem):
            entries.insert(0, None)
        self._models = entries
        self.model_picker.blockSignals(True)
        self.model_picker.clear()
        for m in entries:
            self.model_picker.addItem(m.label if m is not None else (problem or "Pick a model"))
        if not entries:
            self.model_picker.addItem("No model — add a provider in Settings")
        if loading:
            self.model_picker.addItem(LOADING_MODELS)
            self._disable_item(self.model_picker.count() - 1)
        if entries or loading:
            self._refresh_index = self.model_picker.count()
            self.model_picker.addItem(REFRESH_MODELS)
        else:
            self._refresh_index = -1
        if wanted is not None:
            idx = next(i for i, m in enumerate(entries) if m is not None and (m.provider, m.model) == wanted)
            self.model_picker.setCurrentIndex(idx)
        else:
            self.model_picker.setCurrentIndex(0)
        self._selected_index = self.model_picker.currentIndex()
        self.model_picker.setToolTip(problem or "Model for this conversation")
        self.model_picker.blockSignals(False)
        self._update_tokens()

    def _disable_item(self, index: int) -> None:
        model = self.model_picker.model()
        if isinstance(model, QStandardItemModel) and (item := model.item(index)) is not None:
            item.setEnabled(False)

    def current_model(self) -> ModelChoice | None:
        i = self.model_picker.currentIndex()
        return self._models[i] if 0 <= i < len(self._models) else None

    def attachments(self) -> list[ContextFile | ImageBlock]:
        """What is attached and ready to send (not the files still being read or refused)."""
        return self.chips.ready_items()

    def attach_paths(self, paths: list[Path]) -> None:
        self.chips.add_paths(paths)

    def _attachments_changed(self) -> None:
        self._update_buttons()
        self._update_tokens()
        self.draftChanged.emit()

    def focus_input(self) -> None:
        self.edit.setFocus()

    # -- behaviour ------------------------------------------------------------------------

    def submit(self) -> None:
        text = self.text()
        attached = self.chips.ready_items()
        if self._busy or self._held or self.chips.reading_names() or (not text.strip() and not attached):
            return
        if self.chips.reread_resources():  # MCP resources are sent as they are at send time
            self._send_when_read = True
            return
        self._emit_submitted()

    def _read_for_send(self) -> None:
        """The MCP resources read again for a Send are in: send, unless one could not be read."""
        if not self._send_when_read or self.chips.reading_names():
            return
        self._send_when_read = False
        if not self.chips.resources_failed():
            self._emit_submitted()

    def _emit_submitted(self) -> None:
        text, attached = self.text(), self.chips.ready_items()
        images = tuple(a for a in attached if isinstance(a, ImageBlock))
        context = tuple(a for a in attached if isinstance(a, ContextFile))
        self.submitted.emit(text, images, context)

    def _send_or_stop(self) -> None:
        if self._busy:
            self.stopRequested.emit()
            # The next thing typed is the next message: the button that took the click turns
            # into a disabled Send, and Qt would pass the keyboard on to the conversation menu.
            self.focus_input()
        else:
            self.submit()

    def _escape(self) -> None:
        if self._busy:
            self.stopRequested.emit()
        elif self._editing is not None:
            self.end_edit()
            self.edit.clear()
            self.editCancelled.emit()

    def _model_activated(self, index: int) -> None:
        if index == self._refresh_index:
            # Not a model: ask the providers again and keep showing the session's model.
            self.model_picker.blockSignals(True)
            self.model_picker.setCurrentIndex(self._selected_index)
            self.model_picker.blockSignals(False)
            self.modelListWanted.emit()
            return
        choice = self._models[index] if 0 <= index < len(self._models) else None
        if choice is not None:
            self._selected_index = index
            self.modelChosen.emit(choice)
            self._update_tokens()

    def set_mcp_available(self, available: bool) -> None:
        """Whether Attach opens its menu (files, or an MCP server's resources) or the file dialog."""
        self._mcp_available = available
        self.attach_button.setToolTip(
            "Attach documents, images, or an MCP server's resources"
            if available
            else "Attach documents (PDF, Word, Excel, PowerPoint, text…) or images"
        )

    def _attach_clicked(self) -> None:
        if not self._mcp_available:
            self._choose_files()
            return
        # Popped up (not exec'd): no nested event loop inside the click.
        self.attach_menu.popup(self.attach_button.mapToGlobal(self.attach_button.rect().bottomLeft()))

    def _choose_files(self) -> None:
        from threadline.documents import file_dialog_filter  # the readers load on first use

        files, _ = QFileDialog.getOpenFileNames(self, "Attach files", "", file_dialog_filter())
        if files:
            self.attach_paths([Path(f) for f in files])

    def _text_changed(self) -> None:
        self._update_buttons()
        self._grow_timer.start(0)
        self._update_tokens()
        self.draftChanged.emit()

    def _fit_height(self) -> None:
        fm = QFontMetrics(self.edit.font())
        lines = max(1, int(self.edit.document().size().height()))  # in lines for a plain text layout
        lines = min(lines, MAX_VISIBLE_LINES)
        margins = self.edit.contentsMargins()
        doc_margin = int(self.edit.document().documentMargin() * 2)
        self.edit.setFixedHeight(lines * fm.lineSpacing() + doc_margin + margins.top() + margins.bottom() + 4)

    def _update_buttons(self) -> None:
        if self._busy:
            self.send_button.setText("Stop")
            self.send_button.setToolTip("Stop the reply (Esc)")
            self.send_button.setEnabled(True)
        else:
            reading = self.chips.reading_names()
            wait = f"Reading {', '.join(reading)}… — Send is ready once it is read" if reading else ""
            self.send_button.setText("Send")
            self.send_button.setToolTip(self._held or wait or "Send (Enter)")
            has_content = bool(self.text().strip() or self.chips.ready_items())
            enabled = not self._held and not reading and has_content
            if not enabled and self.send_button.hasFocus():
                self.focus_input()  # not the next widget in the chain (the conversation menu)
            self.send_button.setEnabled(enabled)
        stop = "true" if self._busy else "false"
        if self.send_button.property("stop") != stop:  # re-styling costs a frame's worth: not per key
            self.send_button.setProperty("stop", stop)
            self.send_button.style().unpolish(self.send_button)
            self.send_button.style().polish(self.send_button)

    def _update_tokens(self) -> None:
        attached = self.chips.ready_items()
        draft = estimate_tokens(len(self.text()))
        draft += sum(estimate_tokens_by_chars(a.text) for a in attached if isinstance(a, ContextFile))
        draft += 800 * sum(isinstance(a, ImageBlock) for a in attached)
        self.meter.set_draft_tokens(draft)
        model = self.current_model()
        window = model.context_window if model else None
        self.meter.set_fallback(estimate_tokens(self._history_chars) + draft, window)

    # -- focus styling, drag and drop -------------------------------------------------------

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.edit and event.type() in (QEvent.Type.FocusIn, QEvent.Type.FocusOut):
            self.frame.setProperty("focused", "true" if event.type() == QEvent.Type.FocusIn else "false")
            self.frame.style().unpolish(self.frame)
            self.frame.style().polish(self.frame)
        return super().eventFilter(obj, event)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = local_paths(event.mimeData())
        if paths:
            self.attach_paths(paths)
            event.acceptProposedAction()

    def sizeHint(self) -> QSize:
        return QSize(600, super().sizeHint().height())
