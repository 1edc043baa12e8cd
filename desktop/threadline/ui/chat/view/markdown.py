"""Markdown of messages to the HTML subset QTextDocument renders, safely.

Model output is untrusted (docs/design.md §6), so the renderer:

* never emits raw HTML from the text (markdown-it's ``html`` option is off: ``<b>`` shows
  as text);
* never emits ``<img>``: an image in model output becomes a muted "[image: alt]" label,
  so nothing is fetched, not even from a local path;
* keeps ``href`` only for http, https and mailto links; any other scheme renders as
  plain text. The chat view checks the scheme again when a link is clicked.

Code blocks are highlighted with Pygments (inline colours, no stylesheet classes, as
QTextDocument understands) inside a one-cell table that draws the box, with a header
carrying the language and a ``copy-code:N`` anchor the view turns into a copy button.
Streaming replies are rendered without highlighting (``highlight=False``): the text is
still changing and Pygments is the expensive part.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML

from threadline.ui.chat.view.math_markdown import MATH_DISPLAY, MATH_INLINE, math_plugin
from threadline.ui.chat.view.table_tokens import open_link_html, table_cells, table_key

if TYPE_CHECKING:
    from markdown_it.token import Token
    from markdown_it.utils import EnvType, OptionsDict
    from pygments.formatters import HtmlFormatter
    from pygments.lexer import Lexer

    from threadline.ui.common.theme import ThemeColors

Rule = Callable[["list[Token]", int], str]
"""One of the renderer's own rules: the HTML of token N of a token list."""

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
COPY_CODE_SCHEME = "copy-code"
UNSEARCHED_TITLE = "\u2060"
"""The ``title`` of text a document shows that is not part of the message (a code box's
language, a formula's source while it is not a picture, "Thinking…"): find leaves it out
of its count, so the highlights leave it out too (``find_bar``). A word joiner: no tooltip
shows it, and no text has it as a title."""
UNSEARCHED = f' title="{UNSEARCHED_TITLE}"'
"""The attribute that marks an element as ``UNSEARCHED_TITLE``."""


_CITATION = re.compile(r"\[(\d{1,3})\]")


@dataclass(frozen=True, slots=True)
class Citations:
    """How many sources a reply has, and the HTML of a citation link to source n."""

    count: int
    link: Callable[[int], str]


class FormulaHtml(Protocol):
    """Turns a LaTeX formula into HTML (an image, or its source): see ``math_render.FormulaImages``."""

    def html(self, latex: str, display: bool) -> str: ...


def _mix_hex(colour: str, towards: str, amount: float) -> str:
    """``#rrggbb`` of ``colour`` moved ``amount`` of the way to ``towards`` (no Qt needed here)."""
    a = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    b = [int(towards[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * amount):02x}" for x, y in zip(a, b, strict=True))


def is_safe_link(url: str) -> bool:
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:
        return False
    return scheme in SAFE_SCHEMES


@dataclass(slots=True)
class RenderedMarkdown:
    html: str
    code_blocks: list[str] = field(default_factory=list)
    """Raw text of each fenced/indented code block, indexed by the N of ``copy-code:N``."""
    unhighlighted: set[str] = field(default_factory=set)
    """Languages left plain because their lexer was not built yet (``defer_lexers``)."""


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.use(math_plugin)
    return md


@lru_cache(maxsize=4)
def _formatter(style: str) -> HtmlFormatter[str]:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(nowrap=True, noclasses=True, style=style)


def _pygments_highlight(code: str, lexer: Lexer, formatter: HtmlFormatter[str]) -> str:
    # Imported here, not at the top: importing Pygments costs more than a frame, and a
    # conversation without code never needs it (prepare_highlighting imports it after a frame).
    from pygments import highlight

    return highlight(code, lexer, formatter)


_lexers: dict[str, Lexer | None] = {}
"""Built Pygments lexers by language name (None: no lexer for that name)."""


def _lexer(language: str) -> Lexer | None:
    if language not in _lexers:
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound

        try:
            _lexers[language] = get_lexer_by_name(language, stripnl=False, ensurenl=False)
        except ClassNotFound:
            _lexers[language] = None
    return _lexers[language]


def lexer_ready(language: str) -> bool:
    """Whether highlighting ``language`` is cheap now (Pygments compiles a lexer's regular
    expressions on first use: ~50 ms for Python, more than a frame)."""
    return not language or language.lower() in _lexers


def prepare_highlighting(languages: set[str], style: str) -> None:
    """Import Pygments and build the lexers for ``languages`` (the view calls this after a frame)."""
    for language in languages:
        _lexer(language.lower())
    _formatter(style)
    import pygments  # noqa: F401 - imported now so the first highlight does not pay for it


def highlight_code(code: str, language: str, style: str) -> str:
    """Pygments HTML for ``code`` (escaped plain text when the language is unknown)."""
    lexer = _lexer(language.lower()) if language else None
    if lexer is None:
        return html.escape(code)
    return _pygments_highlight(code, lexer, _formatter(style))


def document_css(c: ThemeColors, *, base_pt: float = 10.5) -> str:
    """The default stylesheet of every message document (the subset QTextDocument supports)."""
    return f"""
p {{ margin-top: 0px; margin-bottom: 8px; }}
a {{ color: {c.link}; text-decoration: none; }}
code {{ font-family: 'DejaVu Sans Mono', 'Menlo', 'Consolas', monospace;
        background-color: {c.inline_code_bg}; }}
pre {{ font-family: 'DejaVu Sans Mono', 'Menlo', 'Consolas', monospace; margin: 0px; }}
h1 {{ font-size: {base_pt * 1.5:.1f}pt; margin-top: 10px; margin-bottom: 6px; }}
h2 {{ font-size: {base_pt * 1.3:.1f}pt; margin-top: 10px; margin-bottom: 6px; }}
h3 {{ font-size: {base_pt * 1.15:.1f}pt; margin-top: 8px; margin-bottom: 4px; }}
h4, h5, h6 {{ font-size: {base_pt:.1f}pt; margin-top: 6px; margin-bottom: 4px; }}
ul, ol {{ margin-top: 0px; margin-bottom: 8px; }}
li {{ margin-bottom: 2px; }}
blockquote {{ color: {c.muted}; margin-left: 12px; margin-top: 0px; margin-bottom: 8px; }}
th {{ font-weight: 600; background-color: {c.code_bg}; }}
hr {{ color: {c.border}; }}
.muted {{ color: {c.muted}; }}
"""


def _has_text(tokens: list[Token]) -> bool:
    """Whether inline tokens show anything (line breaks and blanks do not)."""
    return any(t.type not in ("softbreak", "hardbreak") and (t.content.strip() or t.nesting) for t in tokens)


class _Renderer:
    """Per-call state (code block list) around the shared markdown-it parser."""

    def __init__(
        self,
        colors: ThemeColors,
        highlight: bool,
        code_offset: int = 0,
        defer_lexers: bool = False,
        math: FormulaHtml | None = None,
        citations: Citations | None = None,
    ) -> None:
        self.math = math
        self.citations = citations
        self.in_link = False
        self.table_key = ""
        """The key of the table being rendered (its "Open table" link names it)."""
        self.in_paragraph = False
        """Inside a visible ``<p>`` (not a tight list item's hidden one)."""
        self.lone_display = False
        """The current paragraph is one display formula (already centred)."""
        self.colors = colors
        self.highlight = highlight
        self.defer_lexers = defer_lexers
        self.unhighlighted: set[str] = set()
        self.code_offset = code_offset
        self.code_blocks: list[str] = []

    # -- rules -------------------------------------------------------------------

    def code_block(self, tokens: list[Token], idx: int) -> str:
        token = tokens[idx]
        info = (token.info or "").strip().split()
        language = info[0] if info else ""
        return self.code_box(token.content, language)

    def code_box(self, code: str, language: str) -> str:
        c = self.colors
        n = self.code_offset + len(self.code_blocks)
        self.code_blocks.append(code)
        body_code = code[:-1] if code.endswith("\n") else code
        highlight = self.highlight
        if highlight and self.defer_lexers and not lexer_ready(language):
            self.unhighlighted.add(language)
            highlight = False
        body = highlight_code(body_code, language, c.pygments_style) if highlight else html.escape(body_code)
        body = body.rstrip("\n")
        label = html.escape(language) if language else "code"
        return (
            f'<table width="100%" cellspacing="0" cellpadding="8" '
            f'style="background-color:{c.code_bg}; border: 1px solid {c.code_border}; '
            f'border-collapse: collapse; margin-top: 2px; margin-bottom: 10px;">'
            f'<tr><td style="border-bottom: 1px solid {c.code_border}; padding: 3px 8px;">'
            f'<table width="100%" cellspacing="0" cellpadding="0"><tr>'
            f'<td><span{UNSEARCHED} style="color:{c.muted}; font-size: small;">{label}</span></td>'
            f'<td align="right"><a href="{COPY_CODE_SCHEME}:{n}" '
            f'style="color:{c.muted}; font-size: small; text-decoration: none;">Copy</a></td>'
            f"</tr></table></td></tr>"
            f'<tr><td><pre style="color:{c.text};">{body}</pre></td></tr></table>\n'
        )

    def formula(self, tokens: list[Token], idx: int) -> str:
        token = tokens[idx]
        display = token.type == MATH_DISPLAY
        if self.math is None:
            source = f"$${token.content}$$" if display else f"${token.content}$"
            return f"<code{UNSEARCHED}>{html.escape(source)}</code>"
        shown = self.math.html(token.content, display)
        if not display or not self.in_paragraph or self.lone_display:
            return shown
        # Display math in the middle of a paragraph gets a centred paragraph of its own.
        before = "</p>" if _has_text(tokens[:idx]) else ""
        after = "<p>" if _has_text(tokens[idx + 1 :]) else ""
        return f'{before}<p align="center" style="margin-top: 4px; margin-bottom: 10px;">{shown}</p>{after}'

    def paragraph_open(self, tokens: list[Token], idx: int) -> str | None:
        """A paragraph that is one display formula is centred (None: the usual ``<p>``)."""
        inline = tokens[idx + 1].children or [] if idx + 1 < len(tokens) else []
        children = [t for t in inline if t.type not in ("softbreak", "hardbreak")]
        self.in_paragraph = not tokens[idx].hidden
        self.lone_display = self.in_paragraph and len(children) == 1 and children[0].type == MATH_DISPLAY
        if not self.lone_display:
            return None
        return '<p align="center" style="margin-top: 4px; margin-bottom: 10px;">'

    def image(self, tokens: list[Token], idx: int) -> str:
        token = tokens[idx]
        alt = "".join(child.content for child in token.children or [])
        src = str(token.attrs.get("src", ""))
        label = html.escape(alt or src or "image")
        return f'<span style="color:{self.colors.muted};">[image: {label}]</span>'

    def text(self, tokens: list[Token], idx: int) -> str:
        """Plain text, with each ``[n]`` that names one of the reply's sources as its link."""
        content = tokens[idx].content
        cite = self.citations
        if cite is None or self.in_link or "[" not in content:
            return html.escape(content)
        out: list[str] = []
        last = 0
        for match in _CITATION.finditer(content):
            number = int(match.group(1))
            if not 1 <= number <= cite.count:
                continue
            out += [html.escape(content[last : match.start()]), cite.link(number)]
            last = match.end()
        return "".join(out) + html.escape(content[last:])

    def link_open(self, tokens: list[Token], idx: int) -> str:
        self.in_link = True
        href = str(tokens[idx].attrs.get("href", ""))
        if is_safe_link(href):
            title = html.escape(href, quote=True)
            return f'<a href="{html.escape(href, quote=True)}" title="{title}">'
        tokens[idx].meta["unsafe"] = True
        return f'<span style="color:{self.colors.muted};">'

    def link_close(self, tokens: list[Token], idx: int) -> str:
        self.in_link = False
        # Find the matching opener to know whether it was rendered as a span.
        level = tokens[idx].level
        for j in range(idx - 1, -1, -1):
            if tokens[j].type == "link_open" and tokens[j].level == level:
                return "</span>" if tokens[j].meta.get("unsafe") else "</a>"
        return "</a>"

    def table_close(self, tokens: list[Token], idx: int) -> str:
        """The table's end and its "⤢ Open table" link (``wide_tables``)."""
        return "</table>\n" + open_link_html(self.table_key, self.colors)

    def table_open(self, tokens: list[Token], idx: int) -> str:
        self.table_key = table_key(table_cells(tokens, idx)[0])
        c = self.colors
        grid = _mix_hex(c.border, c.text, 0.12)  # code_border is too faint for a grid on white
        return (
            f'<table cellspacing="0" cellpadding="5" border="1" style="border-collapse: collapse; '
            f'border-style: solid; border-color: {grid}; margin-bottom: 10px;">'
        )


def parse_markdown(text: str) -> list[Token]:
    """The markdown-it tokens of ``text``, parsed as the chat renders it (tables, math)."""
    return _parser().parse(text)


def render_markdown(
    text: str,
    colors: ThemeColors,
    *,
    highlight: bool = True,
    code_offset: int = 0,
    defer_lexers: bool = False,
    math: FormulaHtml | None = None,
    citations: Citations | None = None,
) -> RenderedMarkdown:
    """HTML for ``text`` plus the code blocks it contains (for the per-block copy buttons).

    ``code_offset`` numbers the copy anchors after those of earlier parts of the same message
    (the chat view renders a streaming reply part by part). With ``defer_lexers``, code in a
    language whose lexer is not built yet stays plain and is named in ``unhighlighted``, so
    a first frame never waits for Pygments (the view highlights right after that frame).
    ``math`` turns LaTeX formulas into images; without it they show as their source.
    ``citations`` turns ``[n]`` in the text (not in code or links) into links to the reply's
    sources (``source_list``).
    """
    md = _parser()
    renderer = _Renderer(colors, highlight, code_offset, defer_lexers, math, citations)
    tokens = md.parse(text)
    html_out = _render_tokens(md, tokens, renderer)
    return RenderedMarkdown(html_out, renderer.code_blocks, renderer.unhighlighted)


def _render_tokens(md: MarkdownIt, tokens: list[Token], r: _Renderer) -> str:
    # Rules are per call (they close over the renderer's state), so they are passed in
    # through a fresh rules dict rather than installed on the shared parser.
    base = md.renderer
    if not isinstance(base, RendererHTML):  # the parser is built with the default renderer
        raise TypeError(f"unexpected markdown-it renderer {type(base).__name__}")
    custom: dict[str, Rule] = {
        "fence": lambda toks, i: r.code_block(toks, i),
        "code_block": lambda toks, i: r.code_block(toks, i),
        "image": lambda toks, i: r.image(toks, i),
        "link_open": lambda toks, i: r.link_open(toks, i),
        "link_close": lambda toks, i: r.link_close(toks, i),
        "table_open": lambda toks, i: r.table_open(toks, i),
        "table_close": lambda toks, i: r.table_close(toks, i),
        MATH_INLINE: lambda toks, i: r.formula(toks, i),
        MATH_DISPLAY: lambda toks, i: r.formula(toks, i),
    }
    if r.citations is not None:
        custom["text"] = lambda toks, i: r.text(toks, i)
    options: OptionsDict = md.options
    env: EnvType = {}
    out: list[str] = []
    for i, token in enumerate(tokens):
        if token.type == "inline":
            out.append(_render_inline(base, token.children or [], options, env, custom))
        elif token.type == "paragraph_open" and (centred := r.paragraph_open(tokens, i)) is not None:
            out.append(centred)
        elif token.type == "paragraph_close":
            r.in_paragraph = r.lone_display = False
            out.append(base.renderToken(tokens, i, options, env))
        elif token.type in custom:
            out.append(custom[token.type](tokens, i))
        else:
            out.append(base.renderToken(tokens, i, options, env))
    return "".join(out)


def _render_inline(
    base: RendererHTML, tokens: list[Token], options: OptionsDict, env: EnvType, custom: dict[str, Rule]
) -> str:
    out: list[str] = []
    for i, token in enumerate(tokens):
        if token.type in custom:
            out.append(custom[token.type](tokens, i))
        elif token.type in base.rules:
            out.append(base.rules[token.type](tokens, i, options, env))
        else:
            out.append(base.renderToken(tokens, i, options, env))
    return "".join(out)


def plain_text_html(text: str, colors: ThemeColors) -> str:
    """HTML for text shown verbatim (prompts keep their line breaks and are not Markdown)."""
    escaped = html.escape(text).replace("\n", "<br/>")
    return f'<p style="white-space: pre-wrap;">{escaped}</p>'


def stable_boundary(text: str, start: int = 0) -> int:
    """Where the finished part of a growing Markdown text ends.

    The index just after the last blank line that is outside a code fence: what comes
    before it will not change meaning as more text arrives (paragraph-level Markdown),
    so a streaming reply renders that part once and re-renders only the tail.

    ``start`` is an earlier boundary of the same text: a boundary is outside any fence,
    so scanning can resume there, and a frame costs the tail, not the whole reply.
    """
    boundary = start
    in_fence = False
    pos = start
    for line in text[start:].splitlines(keepends=True):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
        elif not in_fence and not stripped.strip() and line.endswith("\n"):
            boundary = pos + len(line)
        pos += len(line)
    if not text.endswith("\n"):
        # the last line is still being written; never cut inside it
        boundary = min(boundary, text.rfind("\n") + 1 if "\n" in text else 0)
    return boundary
