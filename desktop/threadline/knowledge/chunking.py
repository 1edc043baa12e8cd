"""Splitting a file's text along its structure, each chunk with its place.

A chunk is what retrieval returns and what the model reads, so it should be a unit a
person would quote: a PDF page (or part of one), a Markdown section, a function of
source code, a run of paragraphs. Each keeps its place — page, heading, first and last
line — so a source can say where it came from and the window can open it there.
Pieces longer than ``max_chars`` are cut at paragraph, then line boundaries; pieces
shorter than ``min_chars`` are joined to their neighbour within the same page or
section.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from threadline.documents import DocumentKind

MAX_CHARS = 1600
MIN_CHARS = 200

_PAGE_MARK = re.compile(r"^--- Page (\d+) ---$")
"""How ``documents.pdf`` separates the pages of a PDF's text."""
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_CODE_START = re.compile(
    r"^(?:(?:async\s+)?def |class |(?:export\s+)?(?:async\s+)?function[\s*]|(?:pub\s+)?fn |func |"
    r"(?:public|private|protected|static)\s.*\(|(?:export\s+)?(?:const|let)\s+\w+\s*=\s*(?:async\s*)?\()"
)
CODE_SUFFIXES = frozenset(
    {
        ".py",
        ".js",
        ".ts",
        ".tsx",
        ".jsx",
        ".go",
        ".rs",
        ".java",
        ".kt",
        ".c",
        ".h",
        ".cpp",
        ".hpp",
        ".cs",
        ".rb",
        ".php",
        ".swift",
        ".scala",
        ".sh",
        ".lua",
        ".m",
        ".r",
        ".sql",
    }
)


@dataclass(frozen=True, slots=True)
class Chunk:
    text: str
    line_start: int
    line_end: int
    page: int | None = None
    heading: str = ""


@dataclass(slots=True)
class _Piece:
    lines: list[str]
    start: int
    page: int | None
    heading: str

    @property
    def size(self) -> int:
        return sum(len(line) + 1 for line in self.lines)


def chunk_text(text: str, kind: DocumentKind, suffix: str = "") -> list[Chunk]:
    """The chunks of a file's extracted ``text`` (lines numbered from 1 in that text)."""
    lines = text.split("\n")
    if kind is DocumentKind.PDF:
        pieces = list(_by_pages(lines))
    elif kind in (DocumentKind.MARKDOWN, DocumentKind.DOCX):
        pieces = list(_by_headings(lines))
    elif suffix.lower() in CODE_SUFFIXES:
        pieces = list(_by_code_blocks(lines))
    else:
        pieces = [_Piece(lines, 1, None, "")]
    chunks: list[Chunk] = []
    for piece in _joined(pieces):
        chunks.extend(_cut(piece))
    return [chunk for chunk in chunks if chunk.text.strip()]


def _by_pages(lines: list[str]) -> Iterator[_Piece]:
    current = _Piece([], 1, None, "")
    for number, line in enumerate(lines, start=1):
        mark = _PAGE_MARK.match(line)
        if mark:
            yield current
            current = _Piece([], number + 1, int(mark.group(1)), "")
        else:
            current.lines.append(line)
    yield current


def _by_headings(lines: list[str]) -> Iterator[_Piece]:
    current = _Piece([], 1, None, "")
    in_fence = False
    for number, line in enumerate(lines, start=1):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line)
        if heading:
            yield current
            current = _Piece([line], number, None, heading.group(2))
        else:
            current.lines.append(line)
    yield current


def _by_code_blocks(lines: list[str]) -> Iterator[_Piece]:
    """Top-level definitions start a piece; comments and decorators just above go with them."""
    current = _Piece([], 1, None, "")
    for number, line in enumerate(lines, start=1):
        if _CODE_START.match(line) and current.lines:
            keep: list[str] = []
            while current.lines and current.lines[-1].startswith(("@", "#", "//", "/*", " *", "///")):
                keep.insert(0, current.lines.pop())
            yield current
            current = _Piece(keep, number - len(keep), None, _code_name(line))
        current.lines.append(line)
    yield current


def _code_name(line: str) -> str:
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", line)
    skip = {"async", "def", "class", "function", "export", "pub", "fn", "func", "const", "let"}
    skip |= {"public", "private", "protected", "static"}
    names = [word for word in words if word not in skip]
    return names[0] if names else ""


def _joined(pieces: list[_Piece]) -> Iterator[_Piece]:
    """Small pieces joined to the next within the same page (a heading-less run stays whole)."""
    pending: _Piece | None = None
    for piece in pieces:
        if not "".join(piece.lines).strip():
            continue
        if pending is None:
            pending = piece
        elif (
            pending.size < MIN_CHARS and pending.page == piece.page and pending.size + piece.size <= MAX_CHARS
        ):
            pending = _Piece(
                pending.lines + piece.lines, pending.start, pending.page, pending.heading or piece.heading
            )
        else:
            yield pending
            pending = piece
    if pending is not None:
        yield pending


def _cut(piece: _Piece) -> Iterator[Chunk]:
    """``piece`` in chunks of at most ``MAX_CHARS``, cut after a blank line where one is near."""
    start = 0
    while start < len(piece.lines):
        size = 0
        end = start
        last_blank = -1
        while end < len(piece.lines) and (end == start or size + len(piece.lines[end]) + 1 <= MAX_CHARS):
            size += len(piece.lines[end]) + 1
            if not piece.lines[end].strip() and end > start:
                last_blank = end
            end += 1
        if end < len(piece.lines) and last_blank > start and size > MAX_CHARS // 2:
            end = last_blank + 1
        first = piece.start + start
        lines = piece.lines[start:end]
        while lines and not lines[0].strip():  # a chunk's place is where its text is
            lines = lines[1:]
            first += 1
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        text = "\n".join(lines)
        if len(text) > MAX_CHARS:  # one very long line (minified code, a PDF without line breaks)
            for offset in range(0, len(text), MAX_CHARS):
                yield Chunk(text[offset : offset + MAX_CHARS], first, first, piece.page, piece.heading)
        elif lines:
            yield Chunk(text, first, first + len(lines) - 1, piece.page, piece.heading)
        start = end
