"""The branch map as a side panel of a chat tab: a header, the map, its legend, and what a click does.

The panel listens to the tab's live conversation and lays the map out again when the
tree or the shown path changes — at most once per ``RELAYOUT_MS``, however fast
messages arrive, and never for a streamed token (``TextDelta`` only grows a message's
text, which the map does not draw). A hidden panel only notes that it is out of date
and catches up when shown.

Clicking a message (or Enter on it) shows it: one on the shown path is scrolled to in
the chat; one on another branch makes that branch the shown path —
``engine.controls.set_active_leaf`` with the newest message under it, as flipping a version
does — and the chat then scrolls to it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSplitter, QToolButton, QVBoxLayout, QWidget

from threadline.engine import events
from threadline.engine.api import EngineApi, LiveConversationApi
from threadline.ui.chat.branch_map.branch_map import BranchMap
from threadline.ui.chat.branch_map.branch_map_legend import BranchMapLegend
from threadline.ui.common.tasks import spawn
from threadline.ui.common.theme import ThemeColors

log = logging.getLogger("threadline.ui.chat.branch_map.branch_map_panel")

MIN_WIDTH = 170
PREFERRED_WIDTH = 320
RELAYOUT_MS = 120
"""The most often the map is laid out again while messages arrive (a tool loop adds several a second)."""

_RELAYOUT_EVENTS: tuple[type, ...] = tuple(
    kind
    for name in (
        "MessageAdded",
        "ActivePathChanged",
        "CheckpointsChanged",
        "MessagesRemoved",
        "MessagesRestored",
        "SessionUpdated",
    )
    if isinstance(kind := getattr(events, name, None), type)
)
"""Events after which the tree, the shown path or the checkpoints may differ (looked up by name:
some are newer than this panel and others may be renamed; a missing one is simply not awaited)."""


class BranchMapPanel(QFrame):
    """Header ("Branch map", counts, close), the painted map, and the legend."""

    scrollRequested = Signal(str)
    """Show this message in the chat (it is on the shown path now)."""
    closeRequested = Signal()

    def __init__(
        self, engine: EngineApi, live: LiveConversationApi, colors: ThemeColors, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("BranchMapPanel")
        self.setAccessibleName("Branch map panel")
        self.setMinimumWidth(MIN_WIDTH)
        self.engine = engine
        self.live = live
        self.map = BranchMap()
        self.legend = BranchMapLegend()
        self.title = QLabel("Branch map")
        self.title.setObjectName("BranchMapTitle")
        self.counts = QLabel()
        self.counts.setObjectName("BranchMapCounts")
        self.counts.setWordWrap(True)
        self.close_button = QToolButton()
        self.close_button.setObjectName("BranchMapClose")
        self.close_button.setText("×")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Hide the branch map (Ctrl+Shift+B)")
        self.close_button.setAccessibleName("Hide the branch map")
        self.close_button.clicked.connect(self.closeRequested.emit)

        words = QVBoxLayout()
        words.setContentsMargins(0, 0, 0, 0)
        words.setSpacing(0)
        words.addWidget(self.title)
        words.addWidget(self.counts)
        header = QHBoxLayout()
        header.setContentsMargins(12, 8, 6, 6)
        header.setSpacing(8)
        header.addLayout(words, 1)
        header.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(header)
        layout.addWidget(self.map, 1)
        layout.addWidget(self.legend)

        self._dirty = True
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(RELAYOUT_MS)
        self._timer.timeout.connect(self.refresh)
        self.relayouts = 0
        """How many times the map was laid out (tests read it)."""
        self.map.nodeActivated.connect(self.show_message)
        self._unsubscribe: Callable[[], None] | None = live.subscribe(self._event)
        self.set_colors(colors)
        if not self.isHidden():
            self.refresh()

    # -- life -----------------------------------------------------------------------------

    def detach(self) -> None:
        """Stop listening (the tab closes; the conversation lives on in the engine)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._timer.stop()

    def set_colors(self, colors: ThemeColors) -> None:
        self.map.set_colors(colors)
        self.legend.set_colors(colors)
        self.setStyleSheet(
            f"#BranchMapPanel {{ background: {colors.base}; border-left: 1px solid {colors.border}; }}"
            f"#BranchMapTitle {{ color: {colors.text}; font-weight: 600; }}"
            f"#BranchMapCounts {{ color: {colors.muted}; }}"
            f"#BranchMapClose {{ color: {colors.muted}; font-size: 15px; padding: 0 4px; border: none; }}"
            f"#BranchMapClose:hover {{ color: {colors.text}; background: {colors.hover}; "
            "border-radius: 4px; }"
        )

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._claim_width()
        if self._dirty:
            self.refresh()

    def _claim_width(self) -> None:
        """A splitter gives a widget that was hidden no room: take a sensible share when shown."""
        splitter = self.parentWidget()
        if not isinstance(splitter, QSplitter) or self.width() >= MIN_WIDTH:
            return
        index = splitter.indexOf(self)
        sizes = splitter.sizes()
        total = sum(sizes)
        share = max(MIN_WIDTH, min(PREFERRED_WIDTH, total // 3))
        others = [i for i in range(len(sizes)) if i != index]
        if not others or total <= share:
            return
        sizes[index] = share
        rest = total - share
        weight = sum(sizes[i] for i in others) or len(others)
        for i in others:
            sizes[i] = max(1, rest * (sizes[i] or 1) // weight)
        splitter.setSizes(sizes)

    # -- following the conversation -----------------------------------------------------

    def _event(self, event: events.ConversationEvent) -> None:
        if isinstance(event, _RELAYOUT_EVENTS):
            self._dirty = True
            if self.isVisible() and not self._timer.isActive():
                self._timer.start()
        elif isinstance(event, events.MessageChanged) and self.isVisible():
            self.map.viewport().update()  # a reply finished or failed: its dot changes, not the layout

    def refresh(self) -> None:
        """Lay the map out from the conversation's tree now."""
        self._timer.stop()
        self._dirty = False
        self.relayouts += 1
        if self.relayouts == 1:
            self.map.set_tree(self.live.conversation.tree)  # held by reference from now on
        else:
            self.map.relayout()
        layout = self.map.tree_layout
        forks = layout.branch_count
        messages = f"{len(layout):,} message{'s' if len(layout) != 1 else ''}"
        self.counts.setText(f"{messages} · {forks:,} branch{'es' if forks != 1 else ''}")

    # -- clicks -----------------------------------------------------------------------------

    def show_message(self, message_id: str) -> None:
        """Show ``message_id`` in the chat, switching to its branch when it is not on the shown path."""
        layout = self.map.tree_layout
        node = layout.index_of.get(message_id)
        if node is None:
            return
        if layout.on_active_path[node]:
            self.scrollRequested.emit(message_id)
            return
        tree = self.live.conversation.tree
        if message_id not in tree:
            return
        leaf = tree.newest_leaf_under(message_id)

        def shown(_: None) -> None:
            self.refresh()  # the click should feel instant, not wait for the throttle
            self.scrollRequested.emit(message_id)

        spawn(
            self.engine.controls.set_active_leaf(self.live.session_id, leaf),
            tell=self,
            on_done=shown,
            context="Could not show that branch",
            session_id=self.live.session_id,
        )

    def focus_map(self) -> None:
        self.map.setFocus(Qt.FocusReason.ShortcutFocusReason)
