"""A reply as it is read aloud: sentences of plain words, never Markdown read as symbols.

A listener cannot skim, so what is long and visual is said in a few words instead of spelled
out: a code block is "Code block, 12 lines.", a table "Table, 4 rows.", a formula "Formula.",
an image its description. Links are read as their text, emphasis and inline code as their
words, headings and list items as sentences of their own. The Markdown is parsed with
markdown-it-py, the parser the chat view renders with, so what is heard is what is seen.

While a reply streams, ``SpokenFeed`` gives the sentences that are complete: the text of a
paragraph up to its last full stop, and a block (a code block, a table) only once it has
ended, so "Code block, 3 lines" is not said of a block that will have 40.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.token import Token

_SENTENCE_END = re.compile(r"(?<=[.!?…。！？])[\"'”’)\]]*\s+(?=\S)")
_MATH_INLINE = re.compile(r"\$\$[^$]+\$\$|(?<![\\$\w])\$[^$\n]+\$(?![\w$])|\\\(.+?\\\)|\\\[.+?\\\]", re.S)
_SPACES = re.compile(r"\s+")


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table").enable("strikethrough")


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _inline_words(token: Token) -> str:
    """The words of an inline token: text, code as its words, links as their text, images as
    their description; formulas as the word "formula"."""
    parts: list[str] = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            alt = "".join(c.content for c in child.children or [])
            parts.append(f"image: {alt}" if alt else "image")
    text = _MATH_INLINE.sub("formula", "".join(parts))
    return _SPACES.sub(" ", text).strip()


def _sentences(text: str) -> list[str]:
    """``text`` split after its full stops; a piece without one gets one (headings, items)."""
    pieces = [p.strip() for p in _SENTENCE_END.split(text) if p.strip()]
    return [p if p[-1] in ".!?…:;。！？\"'”’)" else p + "." for p in pieces]


def _blocks(tokens: list[Token]) -> Iterator[tuple[int, list[str]]]:
    """(the source line a block starts at, its sentences) for each block read aloud."""
    i = 0
    while i < len(tokens):
        token = tokens[i]
        line = token.map[0] if token.map else 0
        if token.type in ("fence", "code_block"):
            lines = token.content.rstrip("\n").count("\n") + 1 if token.content.strip() else 0
            language = token.info.split()[0] if token.info.strip() else ""
            what = (
                f"{language} code block" if language and language not in ("math", "latex") else "Code block"
            )
            if language in ("math", "latex"):
                yield line, ["Formula."]
            else:
                yield line, [f"{what[0].upper()}{what[1:]}, {_count(lines, 'line', 'lines')}."]
        elif token.type == "table_open":
            rows = 0
            while i < len(tokens) and tokens[i].type != "table_close":
                rows += tokens[i].type == "tr_open"
                i += 1
            yield line, [f"Table, {_count(max(rows - 1, 0), 'row', 'rows')}."]
        elif token.type == "math_block" or (token.type == "paragraph_open" and _is_formula(tokens, i)):
            yield line, ["Formula."]
            if token.type == "paragraph_open":
                i += 2
        elif token.type == "inline":
            words = _inline_words(token)
            if words:
                yield line, _sentences(words)
        elif token.type == "hr":
            pass
        i += 1


def _is_formula(tokens: list[Token], i: int) -> bool:
    """A paragraph that is a display formula alone (``$$ … $$`` or ``\\[ … \\]``)."""
    if i + 1 >= len(tokens) or tokens[i + 1].type != "inline":
        return False
    content = tokens[i + 1].content.strip()
    return (content.startswith("$$") and content.endswith("$$") and len(content) > 4) or (
        content.startswith("\\[") and content.endswith("\\]")
    )


def spoken_sentences(markdown: str) -> list[str]:
    """Every sentence of ``markdown`` as it is read aloud."""
    return [s for _line, sentences in _blocks(_parser().parse(markdown)) for s in sentences]


class SpokenFeed:
    """The sentences of a streaming reply, each given once, as soon as it is complete."""

    def __init__(self) -> None:
        self._given = 0
        self._parser = _parser()

    def update(self, markdown: str, *, final: bool = False) -> list[str]:
        """The sentences complete in ``markdown`` (the reply so far) not given before.

        Until ``final``, the last block is held back unless it is a paragraph, of which the
        sentences before the last are given (the last may still grow).
        """
        blocks = list(_blocks(self._parser.parse(markdown)))
        ready: list[str] = []
        for index, (_line, sentences) in enumerate(blocks):
            last = index == len(blocks) - 1
            if last and not final:
                if _ends_open(markdown):
                    break
                ready.extend(sentences[:-1])
                break
            ready.extend(sentences)
        new = ready[self._given :]
        self._given = max(self._given, len(ready))
        return new


def _ends_open(markdown: str) -> bool:
    """Whether the text ends inside a block that is only read once whole: an unclosed code
    fence, a table, a display formula."""
    fences = re.findall(r"^\s{0,3}(```|~~~)", markdown, re.M)
    if len(fences) % 2 == 1:
        return True
    tail = markdown.rstrip("\n").rsplit("\n\n", 1)[-1].lstrip()
    return tail.startswith("|") or tail.startswith("$$") or tail.startswith("\\[")
