"""The window's side of the voice: "Read aloud" on a reply, new replies read as they stream
when Settings → Voice asks for it, and the reading bar in the status bar.

One object for the window, not one per tab: there is one voice, and what it reads may be in
any tab. It wires every tab as it opens (``tabs_changed``), through signals the tab already
has (the view's ``actionTriggered``, the tab's ``busyChanged``), so the chat tab itself does
not grow.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

import shiboken6
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QStatusBar

from threadline.engine.api import EngineApi
from threadline.engine.voice import ReadingState
from threadline.ui.chat.view.message_actions import READ_ALOUD
from threadline.ui.common.message_bridge import MessageBridge
from threadline.ui.common.tasks import LogOnly, spawn
from threadline.ui.voice.dictation import DictationControl, PushToTalk
from threadline.ui.voice.reading_bar import ReadingBar

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance

    from threadline.ui.chat.chat_tab import ChatTab


class Tabs(Protocol):
    """What the voice needs of the window's tabs (``TabContainer``)."""

    @property
    def tabs_changed(self) -> SignalInstance: ...
    def tabs(self) -> list[ChatTab]: ...


log = logging.getLogger(__name__)

WIRED = "threadlineVoiceWired"
"""A tab's property once its signals reach the voice (a tab is wired once, however often the
tab list changes)."""
DICTATION = "threadlineDictation"
"""A tab's property: its ``DictationControl`` (the microphone beside Send)."""


class WindowVoice(QObject):
    def __init__(self, engine: EngineApi, tabs: Tabs, status_bar: QStatusBar, bridge: MessageBridge) -> None:
        super().__init__(status_bar)
        self._engine = engine
        self._tabs = tabs
        self._bridge = bridge
        self.bar = ReadingBar(status_bar)
        status_bar.addPermanentWidget(self.bar)
        self.bar.pauseClicked.connect(lambda: spawn(engine.voice.pause(), tell=bridge, context="Not paused"))
        self.bar.resumeClicked.connect(engine.voice.resume)
        self.bar.stopClicked.connect(self.stop)
        self._unsubscribe = engine.voice.watch(self._changed)
        tabs.tabs_changed.connect(self._wire_tabs)
        self._wire_tabs()

    def stop(self) -> None:
        spawn(self._engine.voice.stop(), tell=self._bridge, context="Not stopped")

    @staticmethod
    def dictation(tab: ChatTab) -> DictationControl:
        """The tab's microphone control."""
        control = tab.property(DICTATION)
        assert isinstance(control, DictationControl)
        return control

    def detach(self) -> None:
        """The window closes: the voice stops and is no longer watched."""
        self._unsubscribe()
        spawn(self._engine.voice.stop(), tell=LogOnly("Reading aloud not stopped"))

    def _wire_tabs(self) -> None:
        for tab in self._tabs.tabs():
            if not tab.property(WIRED):
                tab.setProperty(WIRED, True)
                self._wire(tab)

    def _wire(self, tab: ChatTab) -> None:
        def action(name: str, message_id: str) -> None:
            self._action(tab, name, message_id)

        def busy(running: bool) -> None:
            self._busy(tab, running)

        tab.view.actionTriggered.connect(action)
        tab.busyChanged.connect(busy)
        dictation = DictationControl(self._engine, self._bridge, tab.composer)
        tab.composer.add_beside_send(dictation)
        dictation.textReady.connect(tab.composer.insert_at_cursor)
        tab.composer.edit.installEventFilter(PushToTalk(dictation, dictation))
        tab.setProperty(DICTATION, dictation)

    def _action(self, tab: ChatTab, action: str, message_id: str) -> None:
        if action != READ_ALOUD or not shiboken6.isValid(tab):
            return
        state = self._engine.voice.state
        if state.active and state.message_id == message_id:
            self.stop()
            return
        spawn(
            self._engine.voice.read_message(tab.session_id, message_id),
            tell=self._bridge,
            context="Not read aloud",
            session_id=tab.session_id,
        )

    def _busy(self, tab: ChatTab, busy: bool) -> None:
        if busy and shiboken6.isValid(tab) and self._engine.voice.settings.read_new_replies:
            spawn(
                self._engine.voice.read_streaming(tab.session_id),
                tell=self._bridge,
                context="The reply is not read aloud",
                session_id=tab.session_id,
            )

    def _changed(self, state: ReadingState) -> None:
        if not shiboken6.isValid(self.bar):
            return
        self.bar.show_state(state)
        if state.error:
            self._bridge.warning(f"Reading aloud stopped. {state.error}")
