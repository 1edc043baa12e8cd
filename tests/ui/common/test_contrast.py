"""Both themes (and their high-contrast variants) meet WCAG AA for text.

The ratio is computed with the WCAG 2.x formula from the colours actually used: the Qt
palette roles that widgets draw text with (``build_palette``) and every pairing of theme
colours the stylesheet and the chat renderer draw text with (``text_pairs``).
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtGui import QColor, QPalette

from threadline.ui.common.theme import (
    DARK,
    HIGH_CONTRAST_DARK,
    HIGH_CONTRAST_LIGHT,
    LARGE_OR_UI,
    LIGHT,
    NORMAL_TEXT,
    ThemeColors,
    build_palette,
    text_pairs,
)

THEMES = [LIGHT, DARK, HIGH_CONTRAST_LIGHT, HIGH_CONTRAST_DARK]
Role = QPalette.ColorRole
Group = QPalette.ColorGroup


def luminance(colour: QColor) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(colour.red()) + 0.7152 * channel(colour.green()) + 0.0722 * channel(colour.blue())


def contrast(a: QColor | str, b: QColor | str) -> float:
    la, lb = luminance(QColor(a)), luminance(QColor(b))
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def test_the_formula_matches_known_ratios() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # the classic near miss
    assert contrast("#ffffff", "#ffffff") == pytest.approx(1.0)


PALETTE_TEXT = [
    ("WindowText on Window", Group.Active, Role.WindowText, Role.Window, NORMAL_TEXT),
    ("Text on Base", Group.Active, Role.Text, Role.Base, NORMAL_TEXT),
    ("Text on AlternateBase", Group.Active, Role.Text, Role.AlternateBase, NORMAL_TEXT),
    ("ButtonText on Button", Group.Active, Role.ButtonText, Role.Button, NORMAL_TEXT),
    ("PlaceholderText on Base", Group.Active, Role.PlaceholderText, Role.Base, NORMAL_TEXT),
    ("HighlightedText on Highlight", Group.Active, Role.HighlightedText, Role.Highlight, NORMAL_TEXT),
    ("Link on Base", Group.Active, Role.Link, Role.Base, NORMAL_TEXT),
    ("ToolTipText on ToolTipBase", Group.Active, Role.ToolTipText, Role.ToolTipBase, NORMAL_TEXT),
    ("disabled Text on Base", Group.Disabled, Role.Text, Role.Base, LARGE_OR_UI),
    ("disabled WindowText on Window", Group.Disabled, Role.WindowText, Role.Window, LARGE_OR_UI),
    ("disabled ButtonText on Button", Group.Disabled, Role.ButtonText, Role.Button, LARGE_OR_UI),
]


@pytest.mark.parametrize("colors", THEMES, ids=lambda c: c.name)
def test_palette_text_roles_meet_aa(qapp: Any, colors: ThemeColors) -> None:
    palette = build_palette(colors)
    failures = []
    for what, group, fg, bg, least in PALETTE_TEXT:
        ratio = contrast(palette.color(group, fg), palette.color(group, bg))
        if ratio < least:
            failures.append(f"{what}: {ratio:.2f} < {least}")
    assert failures == []


@pytest.mark.parametrize("colors", THEMES, ids=lambda c: c.name)
def test_every_text_colour_pairing_meets_aa(qapp: Any, colors: ThemeColors) -> None:
    failures = []
    for what, fg, bg, least in text_pairs(colors):
        ratio = contrast(fg, bg)
        if ratio < least:
            failures.append(f"{what} ({fg} on {bg}): {ratio:.2f} < {least}")
    assert failures == []


def test_the_high_contrast_variants_go_well_beyond_aa(qapp: Any) -> None:
    for colors in (HIGH_CONTRAST_LIGHT, HIGH_CONTRAST_DARK):
        ratios = [contrast(fg, bg) for what, fg, bg, least in text_pairs(colors) if least == NORMAL_TEXT]
        assert min(ratios) >= 7.0, colors.name  # WCAG AAA for normal text


def test_high_contrast_is_a_choice_and_follows_the_system_scheme(qapp: Any, monkeypatch: Any) -> None:
    from threadline.ui.common import theme

    monkeypatch.setattr(theme, "system_prefers_dark", lambda: False)
    assert theme.resolve(theme.ThemeChoice.HIGH_CONTRAST) is HIGH_CONTRAST_LIGHT
    monkeypatch.setattr(theme, "system_prefers_dark", lambda: True)
    assert theme.resolve(theme.ThemeChoice.HIGH_CONTRAST) is HIGH_CONTRAST_DARK
    assert theme.resolve(theme.ThemeChoice.DARK) is DARK


def test_following_the_system_turns_high_contrast_when_the_system_asks(qapp: Any, monkeypatch: Any) -> None:
    from threadline.ui.common import theme

    monkeypatch.setattr(theme, "system_prefers_dark", lambda: False)
    monkeypatch.setattr(theme, "system_prefers_high_contrast", lambda: False)
    assert theme.resolve(theme.ThemeChoice.SYSTEM) is LIGHT
    monkeypatch.setattr(theme, "system_prefers_high_contrast", lambda: True)
    assert theme.resolve(theme.ThemeChoice.SYSTEM) is HIGH_CONTRAST_LIGHT
    assert theme.resolve(theme.ThemeChoice.LIGHT) is LIGHT  # an explicit choice wins


def test_the_real_platform_query_answers(qapp: Any) -> None:
    from threadline.ui.common.theme import system_prefers_high_contrast

    assert system_prefers_high_contrast() in (True, False)  # Qt 6.10+ API present and callable
