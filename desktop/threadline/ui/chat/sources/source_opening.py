"""Where a source opens: a pure decision, tested without a desktop.

* A web source opens its URL in the browser (http and https only).
* A PDF opens in the system's viewer through a ``file:`` URL with the fragment
  ``#page=N`` (the "PDF open parameters" that browsers' PDF viewers and Acrobat honour;
  a viewer that ignores it opens the file at its first page, and ``xdg-open`` drops it).
* A text file whose passage has lines (Markdown, code, plain text) opens in Threadline's
  own viewer, scrolled to the lines and highlighted: the lines are those of the file as
  it is on disk, which no system editor can be told in one portable way.
* Any other file (Word, spreadsheets, slides, HTML, a passage without lines) opens in
  the system's app for it; its page or section is named in the Sources row.
* A source without a file or URL (an MCP resource's text) shows the passage that was sent.

docs/knowledge.md, "In the chat".
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import PurePath

from threadline.core.sources import Source

SYSTEM_APP_SUFFIXES = frozenset(
    {".pdf", ".docx", ".doc", ".xlsx", ".xls", ".pptx", ".ppt", ".odt", ".ods", ".odp", ".rtf", ".epub"}
    | {".html", ".htm", ".xhtml"}
)
"""Files whose indexed text is extracted, not the file's own lines: the system app opens them."""


class Way(Enum):
    BROWSER = "browser"
    DESKTOP = "desktop"
    """The system's app for the file (``QDesktopServices.openUrl`` of a ``file:`` URL)."""
    VIEWER = "viewer"
    """Threadline's viewer, at ``line_start``…``line_end`` of the file."""
    PASSAGE = "passage"
    """Threadline's viewer with the passage that was sent (nothing else to open)."""


@dataclass(frozen=True, slots=True)
class Opening:
    way: Way
    target: str = ""
    """The URL for the browser, the path for the desktop or the viewer."""
    page: int | None = None


def opening_of(source: Source) -> Opening:
    where = source.locator
    if where.url:
        scheme = where.url.split(":", 1)[0].lower()
        if scheme in ("http", "https"):
            return Opening(Way.BROWSER, where.url)
        return Opening(Way.PASSAGE)
    if not where.path:
        return Opening(Way.PASSAGE)
    suffix = PurePath(where.path).suffix.lower()
    if suffix in SYSTEM_APP_SUFFIXES or where.line_start is None:
        return Opening(Way.DESKTOP, where.path, where.page if suffix == ".pdf" else None)
    return Opening(Way.VIEWER, where.path)
