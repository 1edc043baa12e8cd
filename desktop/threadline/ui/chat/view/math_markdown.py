"""Finding LaTeX math in Markdown: a markdown-it inline rule (pure, no Qt).

Models write math four ways: ``$…$`` and ``\\(…\\)`` inline, ``$$…$$`` and ``\\[…\\]`` on a
line of their own. The rule turns each into a ``math_inline`` or ``math_display`` token
whose ``content`` is the LaTeX source; the Markdown renderer turns those into images.

A dollar sign is also money, so ``$…$`` follows the rules Pandoc and most chat apps use:
the opening ``$`` is not followed by a space, the closing one is not preceded by a space
and not followed by a digit ("$5 and $10" stays text), and neither is escaped (``\\$``).
Math never spans a blank line (markdown-it splits paragraphs first) and never starts inside
a code span or code block (those are consumed by their own rules before this one sees them).

The rule runs before markdown-it's ``escape`` rule, which would otherwise turn ``\\(`` into a
plain ``(``; the formula's text is taken verbatim, so ``\\\\`` row breaks and ``_`` subscripts
reach the renderer unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline

MATH_INLINE = "math_inline"
MATH_DISPLAY = "math_display"
MAX_FORMULA_CHARS = 4000
"""Longer "formulas" are taken as text: nobody writes one, and a runaway ``$`` should not
swallow a page."""

_BRACKETS = {"(": (")", MATH_INLINE), "[": ("]", MATH_DISPLAY)}


def _find_closing(src: str, start: int, end: int, closer: str) -> int:
    """Index of ``closer`` at or after ``start`` (before ``end``) not escaped by a backslash; -1 if none."""
    pos = start
    while True:
        found = src.find(closer, pos, end)
        if found < 0:
            return -1
        backslashes = 0
        k = found - 1
        while k >= start and src[k] == "\\":
            backslashes += 1
            k -= 1
        if backslashes % 2 == 0:
            return found
        pos = found + 1


def _dollar(state: StateInline, silent: bool) -> bool:
    src, start, end = state.src, state.pos, state.posMax
    if start + 1 >= end:
        return False
    if src.startswith("$$", start):
        close = _find_closing(src, start + 2, end, "$$")
        latex = src[start + 2 : close] if close >= 0 else ""
        if close < 0 or not latex.strip() or len(latex) > MAX_FORMULA_CHARS:
            return False
        if not silent:
            token = state.push(MATH_DISPLAY, "math", 0)
            token.content = latex.strip()
            token.markup = "$$"
        state.pos = close + 2
        return True
    first = src[start + 1]
    if first.isspace() or first == "$":
        return False
    # The first unescaped $ closes, or nothing does: "costs $5. Then $x$" must not make
    # "5. Then $x" a formula.
    close = _find_closing(src, start + 1, end, "$")
    if close < 0 or src[close - 1].isspace() or (close + 1 < end and src[close + 1].isdigit()):
        return False
    latex = src[start + 1 : close]
    if len(latex) > MAX_FORMULA_CHARS:
        return False
    if not silent:
        token = state.push(MATH_INLINE, "math", 0)
        token.content = latex
        token.markup = "$"
    state.pos = close + 1
    return True


def _bracket(state: StateInline, silent: bool) -> bool:
    src, start, end = state.src, state.pos, state.posMax
    if start + 1 >= end or src[start + 1] not in _BRACKETS:
        return False
    closer, kind = _BRACKETS[src[start + 1]]
    close = src.find("\\" + closer, start + 2, end)
    latex = src[start + 2 : close] if close >= 0 else ""
    if close < 0 or not latex.strip() or len(latex) > MAX_FORMULA_CHARS:
        return False
    if not silent:
        token = state.push(kind, "math", 0)
        token.content = latex.strip()
        token.markup = "\\" + src[start + 1]
    state.pos = close + 2
    return True


def _math(state: StateInline, silent: bool) -> bool:
    char = state.src[state.pos]
    if char == "$":
        return _dollar(state, silent)
    if char == "\\":
        return _bracket(state, silent)
    return False


def math_plugin(md: MarkdownIt) -> None:
    """Teach ``md`` the four kinds of math delimiters (see the module docstring)."""
    md.inline.ruler.before("escape", "math", _math)
