"""A theme's colours as a record, and mixing two of them: what the painting modules need.

Kept apart from ``theme`` (palette, style sheet, the style and its manager) so that the
modules ``theme`` draws with — the check indicator, the code box — can use the colours
without importing ``theme`` back.
"""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtGui import QColor


class ThemeColors(NamedTuple):
    """One theme's colours (an immutable record; a ``NamedTuple`` costs a sixth of a frozen
    dataclass to define, and ``dataclasses`` is not imported before the first paint)."""

    name: str
    dark: bool
    window: str
    base: str
    surface: str
    """Slightly raised areas: sidebar, composer box."""
    text: str
    muted: str
    border: str
    accent: str
    accent_text: str
    user_bubble: str
    code_bg: str
    code_border: str
    inline_code_bg: str
    link: str
    selection: str
    hover: str
    error_bg: str
    error_border: str
    error_text: str
    warning: str
    success: str
    pygments_style: str
    high_contrast: bool = False
    """At least 7:1 for text (WCAG AAA), chosen in Settings or asked for by the system."""


def mix(colour: str, base: str, amount: float) -> QColor:
    """``colour`` mixed into ``base`` by ``amount`` (0 = base, 1 = colour)."""
    a, b = QColor(colour), QColor(base)
    return QColor(
        round(b.red() + (a.red() - b.red()) * amount),
        round(b.green() + (a.green() - b.green()) * amount),
        round(b.blue() + (a.blue() - b.blue()) * amount),
    )
