"""HTML to readable text with the standard library's parser: no scripts, no styles, no network.

Block elements become line breaks, headings ``#`` lines and list items ``-`` lines,
so the structure survives without the markup. ``script``, ``style``, ``template``,
``noscript`` and ``svg`` content is dropped; entities are decoded by the parser.
Nothing is fetched (the parser never follows a URL).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

SKIPPED = frozenset({"script", "style", "template", "noscript", "svg", "iframe", "object"})
BLOCKS = frozenset(
    {
        "p", "div", "section", "article", "header", "footer", "main", "aside", "nav", "blockquote",
        "pre", "table", "tr", "ul", "ol", "dl", "dt", "dd", "figure", "figcaption", "form", "hr",
        "address", "details", "summary",
    }
)  # fmt: skip
HEADINGS = {f"h{n}": n for n in range(1, 7)}


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self._skip = 0
        self._in_title = False
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIPPED:
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif tag in HEADINGS:
            self.parts.append("\n\n" + "#" * HEADINGS[tag] + " ")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag == "br":
            self.parts.append("\n")
        elif tag in ("td", "th"):
            self.parts.append(" | ")
        elif tag in BLOCKS:
            self.parts.append("\n\n" if tag != "tr" else "\n")
            if tag == "pre":
                self._pre += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.parts.append("\n")
        elif tag == "hr":
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED:
            self._skip = max(0, self._skip - 1)
        elif tag == "title":
            self._in_title = False
        elif tag in HEADINGS or tag in BLOCKS:
            self.parts.append("\n\n")
            if tag == "pre":
                self._pre = max(0, self._pre - 1)

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif not self._skip:
            self.parts.append(data if self._pre else re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> str:
    """The readable text of ``html`` (its title first, as a heading, when it has one)."""
    parser = _TextParser()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    lines = [line.strip() for line in text.split("\n")]
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    title = " ".join("".join(parser.title).split())
    if title and not body.startswith(f"# {title}"):
        body = f"# {title}\n\n{body}" if body else f"# {title}"
    return body
