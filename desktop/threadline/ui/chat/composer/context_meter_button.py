"""The context meter in the composer: tokens of the next request against the model's window.

The button shows the total ("≈ 12.3k / 128k") and turns to the warning colour
shortly before the point where the next send compacts, and to the error colour at
or past it. A click opens the breakdown: each part of the request (system prompt
and agent, sticky context, summary, conversation, tool definitions, your message),
the window, where compaction starts, and what the chat has used and cost so far.

The parts other than the draft come from the engine (``EngineApi.context_meter``),
refreshed when the conversation changes; the draft is counted here on every key,
so typing never waits for the engine. Reaching the warning level is announced to
screen readers once per crossing.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from threadline.core.meter import ContextMeter, MeterLevel, MeterPart
from threadline.ui.common.announce import announce


def short_count(n: int) -> str:
    """``12.3k`` / ``1.2M``: a token count short enough for the composer's row."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M".replace(".0M", "M")
    if n >= 1000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return str(n)


LEVEL_WORDS = {
    MeterLevel.OK: "",
    MeterLevel.WARNING: "close to the point where older messages are summarised",
    MeterLevel.FULL: "full: the next message compacts the conversation first",
}


class ContextMeterButton(QToolButton):
    """The meter; ``compactRequested`` asks the tab to compact now (from the breakdown)."""

    compactRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ContextMeter")
        self.setAutoRaise(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self._meter: ContextMeter | None = None
        self._draft = 0
        self._fallback: tuple[int, int | None] = (0, None)
        self._usage_text = ""
        self._announced = MeterLevel.OK
        self._popup: MeterBreakdown | None = None
        self.clicked.connect(self.show_breakdown)
        self._refresh()

    # -- inputs -------------------------------------------------------------------------

    def set_meter(self, meter: ContextMeter | None) -> None:
        """The engine's figures for everything but the draft (``None``: not known yet)."""
        self._meter = meter
        self._refresh()

    def set_draft_tokens(self, tokens: int) -> None:
        self._draft = tokens
        self._refresh()

    def set_fallback(self, tokens: int, window: int | None) -> None:
        """A rough total (conversation and draft) to show until the engine's figures arrive."""
        self._fallback = (tokens, window)
        if self._meter is None:
            self._refresh()

    def set_usage_text(self, text: str) -> None:
        """What the chat has used and cost so far, shown under the breakdown."""
        self._usage_text = text

    def usage_text(self) -> str:
        return self._usage_text

    # -- state --------------------------------------------------------------------------

    def current(self) -> ContextMeter | None:
        """The engine's figures with the draft counted in, or ``None`` before they arrive."""
        if self._meter is None:
            return None
        parts = tuple((p, self._draft if p is MeterPart.PROMPT else t) for p, t in self._meter.parts)
        return replace(self._meter, parts=parts)

    def level(self) -> MeterLevel:
        meter = self.current()
        return meter.level if meter is not None else MeterLevel.OK

    def _refresh(self) -> None:
        meter = self.current()
        if meter is None:
            total, window = self._fallback
        else:
            total, window = meter.total, meter.window
        self.setText(
            f"≈ {short_count(total)} / {short_count(window)}" if window else f"≈ {short_count(total)}"
        )
        level = meter.level if meter is not None else MeterLevel.OK
        if self.property("level") != level.value:
            self.setProperty("level", level.value)
            self.style().unpolish(self)
            self.style().polish(self)
        words = LEVEL_WORDS[level]
        of_window = (
            f" of the model's {window:,}-token window" if window else " (the model's window is unknown)"
        )
        summary = f"Context: about {total:,} tokens{of_window}"
        self.setAccessibleName("Context meter")
        self.setAccessibleDescription(summary + (f"; {words}" if words else ""))
        self.setToolTip(summary + (f" — {words}" if words else "") + ". Click for the breakdown.")
        if level is not MeterLevel.OK and level is not self._announced:
            announce(self, f"Context {words}.")
        self._announced = level

    # -- breakdown ----------------------------------------------------------------------

    def show_breakdown(self) -> None:
        meter = self.current()
        self._popup = MeterBreakdown(meter, self._usage_text, self)
        self._popup.compactRequested.connect(self.compactRequested)
        size = self._popup.sizeHint()
        corner = self.mapToGlobal(QPoint(self.width() - size.width(), -size.height() - 4))
        self._popup.move(corner)
        self._popup.show()


class MeterBreakdown(QFrame):
    """The popup listing each part of the next request and what the chat has used so far."""

    compactRequested = Signal()

    def __init__(self, meter: ContextMeter | None, usage_text: str, parent: QWidget) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # each click builds a fresh one
        self.setObjectName("MeterBreakdown")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Context breakdown")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        title = QLabel("<b>What the next request holds</b> (estimated tokens)")
        layout.addWidget(title)
        if meter is None:
            layout.addWidget(QLabel("Not known yet: open the chat's model first."))
        else:
            layout.addLayout(self._parts_grid(meter))
            layout.addWidget(QLabel(self._window_text(meter)))
        if usage_text:
            used = QLabel(usage_text)
            used.setObjectName("MeterUsage")
            used.setWordWrap(True)
            layout.addWidget(used)
        self.compact_button = QPushButton("Compact now")
        self.compact_button.setObjectName("MeterCompactNow")
        self.compact_button.setToolTip("Summarise older messages so later requests carry the summary instead")
        self.compact_button.clicked.connect(self._compact)
        layout.addWidget(self.compact_button, alignment=Qt.AlignmentFlag.AlignRight)

    def _parts_grid(self, meter: ContextMeter) -> QGridLayout:
        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        scale = meter.window or max(meter.total, 1)
        for row, (part, tokens) in enumerate(meter.parts):
            name = QLabel(part.value)
            count = QLabel(f"{tokens:,}")
            count.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            bar = QProgressBar()
            bar.setTextVisible(False)
            bar.setFixedHeight(6)
            bar.setRange(0, 1000)
            bar.setValue(min(1000, round(1000 * tokens / scale)))
            bar.setAccessibleName(f"{part.value}: {tokens:,} tokens")
            grid.addWidget(name, row, 0)
            grid.addWidget(count, row, 1)
            grid.addWidget(bar, row, 2)
        total_row = len(meter.parts)
        grid.addWidget(QLabel("<b>Total</b>"), total_row, 0)
        total = QLabel(f"<b>{meter.total:,}</b>")
        total.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        grid.addWidget(total, total_row, 1)
        return grid

    @staticmethod
    def _window_text(meter: ContextMeter) -> str:
        if not meter.window:
            return "The model's context window is not known (Settings can set it)."
        text = f"Window: {meter.window:,} tokens"
        if meter.compact_at is not None:
            text += f"; older messages are summarised from about {meter.compact_at:,}"
        words = LEVEL_WORDS[meter.level]
        return text + (f" — {words}." if words else ".")

    def _compact(self) -> None:
        self.close()
        self.compactRequested.emit()
