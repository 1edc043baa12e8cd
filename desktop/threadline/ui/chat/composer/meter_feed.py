"""Keeps a tab's figures fresh: the context meter, each reply's cost, the chat's usage so far.

The engine computes them from stored history (``EngineApi.context_meter``, ``usage``,
``price_book``); this asks again, coalesced, whenever the conversation changes —
a message added, a reply finished, the turn's state, the session's agent or model, and the
saved memories (``MemoriesChanged``, from this window or, through the change feed, another).
A failed refresh leaves the last figures in place and is logged: a meter that is a
moment old is better than an error banner about a meter.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

import shiboken6
from PySide6.QtCore import QObject, QTimer

from threadline.core.meter import ContextMeter
from threadline.core.usage import PriceLookup, format_cost, replies
from threadline.engine.api import EngineApi
from threadline.engine.events import MemoriesChanged, SessionEvent
from threadline.engine.usage_report import PriceBook, SessionUsage
from threadline.ui.chat.composer.context_meter_button import ContextMeterButton
from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.chat.view.conversation_model import ConversationModel
from threadline.ui.common.tasks import LogOnly, spawn

log = logging.getLogger("threadline.ui")

_QUIET = LogOnly("could not refresh the context meter", logging.INFO)
"""The meter is filled again at the next change; a failed read is not worth a message."""

REFRESH_DELAY_MS = 150
"""Changes within this time (a burst of streamed text, a tool round) are one refresh."""


class PricedColumns(Protocol):
    """What the feed needs of the compare view (built by the tab only when a compare is shown):
    the composer room does not import the compare room (docs/ui-layout.md)."""

    def set_price_of(self, price_of: PriceLookup) -> None: ...


class MeterFeed(QObject):
    def __init__(
        self,
        engine: EngineApi,
        session_id: str,
        model: ConversationModel,
        meter: ContextMeterButton,
        view: ChatView,
        compare: Callable[[], PricedColumns | None] = lambda: None,
    ) -> None:
        super().__init__(meter)
        self._engine = engine
        self._session_id = session_id
        self._meter = meter
        self._view = view
        self._compare = compare
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REFRESH_DELAY_MS)
        self._timer.timeout.connect(self.refresh)
        for signal in (
            model.rowsInserted,
            model.rowsRemoved,
            model.modelReset,
            model.messageFinished,
            model.turnStateChanged,
            model.sessionUpdated,
        ):
            signal.connect(self.schedule)
        unsubscribe = engine.sessions.subscribe_sessions(self._session_event)
        self.destroyed.connect(lambda *_: unsubscribe())
        self.schedule()
        spawn(engine.library.price_book(), tell=_QUIET, on_done=self._prices_loaded)

    def schedule(self, *_: object) -> None:
        self._timer.start()

    def _session_event(self, event: SessionEvent) -> None:
        """The memories a request sends changed: the meter's memory share with them."""
        if isinstance(event, MemoriesChanged) and shiboken6.isValid(self._timer):
            self.schedule()

    def refresh(self) -> None:
        spawn(
            self._engine.turns.context_meter(self._session_id),
            on_done=self._meter_loaded,
            tell=_QUIET,
        )
        spawn(self._engine.library.usage(self._session_id), on_done=self._usage_loaded, tell=_QUIET)

    def _alive(self) -> bool:
        """False once the tab is gone: a reply may arrive after its widgets were deleted."""
        return shiboken6.isValid(self._meter) and shiboken6.isValid(self._view)

    def _meter_loaded(self, meter: ContextMeter) -> None:
        if self._alive():
            self._meter.set_meter(meter)

    def _usage_loaded(self, usage: SessionUsage) -> None:
        if self._alive():
            self._meter.set_usage_text(usage_summary(usage))

    def _prices_loaded(self, book: PriceBook) -> None:
        if self._alive():
            self._view.price_of = book.price
            self._view.viewport().update()
            compare = self._compare()  # built only once a compare was shown
            if compare is not None and shiboken6.isValid(compare):  # the columns' cost
                compare.set_price_of(book.price)


def usage_summary(usage: SessionUsage) -> str:
    """ "This chat so far: 12 replies · 45,000 in · 3,200 out · $0.21" (every version counted)."""
    total = usage.total
    if not total.replies:
        return "No replies in this chat yet."
    approx = "≈" if total.estimated else ""
    text = (
        f"This chat so far (every version): {replies(total.replies)} · "
        f"{approx}{total.input_tokens:,} tokens in · {approx}{total.output_tokens:,} out"
    )
    if total.cost is not None:
        text += f" · {format_cost(total.cost)}"
    if total.unpriced:
        text += f" ({total.unpriced} without a known price)"
    return text
