"""The colours of file changes in both themes: green for what was added, red for what was removed.

Code review tools (GitHub, VS Code) read "+12" in green and "−3" in red; the same pair is
used for the reply header's counts, the file list, the status line's totals and the diff's
line backgrounds. Each text colour is pushed until it reads on the surface it is drawn on
(4.5:1, 7:1 in high contrast), so a light theme's green is not a pale mint.
"""

from __future__ import annotations

from typing import NamedTuple

from threadline.core.file_changes import ChangeKind
from threadline.ui.common.theme import ThemeColors, mix, readable_on

GREEN_LIGHT, GREEN_DARK = "#1a7f37", "#3fb950"
RED_LIGHT, RED_DARK = "#cf222e", "#f85149"
AMBER_LIGHT, AMBER_DARK = "#9a6700", "#d29922"
BLUE_LIGHT, BLUE_DARK = "#0969da", "#58a6ff"


class ChangeColours(NamedTuple):
    """Text and background colours of one theme's changes (hex strings)."""

    added: str
    removed: str
    added_bg: str
    """An added line's background in the diff."""
    removed_bg: str
    added_word_bg: str
    """The changed characters of an edited line: a stronger green (and red) over the line's."""
    removed_word_bg: str
    added_gutter: str
    """The line-number gutter beside an added line: a little stronger than the line."""
    removed_gutter: str
    hunk_bg: str
    hunk_text: str
    kinds: dict[ChangeKind, str]
    """The letter badge of each kind in a file list (A, M, D, R as VS Code marks them)."""


def change_colours(c: ThemeColors, background: str | None = None) -> ChangeColours:
    """The change colours of theme ``c``, the text ones readable on ``background`` (the base by default)."""
    on = background or c.base
    least = 7.0 if c.high_contrast else 4.5
    green, red = (GREEN_DARK, RED_DARK) if c.dark else (GREEN_LIGHT, RED_LIGHT)
    amber, blue = (AMBER_DARK, BLUE_DARK) if c.dark else (AMBER_LIGHT, BLUE_LIGHT)
    if c.high_contrast:
        green, red = c.success, c.error_text
    strength = 0.16 if c.dark else 0.12
    gutter = 0.26 if c.dark else 0.22
    added = readable_on(green, on, least)
    removed = readable_on(red, on, least)
    return ChangeColours(
        added=added,
        removed=removed,
        added_bg=mix(green, c.code_bg, strength).name(),
        removed_bg=mix(red, c.code_bg, strength).name(),
        added_word_bg=mix(green, c.code_bg, strength * 2.6).name(),
        removed_word_bg=mix(red, c.code_bg, strength * 2.6).name(),
        added_gutter=mix(green, c.code_bg, gutter).name(),
        removed_gutter=mix(red, c.code_bg, gutter).name(),
        hunk_bg=mix(c.accent, c.code_bg, 0.14 if c.dark else 0.10).name(),
        hunk_text=c.muted,
        kinds={
            ChangeKind.CREATED: added,
            ChangeKind.MODIFIED: readable_on(amber, on, least),
            ChangeKind.DELETED: removed,
            ChangeKind.RENAMED: readable_on(blue, on, least),
        },
    )


KIND_LETTERS = {
    ChangeKind.CREATED: "A",
    ChangeKind.MODIFIED: "M",
    ChangeKind.DELETED: "D",
    ChangeKind.RENAMED: "R",
}
"""The one-letter badges of a file list, as git and VS Code write them (Added, Modified…)."""

KIND_WORDS = {
    ChangeKind.CREATED: "created",
    ChangeKind.MODIFIED: "modified",
    ChangeKind.DELETED: "deleted",
    ChangeKind.RENAMED: "renamed",
}
