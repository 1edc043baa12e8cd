"""The composer's attachments: one chip per file, with its state — reading, attached, refused.

A file dropped, pasted or picked becomes a chip at once. Documents (PDF, Word,
Excel, PowerPoint, HTML, CSV, large text files) are read off the GUI thread: their
chip spins ("report.pdf · reading…") until the text is in, then says what will be
sent ("report.pdf · 12 pages · ≈4,300 tokens"). A file that cannot be attached turns
its chip into an error that names the problem ("This PDF is password-protected…");
it is never sent. Removing a chip while it reads stops the reading. Small text files
and images are read on the spot (a few hundred kilobytes decode within a frame).

Only attached items (``ready_items``) are part of the draft and of the prompt; the
composer holds sending while anything is still being read (``reading_names``).
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QEvent, QMimeData, QObject, QRectF, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QColor, QDragMoveEvent, QDropEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QWidget

from threadline.core.messages import ContextFile, ImageBlock
from threadline.ui.common.announce import announce
from threadline.ui.common.flow_layout import FlowLayout
from threadline.ui.common.tasks import LogOnly, spawn

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from threadline.documents import ExtractedDocument

log = logging.getLogger("threadline.ui.chat.attachments")

Attachment = ContextFile | ImageBlock

MAX_IMAGE_FILE = 10_000_000
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
BADGES = {
    "pdf": "PDF",
    "docx": "DOC",
    "xlsx": "XLS",
    "csv": "CSV",
    "pptx": "PPT",
    "markdown": "MD",
    "html": "HTML",
    "text": "TXT",
}
ERROR_WIDTH = 420
"""An error chip wraps its message at this width instead of widening the composer."""


def read_image(path: Path) -> ImageBlock:
    """An image file as a base64 image part; ``DocumentError`` when it cannot be attached."""
    from threadline.documents import DocumentError

    try:
        size = path.stat().st_size
        if size > MAX_IMAGE_FILE:
            raise DocumentError(f"{path.name} is larger than {MAX_IMAGE_FILE // 1_000_000} MB.")
        data = path.read_bytes()
    except OSError as err:
        raise DocumentError(f"{path.name} cannot be read ({err.strerror or err}).") from err
    return ImageBlock(IMAGE_TYPES[path.suffix.lower()], base64.b64encode(data).decode("ascii"), path.name)


def local_paths(mime: QMimeData) -> list[Path]:
    """Files in dropped or pasted data: URLs of local files, or text that is only ``file://`` URLs."""
    if mime.hasUrls():
        return [Path(u.toLocalFile()) for u in mime.urls() if u.isLocalFile()]
    if mime.hasText():
        lines = [line.strip() for line in mime.text().splitlines() if line.strip()]
        if lines and all(line.startswith("file://") for line in lines):
            urls = [QUrl(line) for line in lines]
            paths = [Path(u.toLocalFile()) for u in urls if u.isValid() and u.isLocalFile()]
            if len(paths) == len(lines) and all(p.is_file() for p in paths):
                return paths
    return []


class ChipState(StrEnum):
    READING = "reading"
    READY = "ready"
    FAILED = "failed"


@dataclass(eq=False)
class Entry:
    """One chip's file: what it is now, and the reading under way (if any)."""

    name: str
    state: ChipState
    item: Attachment | None = None
    error: str = ""
    notes: tuple[str, ...] = ()
    task: asyncio.Task[Any] | None = None
    source: tuple[str, str] | None = None
    """An MCP resource's (server, URI): read from the server, not from a file."""
    changed: bool = False
    """The server said the resource changed since it was attached (and it was read again)."""
    reader: Callable[[], Awaitable[list[Attachment]]] | None = None
    """Reads an MCP resource again (at send time, and when the server says it changed)."""


def chip_text(entry: Entry) -> str:
    if entry.state is ChipState.READING:
        return f"{entry.name} · reading…"
    if entry.state is ChipState.FAILED:
        return entry.error
    changed = " · changed, read again" if entry.changed else ""
    if isinstance(entry.item, ImageBlock):
        return f"{entry.name} · image{changed}"
    assert isinstance(entry.item, ContextFile)
    from threadline.documents import describe_context_file  # loaded with the first attachment

    return describe_context_file(entry.item) + changed


class Spinner(QWidget):
    """A small turning arc: the file is still being read."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFixedSize(12, 12)
        self._angle = 0
        self._timer = QTimer(self)
        self._timer.setInterval(80)
        self._timer.timeout.connect(self._turn)
        self._timer.start()

    def _turn(self) -> None:
        self._angle = (self._angle + 30) % 360
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        colour = QColor(self.palette().color(self.foregroundRole()))
        pen = QPen(colour, 1.6)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(pen)
        painter.drawArc(QRectF(1.5, 1.5, 9, 9), -self._angle * 16, 270 * 16)


class AttachmentChip(QFrame):
    removeClicked = Signal(object)  # Entry

    def __init__(self, entry: Entry, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entry = entry
        self.setObjectName("AttachmentChip")
        self.setProperty("state", entry.state.value)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 2, 2, 2)
        layout.setSpacing(6)
        if entry.state is ChipState.READING:
            self.spinner: Spinner | None = Spinner()
            layout.addWidget(self.spinner)
        else:
            self.spinner = None
            badge = QLabel("!" if entry.state is ChipState.FAILED else self._badge())
            badge.setObjectName("AttachmentBadge")
            font = badge.font()
            font.setBold(True)
            font.setPointSizeF(max(6.0, font.pointSizeF() * 0.8))
            badge.setFont(font)
            layout.addWidget(badge)
        self.label = QLabel(chip_text(entry))
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        if entry.state is ChipState.FAILED:
            self.label.setWordWrap(True)  # one line when it fits, wrapped at ERROR_WIDTH when not
            width = self.label.fontMetrics().horizontalAdvance(self.label.text()) + 2
            self.label.setMinimumWidth(min(width, ERROR_WIDTH))
            self.label.setMaximumWidth(ERROR_WIDTH)
            self.label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        layout.addWidget(self.label)
        tip = [chip_text(entry), *entry.notes]
        if entry.state is ChipState.FAILED:
            tip = ["Not attached: " + entry.error]
        self.setToolTip("\n".join(tip))
        self.setAccessibleName(tip[0])
        close = QToolButton()
        close.setText("×")
        close.setToolTip(
            "Stop reading and remove" if entry.state is ChipState.READING else "Remove attachment"
        )
        close.setAccessibleName(f"Remove {entry.name}")
        close.setAutoRaise(True)
        close.setCursor(Qt.CursorShape.PointingHandCursor)
        close.clicked.connect(lambda: self.removeClicked.emit(self.entry))
        layout.addWidget(close)
        self.close_button = close

    def _badge(self) -> str:
        item = self.entry.item
        if self.entry.source is not None:
            return "MCP"
        if isinstance(item, ImageBlock):
            return "IMG"
        return BADGES.get(item.document_type if item is not None else "", "TXT")


class AttachmentTray(QWidget):
    """The chips above the composer's text box; hidden while there are none."""

    changed = Signal()
    """The attached items changed (the draft is saved)."""
    readingChanged = Signal()
    """A file started or finished being read (the Send button follows)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._entries: list[Entry] = []
        self._layout = FlowLayout(self, spacing=6)
        self.hide()

    # -- queries ------------------------------------------------------------------------

    def entries(self) -> list[Entry]:
        return list(self._entries)

    def ready_items(self) -> list[Attachment]:
        return [e.item for e in self._entries if e.state is ChipState.READY and e.item is not None]

    def reading_names(self) -> list[str]:
        return [e.name for e in self._entries if e.state is ChipState.READING]

    def chips(self) -> list[AttachmentChip]:
        return [w for w in self.findChildren(AttachmentChip) if not w.property("retired")]

    # -- changes --------------------------------------------------------------------------

    def add_paths(self, paths: list[Path]) -> None:
        for path in paths:
            self._entries.append(self._start(path))
        self._rebuild()
        self.changed.emit()
        self.readingChanged.emit()

    def add_resource(self, server: str, uri: str, read: Callable[[], Awaitable[list[Attachment]]]) -> None:
        """Attach an MCP server's resource: its chip reads (``read()``) until the contents are in."""
        from threadline.core.mcp_catalog import resource_name

        notes = (f"From MCP server {server}: {uri}",)
        entry = Entry(
            resource_name(server, uri), ChipState.READING, notes=notes, source=(server, uri), reader=read
        )
        self._entries.append(entry)
        self._read_resource(entry, read)
        self._rebuild()
        self.changed.emit()
        self.readingChanged.emit()

    def resource_changed(
        self, server: str, uri: str, read: Callable[[], Awaitable[list[Attachment]]]
    ) -> None:
        """The server says an attached resource changed: its chip is marked and it is read again."""
        for entry in self._entries:
            if entry.source == (server, uri) and entry.task is None:
                entry.changed = True
                self._read_resource(entry, read)
        self._rebuild()
        self.readingChanged.emit()

    def reread_resources(self) -> bool:
        """Read every attached MCP resource again (Send: what goes is the resource as it is now);
        False when there is none to read."""
        entries = [e for e in self._entries if e.reader is not None and e.task is None]
        for entry in entries:
            assert entry.reader is not None
            self._read_resource(entry, entry.reader)
        if entries:
            self._rebuild()
            self.readingChanged.emit()
        return bool(entries)

    def resources_failed(self) -> bool:
        """Whether an MCP resource could not be read (Send then waits: the chip says why)."""
        return any(e.source is not None and e.state is ChipState.FAILED for e in self._entries)

    def resources(self) -> list[tuple[str, str]]:
        """The (server, URI) of each MCP resource attached."""
        return [e.source for e in self._entries if e.source is not None]

    def _read_resource(self, entry: Entry, read: Callable[[], Awaitable[list[Attachment]]]) -> None:
        async def first() -> Attachment:
            items = await read()
            return items[0]

        entry.state = ChipState.READING
        entry.task = spawn(
            first(),
            on_done=lambda item: self._resource_read(entry, item),
            tell=LogOnly("MCP resource not read", logging.INFO),  # the chip shows the failure
            on_failed=lambda err: self._failed(entry, err),
            name=f"read MCP resource {entry.name}",
        )

    def _resource_read(self, entry: Entry, item: Attachment) -> None:
        if not shiboken6.isValid(self) or entry not in self._entries:
            return
        entry.state, entry.item, entry.task = ChipState.READY, item, None
        self._rebuild()
        self.changed.emit()
        self.readingChanged.emit()
        announce(self, f"Attached {chip_text(entry)}")

    def add_items(self, items: list[Attachment]) -> None:
        """Attach items already read (an MCP prompt's images and embedded resources)."""
        self._entries += [Entry(item.name, ChipState.READY, item) for item in items]
        self._rebuild()
        self.changed.emit()
        self.readingChanged.emit()

    def set_items(self, items: list[Attachment]) -> None:
        """Show ``items`` as attached (a restored draft); readings under way are stopped."""
        self._stop_all()
        self._entries = [Entry(item.name, ChipState.READY, item) for item in items]
        self._rebuild()
        self.readingChanged.emit()

    def clear(self) -> None:
        self.set_items([])

    def remove(self, entry: Entry) -> None:
        if entry not in self._entries:
            return
        if entry.task is not None:
            entry.task.cancel()
        self._entries.remove(entry)
        self._rebuild()
        self.changed.emit()
        self.readingChanged.emit()

    # -- reading ----------------------------------------------------------------------------

    def _start(self, path: Path) -> Entry:
        # The readers load with the first file attached, not with every chat opened: most
        # chats never attach one, and what a chat's opening loads stays for the whole run.
        from threadline.documents import DocumentError, extract_document, is_quick

        name = path.name
        try:
            if path.suffix.lower() in IMAGE_TYPES:
                return Entry(name, ChipState.READY, read_image(path))
            if is_quick(path):
                document = extract_document(path)
                return Entry(name, ChipState.READY, document.to_context(), notes=document.notes)
        except DocumentError as err:
            return Entry(name, ChipState.FAILED, error=err.user_message)
        entry = Entry(name, ChipState.READING)
        entry.task = spawn(
            _read(path),
            on_done=lambda document: self._finished(entry, document),
            # The chip itself shows the failure (it is the item's state, as a failed row
            # would be); no message besides it.
            tell=LogOnly("attachment not read", logging.INFO),
            on_failed=lambda err: self._failed(entry, err),
            name=f"read attachment {name}",
        )
        return entry

    def _finished(self, entry: Entry, document: ExtractedDocument) -> None:
        if not shiboken6.isValid(self) or entry not in self._entries:
            return
        entry.state, entry.item, entry.notes, entry.task = (
            ChipState.READY,
            document.to_context(),
            document.notes,
            None,
        )
        self._rebuild()
        self.changed.emit()
        self.readingChanged.emit()
        announce(self, f"Attached {chip_text(entry)}")

    def _failed(self, entry: Entry, err: BaseException) -> None:
        if not shiboken6.isValid(self) or entry not in self._entries:
            return
        entry.state, entry.error, entry.task = ChipState.FAILED, getattr(err, "user_message", str(err)), None
        self._rebuild()
        self.readingChanged.emit()
        announce(self, f"Not attached: {entry.error}", assertive=True)

    def _stop_all(self) -> None:
        for entry in self._entries:
            if entry.task is not None:
                entry.task.cancel()

    def _rebuild(self) -> None:
        while (item := self._layout.takeAt(0)) is not None:
            widget = item.widget()
            if widget is not None:
                widget.setProperty("retired", True)
                widget.hide()
                widget.deleteLater()
        for entry in self._entries:
            chip = AttachmentChip(entry, self)
            chip.removeClicked.connect(self.remove)
            self._layout.addWidget(chip)
            chip.show()
        self.setVisible(bool(self._entries))
        self.updateGeometry()


async def _read(path: Path) -> ExtractedDocument:
    """Read ``path`` in a worker; a bug in a reader is logged and told as a refusal, never a hang."""
    from threadline.documents import DocumentError, extract_in_thread

    try:
        return await extract_in_thread(path)
    except DocumentError:
        raise
    except Exception as err:
        log.exception("reading the attachment %s failed unexpectedly", path.name)
        raise DocumentError(
            f"{path.name} could not be read because of an unexpected problem; the details are in the log."
        ) from err


class FileDropTarget(QObject):
    """Lets files dropped anywhere on a widget (the conversation, say) be attached like on the composer."""

    def __init__(self, widget: QWidget, attach: Callable[[list[Path]], None]) -> None:
        super().__init__(widget)
        self._attach = attach
        widget.setAcceptDrops(True)
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove) and isinstance(event, QDragMoveEvent):
            if local_paths(event.mimeData()):
                event.acceptProposedAction()
                return True
        elif (
            kind == QEvent.Type.Drop
            and isinstance(event, QDropEvent)
            and (paths := local_paths(event.mimeData()))
        ):
            self._attach(paths)
            event.acceptProposedAction()
            return True
        return super().eventFilter(watched, event)
