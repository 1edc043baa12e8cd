"""An image of a message at full size: a plain window that scrolls when the image is large.

The chat shows images as thumbnails (a prompt's attachments, what a tool returned);
clicking one opens it here. The image is decoded from the stored message itself, so
nothing is fetched and no temporary file is written.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence, QPixmap, QShortcut
from PySide6.QtWidgets import QDialog, QLabel, QScrollArea, QVBoxLayout, QWidget

from threadline.core.messages import ImageBlock, Message
from threadline.ui.chat.view.document_cache import decode_image
from threadline.ui.chat.view.message_html import shown_images

SCREEN_SHARE = 0.85
"""At most this share of the screen is taken by the window; larger images scroll."""


class ImageViewer(QDialog):
    """One image at its own size (modeless); Esc or Ctrl+W closes it."""

    def __init__(self, image: ImageBlock, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ImageViewer")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        name = image.name or image.media_type or "Image"
        self.setWindowTitle(name)
        self.label = QLabel()
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        decoded = decode_image(image.data)
        if decoded is None:
            self.label.setText("This image cannot be shown: its data does not decode.")
        else:
            self.label.setPixmap(QPixmap.fromImage(decoded))
            self.label.setAccessibleName(f"{name}, {decoded.width()} by {decoded.height()} pixels")
        scroll = QScrollArea()
        scroll.setWidget(self.label)
        scroll.setWidgetResizable(True)
        scroll.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)
        QShortcut(QKeySequence.StandardKey.Close, self, self.close)
        self._fit(decoded.width() if decoded else 320, decoded.height() if decoded else 120)

    def _fit(self, width: int, height: int) -> None:
        screen = QGuiApplication.primaryScreen()
        room = screen.availableGeometry().size() * SCREEN_SHARE if screen is not None else None
        w, h = width + 4, height + 4
        if room is not None:
            w, h = min(w, room.width()), min(h, room.height())
        self.resize(max(w, 200), max(h, 120))


def open_image(parent: QWidget, message: Message | None, href: str) -> ImageViewer | None:
    """Show the image an ``attached-image:<message id>:<index>`` link of ``message`` names."""
    try:
        index = int(href.rsplit(":", 1)[1])
        image = shown_images(message)[index] if message is not None else None
    except (ValueError, IndexError):
        image = None
    if image is None:
        return None
    viewer = ImageViewer(image, parent)
    viewer.show()
    return viewer
