"""Named actions a start, the tray or a link can ask of the running window (docs/desktop.md).

A small registry: ``register("quick-ask", handler)`` makes ``threadline --quick-ask`` (from a
second start, the tray or a desktop shortcut) call ``handler``. Quick ask hooks in here; the
desktop room ships ``new-chat`` and ``show``. An action nobody registered is said, not dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger("threadline.ui.desktop.actions")

SHOW = "show"
NEW_CHAT = "new-chat"
QUICK_ASK = "quick-ask"


class DesktopActions:
    def __init__(self, tell: Callable[[str], None]) -> None:
        self._handlers: dict[str, Callable[[], None]] = {}
        self._tell = tell

    def register(self, name: str, handler: Callable[[], None]) -> None:
        """``handler`` runs for ``name`` from now on (a second registration replaces the first)."""
        self._handlers[name] = handler

    def unregister(self, name: str) -> None:
        self._handlers.pop(name, None)

    def has(self, name: str) -> bool:
        return name in self._handlers

    def dispatch(self, name: str) -> bool:
        """Run ``name``'s handler; ``False`` (and the user told) when there is none."""
        handler = self._handlers.get(name)
        if handler is None:
            log.info("no handler for the desktop action %r", name)
            self._tell(f"“{name}” is not available in this version of Threadline.")
            return False
        handler()
        return True
