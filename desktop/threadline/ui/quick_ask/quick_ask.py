"""Quick ask: open the small window, start its chat, hand the chat over to the main window.

A Quick ask is an ordinary session, made through ``engine.sessions.new_session`` as the
window's New Chat makes one, shown in a ``ChatTab`` of its own inside ``QuickAskWindow``.
Hiding it (Esc) leaves the chat and any reply running; opening it again shows the same
chat, so an Esc pressed too early loses nothing. "New" starts another chat; an empty one is
used again rather than piling up empty chats. "Continue in window" detaches the tab
(``ChatTab.close_tab``: the engine keeps the conversation and its turn) and opens the
session as a tab of the main window, which comes to the front (docs/quick-ask.md).

The window reaches it through ``open_quick_ask`` (menus, ``threadline --quick-ask``, the
global shortcut, a second instance's forwarded arguments).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from threadline.ui.common.activation import bring_up
from threadline.ui.common.tasks import LogOnly, spawn
from threadline.ui.quick_ask.global_hotkey import QuickAskShortcut
from threadline.ui.quick_ask.quick_ask_window import QuickAskWindow
from threadline.ui.quick_ask.selection import as_quote, selected_text
from threadline.ui.quick_ask.shortcuts.base import DEFAULT_SHORTCUT, SHORTCUT_SETTING

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi
    from threadline.ui.chat.chat_tab import ChatTab
    from threadline.ui.chat.composer.model_catalog import ModelCatalog
    from threadline.ui.common.message_bridge import MessageBridge
    from threadline.ui.common.theme import TextZoom, ThemeManager
    from threadline.ui.quick_ask.shortcut_settings import QuickAskSettings

log = logging.getLogger("threadline.ui.quick_ask")


class QuickAskHost(Protocol):
    """What Quick ask needs of the main window."""

    engine: EngineApi | None
    bridge: MessageBridge
    zoom: TextZoom
    theme: ThemeManager

    @property
    def catalog(self) -> ModelCatalog: ...
    def open_session(self, session_id: str, message_id: str | None = None) -> None: ...
    def refresh_models(self) -> None: ...
    def showNormal(self) -> None: ...
    def raise_(self) -> None: ...
    def activateWindow(self) -> None: ...


class QuickAsk:
    """The one Quick ask window of a main window, built the first time it is opened."""

    def __init__(self, host: QuickAskHost) -> None:
        self.host = host
        self.window: QuickAskWindow | None = None
        self._starting = False
        self._pending_quote = ""
        self.shortcut = QuickAskShortcut(self.open)
        """The global shortcut (bound by ``start``, once the engine has the stored choice)."""

    def start(self) -> None:
        """Bind the stored global shortcut (the window calls it when its engine is attached)."""
        engine = self.host.engine
        if engine is None:
            return

        async def load() -> None:
            text = await engine.settings.get_setting(SHORTCUT_SETTING, DEFAULT_SHORTCUT)
            self.shortcut.apply(text if isinstance(text, str) else DEFAULT_SHORTCUT)

        spawn(load(), tell=LogOnly("could not read the quick ask shortcut"))

    def settings_page(self) -> QuickAskSettings:
        """Settings → Quick ask (the window adds it to its Settings dialog)."""
        from threadline.ui.quick_ask.shortcut_settings import QuickAskSettings

        engine = self.host.engine

        def store(text: str) -> None:
            if engine is not None:
                spawn(
                    engine.settings.set_setting(SHORTCUT_SETTING, text),
                    tell=self.host.bridge,
                    context="Could not keep the shortcut",
                )

        return QuickAskSettings(self.shortcut, store, lambda selection: self.open(about_selection=selection))

    @property
    def tab(self) -> ChatTab | None:
        return self.window.tab if self.window is not None else None

    def asking_tab(self, session_id: str) -> ChatTab | None:
        """The tab to ask for a tool approval of ``session_id`` in, when it is Quick ask's chat.

        The window comes up over the others so the question is seen where it was asked; when
        the person had hidden it (Esc) it is shown again but not given the keyboard, so a
        question never takes the typing from another application (docs/quick-ask.md).
        """
        tab = self.tab
        window = self.window
        if tab is None or window is None or tab.session_id != session_id:
            return None
        was_visible = window.isVisible()
        window.show()
        window.fit()
        window.raise_()
        if was_visible:
            window.activateWindow()
        return tab

    def open(self, *, about_selection: bool = False) -> None:
        """Show the window on the screen with the mouse, its composer focused.

        ``about_selection``: the selected text (or the clipboard's) goes into the composer as
        a quote, in a new chat unless the one shown is still empty.
        """
        quote = as_quote(selected_text()) if about_selection else ""
        window = self._built_window()
        if not window.isVisible():
            window.place_on_screen()
        window.show()
        window.fit()
        bring_up(window)  # with the activation token of a start that asked for it (--quick-ask)
        tab = self.tab
        if tab is not None and not (quote and _has_messages(tab)):
            if quote:
                tab.composer.set_text(quote + tab.composer.text())
            tab.focus_composer()
            return
        self._start(quote)

    def new_ask(self) -> None:
        """ "New": another chat in the window (the one shown stays in the sidebar)."""
        tab = self.tab
        if tab is not None and not _has_messages(tab) and not tab.composer.text().strip():
            tab.focus_composer()
            return
        self._start("")

    def hide(self) -> None:
        if self.window is not None:
            self.window.hide()

    def continue_in_window(self) -> None:
        """The chat as a tab of the main window, which comes to the front; the next Quick ask is new."""
        tab = self.tab
        if tab is None or self.window is None:
            return
        session_id = tab.session_id
        self._detach()
        self.window.hide()
        self.host.open_session(session_id)
        self.host.showNormal()
        self.host.raise_()
        self.host.activateWindow()

    def drop_chat(self) -> None:
        """The engine is being replaced (a restore): let go of the chat shown; the next open starts anew."""
        self._detach()
        self.hide()

    async def close(self) -> None:
        """The window is closing: let go of the shortcut, keep the unsent question as the chat's draft."""
        self.shortcut.release()
        tab = self.tab
        if tab is not None:
            await tab.save_draft_now()
            self._detach()
        if self.window is not None:
            self.window.hide()
            self.window.deleteLater()
            self.window = None

    # -- parts ------------------------------------------------------------------------------

    def _built_window(self) -> QuickAskWindow:
        if self.window is None:
            window = QuickAskWindow(self.host.theme.colors)
            window.continueRequested.connect(self.continue_in_window)
            window.newRequested.connect(self.new_ask)
            self.host.theme.changed.connect(window.set_colors)
            self.window = window
        return self.window

    def _start(self, quote: str) -> None:
        self._pending_quote = quote
        if self._starting or self.host.engine is None:
            return
        self._starting = True
        spawn(self._new_chat(self.host.engine), tell=self.host.bridge, context="Could not start a quick ask")

    async def _new_chat(self, engine: EngineApi) -> None:
        from threadline.ui.chat.chat_tab import ChatTab

        try:
            info = await engine.sessions.new_session()
            live = await engine.sessions.open_session(info.id)
        finally:
            self._starting = False
        window = self._built_window()
        self._detach()
        tab = ChatTab(engine, live, self.host.catalog, self.host.theme.colors, bridge=self.host.bridge)
        self.host.zoom.attach(tab.view, tab.composer.edit)
        tab.composer.modelListWanted.connect(self.host.refresh_models)
        window.set_tab(tab)
        if self._pending_quote:
            tab.composer.set_text(self._pending_quote + tab.composer.text())
            self._pending_quote = ""
        tab.focus_composer()

    def _detach(self) -> None:
        """Let go of the tab shown (the engine keeps the chat and any reply it is writing)."""
        window = self.window
        tab = window.tab if window is not None else None
        if window is None or tab is None:
            return
        window.set_tab(None)
        tab.close_tab()
        tab.setParent(None)
        tab.deleteLater()


def _has_messages(tab: ChatTab) -> bool:
    return tab.model.rowCount() > 0
