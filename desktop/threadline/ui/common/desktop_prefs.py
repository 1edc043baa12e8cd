"""The desktop switches (tray, notifications), shared by Settings → Desktop and ``ui/desktop``.

One object per application (``DesktopPrefs.of``), so the page that changes a switch and the
tray and notifications that follow it hold the same values without importing each other:
the page saves through ``save``, the desktop room listens to ``changed``. Stored as one
setting, ``desktop``, through ``engine.settings`` (docs/desktop.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi

SETTING_KEY = "desktop"


class DesktopSwitches(NamedTuple):
    keep_in_tray: bool = False
    """Closing the window hides it; the tray's Quit ends the app."""
    notify_finished: bool = True
    notify_failed: bool = True
    notify_approval: bool = True
    show_text: bool = False
    """Put the reply's first words in a notification (off: a lock screen shows only the chat's title)."""


class DesktopPrefs(QObject):
    changed = Signal(object)
    """The new ``DesktopSwitches``."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.switches = DesktopSwitches()

    @classmethod
    def of(cls, owner: QObject) -> DesktopPrefs:
        """The one object of ``owner`` (the application), made on first use."""
        found = owner.findChild(cls, "DesktopPrefs")
        if isinstance(found, cls):
            return found
        prefs = cls(owner)
        prefs.setObjectName("DesktopPrefs")
        return prefs

    async def load(self, engine: EngineApi) -> DesktopSwitches:
        stored = await engine.settings.get_setting(SETTING_KEY, {})
        self._set(from_stored(stored))
        return self.switches

    async def save(self, engine: EngineApi, switches: DesktopSwitches) -> None:
        await engine.settings.set_setting(SETTING_KEY, switches._asdict())
        self._set(switches)

    def _set(self, switches: DesktopSwitches) -> None:
        if switches != self.switches:
            self.switches = switches
            self.changed.emit(switches)


def from_stored(stored: Any) -> DesktopSwitches:
    """The switches in a stored value; unknown keys and wrong types fall back to the defaults."""
    if not isinstance(stored, dict):
        return DesktopSwitches()
    defaults = DesktopSwitches()._asdict()
    return DesktopSwitches(
        **{k: stored[k] if isinstance(stored.get(k), bool) else v for k, v in defaults.items()}
    )
