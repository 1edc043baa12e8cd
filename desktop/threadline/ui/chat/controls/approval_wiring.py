"""A tab's side of tool approval: its ``ApprovalBar`` above the composer and the future the
engine's question waits on.

The window's ``ApprovalRouter`` calls the tab's ``ask_approval``: the bar shows the calls
and the turn waits for the answers. Each tab has its own bar and its own future, so answers
never cross tabs. Stop, Esc or closing the tab cancels the turn (docs/design.md §1). The bar
is built the first time it is asked for: most chats never ask, so its module, widgets and
style sheet are not paid by every open.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QApplication, QPlainTextEdit, QWidget

from threadline.core.messages import ToolCall
from threadline.engine.approval import Decision
from threadline.ui.chat.composer.composer import Composer
from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.common.error_banner import ErrorBanner
from threadline.ui.common.theme import ThemeColors

if TYPE_CHECKING:  # built when first asked for, not by every open
    from threadline.ui.approval.approval_bar import ApprovalBar


class ApprovalHost(Protocol):
    """What the approval wiring needs of its tab."""

    composer: Composer
    banner: ErrorBanner
    view: ChatView

    @property
    def colors(self) -> ThemeColors: ...
    def stop(self) -> None: ...
    def place_approval(self, bar: QWidget) -> None: ...
    def approval_changed(self, waiting: bool) -> None: ...


class ApprovalWiring:
    """The bar, the waiting future and where the keyboard goes after an answer. The tab
    relays the application's ``focusChanged`` to ``focus_moved``: connected to the tab, the
    signal lets go of it as the tab is deleted, before the banner it looks at."""

    def __init__(self, host: ApprovalHost, tab: QWidget) -> None:
        self._host = host
        self._tab = tab
        self._bar: ApprovalBar | None = None
        self._wait: asyncio.Future[list[Decision]] | None = None
        self._answer_had_focus = False

    @property
    def waiting(self) -> bool:
        return self._wait is not None

    @property
    def built(self) -> ApprovalBar | None:
        """The bar if it was ever built (never builds it)."""
        return self._bar

    @property
    def bar(self) -> ApprovalBar:
        """The bar that asks about tool calls, built (hidden) the first time it is asked for."""
        if self._bar is None:
            from threadline.ui.approval.approval_bar import ApprovalBar

            bar = ApprovalBar(self._host.colors)
            bar.decided.connect(self._decided)
            bar.stopRequested.connect(self._host.stop)
            self._host.place_approval(bar)
            self._bar = bar
        return self._bar

    def _in_bar(self, widget: QWidget) -> bool:
        """Whether ``widget`` is inside the approval bar (False if it was never built)."""
        return self._bar is not None and self._bar.isAncestorOf(widget)

    async def ask(
        self, calls: Sequence[ToolCall], previews: Mapping[str, str | None], asker: str = ""
    ) -> list[Decision]:
        """Show the calls in the approval bar and wait for the user's answers (one per call).

        Raises ``CancelledError`` when the turn is stopped or the tab closes meanwhile.
        """
        if self._wait is not None:  # a stale request (cannot happen: one turn per session)
            self.end(cancel=True)
        wait: asyncio.Future[list[Decision]] = asyncio.get_running_loop().create_future()
        self._wait = wait
        self.bar.ask(calls, previews, asker)
        self.fit()
        self._host.approval_changed(True)
        tab = self._tab
        if tab.isVisible() and tab.window().isActiveWindow():
            focused = QApplication.focusWidget()
            typing = (
                isinstance(focused, QPlainTextEdit)
                and not focused.isReadOnly()
                and bool(focused.toPlainText())
            )
            if not typing:  # never steal the keyboard from a message being written
                self.bar.focus_first()
        self._host.view.scroll_to_bottom()
        try:
            return await wait
        finally:
            if self._wait is wait:
                self.end(cancel=False)

    def _decided(self, decisions: list[Decision]) -> None:
        wait = self._wait
        if wait is not None and not wait.done():
            wait.set_result(decisions)
        self.end(cancel=False)
        self.focus_composer_after_answer()

    def focus_composer_after_answer(self) -> None:
        """After Allow, Deny or Retry the keyboard goes back to the message box.

        The answered button hides as it is pressed, so Qt has already passed the focus on to
        the next widget in the chain, which may be anywhere in the window; ``focus_moved``
        remembers that the focus was on the answer. Focus the user moved elsewhere stays.
        """
        focused = QApplication.focusWidget()
        if focused is None or self._tab.isAncestorOf(focused) or self._answer_had_focus:
            self._host.composer.focus_input()
        self._answer_had_focus = False

    def focus_moved(self, old: QWidget | None, new: QWidget | None) -> None:
        """Whether the keyboard was on the approval bar or the banner when its button hid."""
        banner = self._host.banner
        if new is not None and (self._in_bar(new) or banner.isAncestorOf(new)):
            self._answer_had_focus = True
        elif old is not None and (self._in_bar(old) or banner.isAncestorOf(old)):
            self._answer_had_focus = not old.isVisible()  # hidden by the answer, not left by the user
        else:
            self._answer_had_focus = False

    def end(self, *, cancel: bool) -> None:
        """The question is over (answered, or cancelled when ``cancel``): clear the bar."""
        wait, self._wait = self._wait, None
        if cancel and wait is not None and not wait.done():
            wait.cancel()
        focused = QApplication.focusWidget()
        had_focus = focused is not None and self._in_bar(focused)
        if self._bar is not None:
            self._bar.clear()
        if had_focus:
            self._host.composer.focus_input()
        if wait is not None:
            self._host.approval_changed(False)

    def fit(self) -> None:
        self.bar.set_max_rows_height(int(self._tab.height() * 0.5))

    def resized(self) -> None:
        if self._bar is not None and self._bar.pending:
            self.fit()
