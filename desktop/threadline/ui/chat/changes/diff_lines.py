"""A unified diff read into the rows a diff viewer shows: kind, text and the line numbers.

The file headers (``diff``, ``index``, ``---``, ``+++``) are left out: the dialog names the
file above the diff, as GitHub Desktop and VS Code do. Each hunk header (``@@ -12,7 +12,9
@@``) sets the old and new line numbers that the following lines count on from, and the
gutter shows them: a removed line has only an old number, an added one only a new number.
"""

from __future__ import annotations

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
