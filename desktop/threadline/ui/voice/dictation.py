"""Dictation in the composer: a microphone button beside Send, and a key held to talk.

Click to start, click again to stop; or hold Ctrl+Shift+Space in the message box and let go.
A pause after speaking also ends it. While the microphone is open the button is red and
shows the time and the level, so it is never open unseen; the text lands in the message box
where the cursor is, for the person to read and send — it is never sent by itself.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QKeyEvent, QPainter, QPainterPath, QPaintEvent, QPen, QPixmap
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from threadline.engine.api import EngineApi
from threadline.ui.common.message_bridge import MessageBridge
from threadline.ui.common.tasks import spawn

PUSH_TO_TALK = (Qt.Key.Key_Space, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
"""Held in the message box: record while it is down."""


def microphone_icon(color: QColor, size: int = 32) -> QIcon:
    """A microphone drawn in ``color``: a capsule on a stand (no icon font needed)."""
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    unit = size / 32
    pen = QPen(color, 2.4 * unit, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    painter.setBrush(color)
    painter.drawRoundedRect(QRectF(11 * unit, 3 * unit, 10 * unit, 17 * unit), 5 * unit, 5 * unit)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    arc = QPainterPath()
    arc.moveTo(QPointF(7 * unit, 14 * unit))
    arc.cubicTo(QPointF(7 * unit, 27 * unit), QPointF(25 * unit, 27 * unit), QPointF(25 * unit, 14 * unit))
    painter.drawPath(arc)
    painter.drawLine(QPointF(16 * unit, 24 * unit), QPointF(16 * unit, 29 * unit))
    painter.end()
    return QIcon(pixmap)


class LevelMeter(QWidget):
    """How loud the microphone hears, as a short bar."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.level = 0.0
        self.setFixedSize(36, 8)
        self.setAccessibleName("Microphone level")

    def set_level(self, level: float) -> None:
        self.level = max(0.0, min(1.0, level * 4))  # speech sits around 0.05–0.25 of full scale
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        track = QColor(self.palette().mid().color())
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(track)
        painter.drawRoundedRect(QRectF(self.rect()), 4, 4)
        painter.setBrush(QColor("#d93025"))
        painter.drawRoundedRect(QRectF(0, 0, self.width() * self.level, self.height()), 4, 4)


class DictationControl(QWidget):
    """The microphone button with its time and level, for one composer."""

    textReady = Signal(str)

    def __init__(self, engine: EngineApi, bridge: MessageBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._engine = engine
        self._bridge = bridge
        self.recording = False
        self.working = False
        self._stop_when_open = False
        self.button = QToolButton(self)
        self.button.setObjectName("DictateButton")
        self.button.setAutoRaise(True)
        self.button.setIconSize(QSize(18, 18))
        self.button.clicked.connect(self.toggle)
        self.time_label = QLabel(self)
        self.time_label.setObjectName("DictationTime")
        self.meter = LevelMeter(self)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.meter)
        layout.addWidget(self.time_label)
        layout.addWidget(self.button)
        self._show_idle()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and not self.recording:
            self.button.setIcon(microphone_icon(self.palette().buttonText().color()))  # the theme changed

    def toggle(self) -> None:
        if self.recording:
            self.stop()
        elif not self.working:
            self.start()

    def start(self) -> None:
        self.working = True
        self.button.setEnabled(False)
        spawn(
            self._engine.voice.start_dictation(self._level),
            tell=self._bridge,
            context="Not recording",
            on_done=lambda _: self._started(),
            on_failed=lambda _err: self._show_idle(),
        )

    def stop(self) -> None:
        if self.recording:
            self._engine.voice.stop_dictation()
        elif self.working:
            self._stop_when_open = True  # the key was let go before the microphone opened

    def _started(self) -> None:
        self.recording = True
        self.button.setEnabled(True)
        self.button.setIcon(microphone_icon(QColor("#d93025")))
        self.button.setToolTip("Stop recording (click, or let go of Ctrl+Shift+Space)")
        self.button.setAccessibleName("Stop dictation")
        self.time_label.setText("0:00")
        self.time_label.show()
        self.meter.show()
        spawn(
            self._engine.voice.finish_dictation(),
            tell=self._bridge,
            context="Dictation not turned into text",
            on_done=self._transcribed,
            on_failed=lambda _err: self._show_idle(),
        )
        if self._stop_when_open:
            self.stop()

    def _level(self, level: float, seconds: float) -> None:
        if self.recording:
            self.meter.set_level(level)
            whole = int(seconds)
            self.time_label.setText(f"{whole // 60}:{whole % 60:02d}")
            self.time_label.setAccessibleName(f"Recording, {whole} seconds")

    def _transcribed(self, text: str) -> None:
        self._show_idle()
        if text:
            self.textReady.emit(text)

    def _show_idle(self) -> None:
        self.recording = False
        self.working = False
        self._stop_when_open = False
        self.button.setEnabled(True)
        self.button.setIcon(microphone_icon(self.palette().buttonText().color()))
        self.button.setToolTip("Dictate (click, or hold Ctrl+Shift+Space in the message box)")
        self.button.setAccessibleName("Dictate")
        self.time_label.hide()
        self.meter.hide()
        self.meter.set_level(0.0)


class PushToTalk(QObject):
    """Ctrl+Shift+Space held in the message box records; letting go stops (key repeats ignored)."""

    def __init__(self, control: DictationControl, parent: QObject) -> None:
        super().__init__(parent)
        self._control = control

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        pressed_or_released = (QEvent.Type.KeyPress, QEvent.Type.KeyRelease)
        if event.type() not in pressed_or_released or not isinstance(event, QKeyEvent):
            return False
        key, modifiers = PUSH_TO_TALK
        if event.key() != key:
            return False
        if event.type() == QEvent.Type.KeyPress and event.modifiers() == modifiers:
            if not event.isAutoRepeat() and not self._control.recording and not self._control.working:
                self._control.start()
            return True
        busy = self._control.recording or self._control.working
        if event.type() == QEvent.Type.KeyRelease and not event.isAutoRepeat() and busy:
            self._control.stop()
            return True
        return False
