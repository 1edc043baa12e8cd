"""Tab's order for widgets added to a window after it was built.

A widget that gets its parent late (a panel or bar built the first time it is needed)
joins the focus chain at the window's end, so Tab would reach it last. These helpers give
it the place it would have had had it been built, and added, in layout order.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget


def focusable_in(widget: QWidget) -> list[QWidget]:
    """``widget``'s children that take focus, in focus-chain order."""
    found: list[QWidget] = []
    step = widget.nextInFocusChain()
    while step is not None and step is not widget and widget.isAncestorOf(step):
        if step.focusPolicy() != Qt.FocusPolicy.NoFocus:
            found.append(step)
        step = step.nextInFocusChain()
    return found


def focusable_before(anchor: QWidget) -> QWidget | None:
    """The nearest widget before ``anchor`` in the focus chain that takes focus."""
    step = anchor.previousInFocusChain()
    while step is not None and step is not anchor:
        if step.focusPolicy() != Qt.FocusPolicy.NoFocus:
            return step
        step = step.previousInFocusChain()
    return None


def move_before_in_focus_chain(widget: QWidget, anchor: QWidget) -> None:
    """Put ``widget``'s focusable children just before ``anchor`` in Tab's order.

    Qt orders only widgets that take focus (``setTabOrder`` ignores the others), so the
    chain is rebuilt from the last focusable widget before ``anchor``.
    """
    before = focusable_before(anchor)
    if before is None:
        return
    for member in focusable_in(widget):
        QWidget.setTabOrder(before, member)
        before = member
