"""F6 and Shift+F6: jump between the window's panes, as in browsers, mail clients and IDEs.

Tab walks every control, which in a window with a sidebar, tabs, a conversation and a
composer is a long way round; F6 moves the focus one *pane* on: the sidebar, the tab
bar, the conversation, a notice that waits for the user (the approval bar or an error
banner, only while shown), the composer, and back to the sidebar. A pane that is not
there (the sidebar hidden, no tab open) is skipped. The focus is set with
``ShortcutFocusReason``, which makes Qt draw the keyboard focus indicator.

A pane is two functions, so the cycler holds no widget that may be deleted: ``area``
says which widget the pane covers (to find where the focus is now) and ``entry`` which
widget takes the focus when the pane is entered; either returns ``None`` when the pane
is absent. The window builds the list (``window_panes``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget

WidgetGetter = Callable[[], QWidget | None]


@dataclass(frozen=True, slots=True)
class Pane:
    """One stop of F6: its name (for the status line and tests), what it covers, what to focus."""

    name: str
    area: WidgetGetter
    entry: WidgetGetter

    def available(self) -> QWidget | None:
        """The widget to focus, if the pane is shown and can take the focus now."""
        area = self.area()
        target = self.entry()
        if area is None or target is None or not area.isVisible() or not target.isVisible():
            return None
        if not target.isEnabled() or target.focusPolicy() == Qt.FocusPolicy.NoFocus:
            return None
        return target

    def holds(self, widget: QWidget) -> bool:
        area = self.area()
        return area is not None and (widget is area or area.isAncestorOf(widget))


class PaneCycler:
    """Moves the keyboard focus to the next or previous available pane."""

    def __init__(self, panes: Callable[[], Sequence[Pane]]) -> None:
        self._panes = panes

    def current(self) -> Pane | None:
        """The pane that holds the focus now (the innermost one, when areas nest), else ``None``."""
        focused = QApplication.focusWidget()
        if focused is None:
            return None
        holding = [(_depth(p.area()), p) for p in self._panes() if p.holds(focused)]
        return max(holding, key=lambda pair: pair[0])[1] if holding else None

    def next(self) -> Pane | None:
        return self._move(+1)

    def previous(self) -> Pane | None:
        return self._move(-1)

    def _move(self, step: int) -> Pane | None:
        panes = list(self._panes())
        if not panes:
            return None
        here = self.current()
        names = [p.name for p in panes]
        start = names.index(here.name) if here is not None else (-1 if step > 0 else 0)
        for offset in range(1, len(panes) + 1):
            pane = panes[(start + step * offset) % len(panes)]
            target = pane.available()
            if target is not None and (here is None or pane.name != here.name):
                target.setFocus(Qt.FocusReason.ShortcutFocusReason)
                return pane
        return None


def _depth(widget: QWidget | None) -> int:
    depth = 0
    while widget is not None:
        widget = widget.parentWidget()
        depth += 1
    return depth
