"""The reading bar: in the status bar while a reply is read aloud, with Pause and Stop.

It says which sentence of how many is being read, so a person who cannot see the chat knows
where the voice is; its buttons have accessible names and the bar is gone as soon as the
voice falls silent.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from threadline.engine.voice import ReadingState


class ReadingBar(QWidget):
    pauseClicked = Signal()
    resumeClicked = Signal()
    stopClicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ReadingBar")
        self.label = QLabel(self)
        self.pause_button = QToolButton(self)
        self.pause_button.setObjectName("ReadingPause")
        self.stop_button = QToolButton(self)
        self.stop_button.setText("Stop")
        self.stop_button.setObjectName("ReadingStop")
        self.stop_button.setAccessibleName("Stop reading aloud")
        self.stop_button.setToolTip("Stop reading aloud")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 8, 0)
        layout.setSpacing(6)
        layout.addWidget(self.label)
        layout.addWidget(self.pause_button)
        layout.addWidget(self.stop_button)
        self._paused = False
        self.pause_button.clicked.connect(self._pause_or_resume)
        self.stop_button.clicked.connect(self.stopClicked)
        self.hide()

    def show_state(self, state: ReadingState) -> None:
        if not state.active:
            self.hide()
            return
        self._paused = state.paused
        where = (
            f"sentence {state.sentence + 1} of {state.sentences}"
            if state.sentences
            else "waiting for the reply"
        )
        if state.streaming and state.sentences:
            where += " so far"
        self.label.setText(f"{'Paused' if state.paused else 'Reading aloud'} · {where}")
        self.label.setAccessibleName(self.label.text())
        self.pause_button.setText("Resume" if state.paused else "Pause")
        self.pause_button.setAccessibleName("Resume reading aloud" if state.paused else "Pause reading aloud")
        self.pause_button.setToolTip(self.pause_button.accessibleName())
        self.show()

    def _pause_or_resume(self) -> None:
        (self.resumeClicked if self._paused else self.pauseClicked).emit()
