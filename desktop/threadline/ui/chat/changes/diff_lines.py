"""A unified diff read into the rows a diff viewer shows: kind, text and the line numbers.

The file headers (``diff``, ``index``, ``---``, ``+++``) are left out: the dialog names the
file above the diff, as GitHub Desktop and VS Code do. Each hunk header (``@@ -12,7 +12,9
@@``) sets the old and new line numbers that the following lines count on from, and the
gutter shows them: a removed line has only an old number, an added one only a new number.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from enum import Enum

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


class LineKind(Enum):
    HUNK = "hunk"
    ADDED = "added"
    REMOVED = "removed"
    CONTEXT = "context"
    NOTE = "note"
    """``\\ No newline at end of file`` and the like: about the line above, not a line of the file."""


@dataclass(frozen=True, slots=True)
class DiffLine:
    kind: LineKind
    text: str
    """The line as shown: its ``+``/``-``/space marker kept, the hunk header whole."""
    old: int | None = None
    new: int | None = None


def diff_lines(diff: str) -> list[DiffLine]:
    """The rows of unified diff text; lines outside the hunks (file headers) are left out.

    A hunk ends when its header's line counts are used up, so a removed line that reads
    ``--- x`` is still a removed line, and the headers of a next file are recognised.
    """
    rows: list[DiffLine] = []
    old = new = old_left = new_left = 0
    for line in diff.splitlines():
        if old_left <= 0 and new_left <= 0:
            match = _HUNK.match(line)
            if match:
                old, new = int(match.group(1)), int(match.group(3))
                old_left = int(match.group(2)) if match.group(2) is not None else 1
                new_left = int(match.group(4)) if match.group(4) is not None else 1
                rows.append(DiffLine(LineKind.HUNK, line))
            elif line.startswith("\\") and rows:
                rows.append(DiffLine(LineKind.NOTE, line))
            continue
        if line.startswith("\\"):
            rows.append(DiffLine(LineKind.NOTE, line))
        elif line.startswith("+"):
            rows.append(DiffLine(LineKind.ADDED, line, new=new))
            new, new_left = new + 1, new_left - 1
        elif line.startswith("-"):
            rows.append(DiffLine(LineKind.REMOVED, line, old=old))
            old, old_left = old + 1, old_left - 1
        else:
            rows.append(DiffLine(LineKind.CONTEXT, line or " ", old=old, new=new))
            old, new = old + 1, new + 1
            old_left, new_left = old_left - 1, new_left - 1
    return rows


WORD_DIFF_MAX = 400
"""Characters a line may have for its changed words to be marked (longer lines are marked whole)."""


def changed_words(rows: list[DiffLine]) -> dict[int, list[tuple[int, int]]]:
    """The changed character ranges of edited lines, by row: (start, length) in the line's code.

    A run of removed lines directly followed by as many added lines is read as those lines
    edited in place (GitHub and VS Code pair them the same way); each pair that is still
    more alike than not gets the characters that differ marked, so "x + 1" → "x * 1" shows
    which character changed. Runs of different lengths are left as whole-line changes.
    """
    marks: dict[int, list[tuple[int, int]]] = {}
    i = 0
    while i < len(rows):
        if rows[i].kind is not LineKind.REMOVED:
            i += 1
            continue
        start = i
        while i < len(rows) and rows[i].kind is LineKind.REMOVED:
            i += 1
        middle = i
        while i < len(rows) and rows[i].kind is LineKind.ADDED:
            i += 1
        if i - middle != middle - start:
            continue
        for offset in range(middle - start):
            old_row, new_row = start + offset, middle + offset
            old, new = rows[old_row].text[1:], rows[new_row].text[1:]
            if len(old) > WORD_DIFF_MAX or len(new) > WORD_DIFF_MAX:
                continue
            matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
            if matcher.ratio() < 0.5:
                continue
            for tag, a1, a2, b1, b2 in matcher.get_opcodes():
                if tag == "equal":
                    continue
                if a2 > a1:
                    marks.setdefault(old_row, []).append((a1, a2 - a1))
                if b2 > b1:
                    marks.setdefault(new_row, []).append((b1, b2 - b1))
    return marks
