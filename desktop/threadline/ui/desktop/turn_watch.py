"""When to notify: a turn in an open chat finished, failed or waits for approval, out of sight.

It follows each tab's live conversation (``tabs_changed``), as the tab itself does, without
the tab knowing: a turn that was running and went idle has finished; ``TurnFailed`` is a
failure; the ``awaiting_approval`` state asks for the user. The user is told only when that
chat is out of view — another tab is current, or the window is hidden, minimised or not the
active one — and when the kind is switched on in Settings → Desktop. The body holds the reply's
first words only if "Show message text in notifications" is on (docs/desktop.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from threadline.core.messages import Role
from threadline.core.turn import TurnState
from threadline.engine.events import ConversationEvent, TurnFailed, TurnStateChanged
from threadline.ui.common.desktop_prefs import DesktopPrefs

if TYPE_CHECKING:
    from threadline.engine.api import Unsubscribe
    from threadline.ui.desktop.notifier import DesktopNotifier
    from threadline.ui.window.main_window import MainWindow

BODY_CHARS = 160
_RUNNING = {TurnState.STREAMING, TurnState.RUNNING_TOOLS, TurnState.COMPARING}


class TurnWatch(QObject):
    def __init__(self, window: MainWindow, notifier: DesktopNotifier, prefs: DesktopPrefs) -> None:
        super().__init__(window)
        self.window = window
        self.notifier = notifier
        self.prefs = prefs
        self._followed: dict[str, Unsubscribe] = {}
        self._running: set[str] = set()
        window.tabs.tabs_changed.connect(self.follow_tabs)
        self.follow_tabs()

    def follow_tabs(self) -> None:
        tabs = {tab.session_id: tab for tab in self.window.tabs.tabs()}
        for session_id in set(self._followed) - set(tabs):
            self._followed.pop(session_id)()
            self._running.discard(session_id)
        for session_id, tab in tabs.items():
            if session_id not in self._followed:
                self._followed[session_id] = tab.live.subscribe(self._listener(session_id))

    def _listener(self, session_id: str) -> Callable[[ConversationEvent], None]:
        return lambda event: self._event(session_id, event)

    def detach(self) -> None:
        for unsubscribe in self._followed.values():
            unsubscribe()
        self._followed.clear()

    def _event(self, session_id: str, event: ConversationEvent) -> None:
        if isinstance(event, TurnStateChanged):
            if event.state in _RUNNING:
                self._running.add(session_id)
            elif event.state is TurnState.IDLE and session_id in self._running:
                self._running.discard(session_id)
                self._tell(session_id, "finished")
            elif event.state is TurnState.AWAITING_APPROVAL:
                self._tell(session_id, "approval")
        elif isinstance(event, TurnFailed):
            self._running.discard(session_id)
            self._tell(session_id, "failed", event.error.message)

    def in_view(self, session_id: str) -> bool:
        window = self.window
        current = window.tabs.current_tab()
        return (
            window.isVisible()
            and not window.isMinimized()
            and window.isActiveWindow()
            and current is not None
            and current.session_id == session_id
        )

    def _tell(self, session_id: str, kind: str, detail: str = "") -> None:
        switches = self.prefs.switches
        wanted = {
            "finished": switches.notify_finished,
            "failed": switches.notify_failed,
            "approval": switches.notify_approval,
        }
        if not wanted[kind] or self.in_view(session_id):
            return
        tab = self.window.tabs.tab_for(session_id)
        title = tab.title if tab is not None else "A chat"
        if kind == "finished":
            summary = f"Reply ready: {title}"
            body = self._reply_start(session_id) if switches.show_text else ""
            body = body or "Open the chat to read it."
        elif kind == "failed":
            summary = f"Reply failed: {title}"
            body = detail if switches.show_text and detail else "Open the chat to see why and retry."
        else:
            summary = f"Waiting for your approval: {title}"
            body = "A tool call waits for Allow or Deny."
        self.notifier.notify(session_id, summary, body)

    def _reply_start(self, session_id: str) -> str:
        tab = self.window.tabs.tab_for(session_id)
        if tab is None:
            return ""
        replies = [m for m in tab.live.conversation.path() if m.role is Role.ASSISTANT and m.text.strip()]
        if not replies:
            return ""
        text = " ".join(replies[-1].text.split())
        return text if len(text) <= BODY_CHARS else text[: BODY_CHARS - 1] + "…"
