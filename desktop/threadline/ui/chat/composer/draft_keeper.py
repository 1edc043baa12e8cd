"""Keeps a chat's draft: the composer's text and attachments, saved through the engine
shortly after each change and put back when the tab opens (docs/storage.md).

A pause in typing is one write, not one per key; closing the tab hands a change not yet
saved to the engine alone, since the widgets are about to go. A draft read after the user
started typing never replaces what they typed.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, QTimer

from threadline.engine.api import EngineApi
from threadline.engine.drafts import Draft
from threadline.ui.chat.composer.composer import Composer
from threadline.ui.common.tasks import LogOnly, spawn

log = logging.getLogger("threadline.ui.chat.chat_tab")

DRAFT_SAVE_MS = 600
"""How long typing must pause before the draft is saved (one write per pause, not per key)."""


class DraftKeeper(QObject):
    """The draft of one session's composer (see the module docstring)."""

    def __init__(self, engine: EngineApi, session_id: str, composer: Composer, parent: QObject) -> None:
        super().__init__(parent)
        self._engine = engine
        self._session_id = session_id
        self._composer = composer
        self._dirty = False
        self._loaded = False
        self._closed = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DRAFT_SAVE_MS)
        self._timer.timeout.connect(self._save_later)
        composer.draftChanged.connect(self._changed)

    def load(self) -> None:
        """Read the stored draft and put it in the composer (unless something was typed meanwhile)."""
        spawn(
            self._engine.sessions.get_draft(self._session_id),
            tell=LogOnly("could not read the draft"),
            on_done=self._restore,
            on_failed=self._failed,
        )

    def _restore(self, draft: Draft | None) -> None:
        if self._closed:
            return  # the tab closed while the draft was being read
        self._loaded = True
        if draft is not None and self._composer.draft().empty:  # never over what was typed meanwhile
            self._composer.set_draft(draft)
            self._timer.stop()
            self._dirty = False

    def _failed(self, _err: BaseException) -> None:
        self._loaded = True

    def _changed(self) -> None:
        if self._loaded or not self._composer.draft().empty:
            self._dirty = True
            self._timer.start()

    def _save_later(self) -> None:
        self._timer.stop()
        spawn(
            self.save_now(),
            tell=LogOnly("could not save the draft"),
        )

    async def save_now(self) -> None:
        """Store the draft if it changed since it was last stored (the window calls it on close).

        After ``close`` the tab's widgets (its timer among them) may already be deleted, and
        ``close`` has handed a pending change to the engine: nothing is left to do here.
        """
        if self._closed:
            return
        self._timer.stop()
        if not self._dirty:
            return
        self._dirty = False
        await self._engine.sessions.save_draft(self._session_id, self._composer.draft())

    def close(self) -> None:
        """The tab closes: a change not yet stored is saved by the engine alone."""
        self._closed = True
        self._timer.stop()
        if self._dirty:  # saved by the engine alone: the widgets are about to be deleted
            self._dirty = False
            spawn(
                self._engine.sessions.save_draft(self._session_id, self._composer.draft()),
                tell=LogOnly("could not save the draft"),
            )
