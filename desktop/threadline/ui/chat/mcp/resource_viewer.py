"""A read-only window on a resource a tool result linked or embedded (``result_resources``).

Text is shown as text (selectable, not editable), an image as an image scaled to fit. A
binary resource arrives as the line ``read_resource`` makes of it (its type and size), and
Save as… (``saveRequested``) writes its bytes to a file.
"""

from __future__ import annotations

import base64
import binascii
import contextlib

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from threadline.core.messages import ContextFile, ImageBlock, ResourceRef

IMAGE_LIMIT = 800
"""The largest side, in pixels, an image is shown at."""


class ResourceViewer(QDialog):
    saveRequested = Signal()

    def __init__(self, ref: ResourceRef, items: list[ContextFile | ImageBlock], parent: QWidget) -> None:
        super().__init__(parent)
        self.setWindowTitle(ref.label)
        self.resize(640, 480)
        layout = QVBoxLayout(self)
        uri = QLabel(f"{ref.server}: {ref.uri}")
        uri.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(uri)
        self.texts: list[QPlainTextEdit] = []
        self.images: list[QLabel] = []
        for item in items:
            if isinstance(item, ImageBlock):
                layout.addWidget(self._image(item))
            else:
                text = QPlainTextEdit(item.text)
                text.setReadOnly(True)
                self.texts.append(text)
                layout.addWidget(text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self.save_button = buttons.addButton("Save as…", QDialogButtonBox.ButtonRole.ActionRole)
        self.save_button.clicked.connect(self.saveRequested)
        layout.addWidget(buttons)

    def _image(self, image: ImageBlock) -> QLabel:
        label = QLabel()
        pixmap = QPixmap()
        with contextlib.suppress(binascii.Error, ValueError):
            pixmap.loadFromData(base64.b64decode(image.data, validate=True))
        if pixmap.isNull():
            label.setText(f"[{image.media_type}: not an image Threadline can show]")
        else:
            label.setPixmap(
                pixmap.scaled(IMAGE_LIMIT, IMAGE_LIMIT, Qt.AspectRatioMode.KeepAspectRatio)
                if max(pixmap.width(), pixmap.height()) > IMAGE_LIMIT
                else pixmap
            )
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.images.append(label)
        return label

    def text(self) -> str:
        """Every text part, joined (what the user reads)."""
        return "\n".join(t.toPlainText() for t in self.texts)
