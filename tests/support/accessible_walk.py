"""Walk a window's controls the way a screen reader meets them: through Qt's accessibility API."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QWidget


def accessible_name(widget: QWidget) -> str:
    """The name assistive technology reads for ``widget`` (its accessible name or visible text)."""
    interface = QAccessible.queryAccessibleInterface(widget)
    if interface is None or not interface.isValid():
        return ""
    return interface.text(QAccessible.Text.Name).strip()


def focusable_controls(root: QWidget) -> list[QWidget]:
    """Every widget under ``root`` (itself included) that is shown and takes the keyboard focus."""
    widgets = [root, *root.findChildren(QWidget)]
    return [
        w
        for w in widgets
        if w.isVisible()
        and w.isEnabled()
        and w.focusPolicy() & Qt.FocusPolicy.TabFocus
        and w.focusProxy() is None
    ]


def describe(widget: QWidget) -> str:
    """How to find a widget in a failure message: class, object name, parents' object names."""
    trail = []
    parent = widget.parentWidget()
    while parent is not None and len(trail) < 4:
        trail.append(parent.objectName() or type(parent).__name__)
        parent = parent.parentWidget()
    name = widget.objectName() or "(no object name)"
    tip = f" tooltip={widget.toolTip()!r}" if widget.toolTip() else ""
    return f"{type(widget).__name__} {name} in {' < '.join(trail)}{tip}"


def says_something(name: str) -> bool:
    """A name that tells what the control is: at least one letter or digit ("×" or "…" do not)."""
    return any(ch.isalnum() for ch in name)


def unnamed_controls(root: QWidget) -> list[str]:
    """The focusable controls under ``root`` a screen reader would announce without a usable name."""
    return [describe(w) for w in focusable_controls(root) if not says_something(accessible_name(w))]
