"""Find in a chat: every match of a query in the messages of a conversation's path.

A pure function over message data, not over painted widgets: the chat view renders only
what is on screen, so searching its documents would miss most of a long chat and cost a
layout per message. Searching the stored text finds matches in parts that are not drawn
at all — a collapsed tool call's arguments, a tool's output — and is fast: a 10,000-message
chat answers in milliseconds (``bench/find_bench.py`` measures it).

Each message is searched part by part, in the order the view shows them: a reply's
reasoning (its "Thought for 12 s" block), its text, then each tool call's arguments and
each tool result's output. A part is named by its key: ``""`` for the text,
``"<message id>:thinking"`` for the reasoning and ``"<message id>:<call id>"`` for a tool
box (the same keys the view uses to open or close them), so the find bar can open the
block a match is in.

A find must count exactly what the view can highlight, or "3 of 17" points at the wrong
place. So each part is searched as it is shown, not as it is stored: a tool call's
arguments and a JSON tool result as their box shows them (indented, unescaped), and a
reply's text through ``shown_text`` — the chat passes a function that turns Markdown into
the text its document holds (``ui/chat/find/find_shown_text.py``): no markup, link text
without its address, each paragraph, list item, cell and code line on a line of its own,
formulas left out (they are pictures). Without it the stored text is searched.

The parts are joined into one string and searched with ``str.find`` (see :class:`Corpus`).
Matching ignores case by default (``str.lower`` on both sides). Where lowering changes the
text's length (a few characters such as "İ" do), the offsets would no longer point into
the original, so such a text is searched with a case-insensitive regular expression instead.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from threadline.core.messages import Message

TEXT_PART = ""
"""The key of a message's own text."""

Part = tuple[str, str]
"""(key, text) of one searchable part of a message."""

ShownText = Callable[[Message], str]
"""A message's text as the view shows it (for a reply: its Markdown rendered to plain text)."""

THINKING_SUFFIX = ":thinking"
"""A reasoning part's key is the message id and this (the view's key of the thinking block)."""


def thinking_part(message_id: str) -> str:
    """The key of a reply's reasoning part."""
    return message_id + THINKING_SUFFIX


def is_thinking_part(key: str) -> bool:
    return key.endswith(THINKING_SUFFIX)


def shown_reasoning(message: Message) -> str:
    """A reply's reasoning as its opened block shows it: each block's text, a blank line between."""
    return "\n\n".join(b.text.strip("\n") for b in message.reasoning if b.text.strip())


@dataclass(frozen=True, slots=True)
class Match:
    """One occurrence of the query."""

    message_index: int
    """Position of the message in the searched sequence (the view's row)."""
    part: str
    """``TEXT_PART`` or the tool box key the match is in."""
    offset: int
    """Where the match starts in that part's text."""
    length: int


def searchable_parts(message: Message, shown_text: ShownText | None = None) -> list[Part]:
    """The texts of a message a find looks in, in the order they are shown (the text as
    ``shown_text`` gives it, if given)."""
    parts: list[Part] = []
    if message.reasoning and (reasoning := shown_reasoning(message)):
        parts.append((thinking_part(message.id), reasoning))
    if message.text and (text := shown_text(message) if shown_text is not None else message.text):
        parts.append((TEXT_PART, text))
    for call in message.tool_calls:
        if call.arguments:
            parts.append((f"{message.id}:{call.id}", shown_arguments(call.arguments)))
    for result in message.tool_results:
        if result.text:
            parts.append((f"{message.id}:{result.call_id}", shown_result(result.text)))
    return parts


def shown_arguments(arguments: str) -> str:
    """A tool call's arguments as its box shows them: indented JSON with text unescaped
    (``"Troms\\u00f8"`` is found as "Tromsø")."""
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except (ValueError, TypeError):
        return arguments


def shown_result(text: str) -> str:
    """A tool's output as its box shows it: a JSON object or list indented and unescaped,
    anything else as it came."""
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return text  # not JSON: no parse attempt (most output is text)
    try:
        value = json.loads(text)
    except (ValueError, TypeError):
        return text
    return json.dumps(value, indent=2, ensure_ascii=False) if isinstance(value, dict | list) else text


SEPARATOR = "\x00"
"""Between the parts in the joined text (a query never holds it, so no match spans two parts)."""


class Corpus:
    """The searchable parts of a conversation joined into one string (lowered unless case matters).

    One ``str.find`` over a few megabytes runs at memory speed in C; a Python loop over
    10,000 messages does not. A match's position is turned back into (message, part, offset)
    with a binary search over where each part starts.
    """

    def __init__(
        self, messages: Sequence[Message], case_sensitive: bool, shown_text: ShownText | None = None
    ) -> None:
        self.case_sensitive = case_sensitive
        self.starts: list[int] = []
        self.owners: list[tuple[int, str]] = []
        texts: list[str] = []
        at = 0
        for i, message in enumerate(messages):
            for key, text in searchable_parts(message, shown_text):
                self.starts.append(at)
                self.owners.append((i, key))
                texts.append(text)
                at += len(text) + 1
        self.text = SEPARATOR.join(texts)
        lowered = self.text if case_sensitive else self.text.lower()
        self.lowered: str | None = lowered if len(lowered) == len(self.text) else None
        """The joined text lowered; None when lowering changed its length (search by regex)."""

    def matches(self, query: str) -> Iterator[Match]:
        if not query or SEPARATOR in query:
            return
        starts, owners = self.starts, self.owners
        if self.lowered is None:
            pattern = re.compile(re.escape(query), re.IGNORECASE)
            spans: Iterator[tuple[int, int]] = (
                (m.start(), m.end() - m.start()) for m in pattern.finditer(self.text)
            )
        else:
            spans = _find_all(self.lowered, query if self.case_sensitive else query.lower())
        for at, length in spans:
            k = bisect.bisect_right(starts, at) - 1
            index, key = owners[k]
            yield Match(index, key, at - starts[k], length)


def _find_all(haystack: str, needle: str) -> Iterator[tuple[int, int]]:
    length = len(needle)
    at = haystack.find(needle)
    while at >= 0:
        yield at, length
        at = haystack.find(needle, at + max(1, length))


class FindIndex:
    """The corpus of the last search, kept while no message changed.

    Typing a query searches again on every key; joining and lowering 10,000 messages each
    time would be most of the work. The corpus is built again only when a message's
    ``version`` changes (the caller passes the view model's revisions, which a streaming
    delta bumps) or messages come or go.
    """

    def __init__(self) -> None:
        self._signature: tuple[object, ...] | None = None
        self._corpus: Corpus | None = None

    def corpus(
        self,
        messages: Sequence[Message],
        versions: Sequence[object],
        case_sensitive: bool,
        shown_text: ShownText | None = None,
    ) -> Corpus:
        signature = (case_sensitive, shown_text, tuple(m.id for m in messages), tuple(versions))
        if self._corpus is None or signature != self._signature:
            self._corpus = Corpus(messages, case_sensitive, shown_text)
            self._signature = signature
        return self._corpus


def iter_matches(
    messages: Sequence[Message],
    query: str,
    *,
    case_sensitive: bool = False,
    index: FindIndex | None = None,
    versions: Sequence[object] | None = None,
    shown_text: ShownText | None = None,
) -> Iterator[Match]:
    """Every match of ``query`` in ``messages``, in reading order (lazily: the first comes at once).

    ``index`` keeps the joined text between calls; ``versions`` (one per message) tells it
    when a message changed; ``shown_text`` gives a message's text as the view shows it.
    """
    if not query:
        return iter(())
    if index is not None and versions is not None:
        corpus = index.corpus(messages, versions, case_sensitive, shown_text)
    else:
        corpus = Corpus(messages, case_sensitive, shown_text)
    return corpus.matches(query)


def find_matches(
    messages: Sequence[Message],
    query: str,
    *,
    case_sensitive: bool = False,
    index: FindIndex | None = None,
    versions: Sequence[object] | None = None,
    limit: int | None = None,
    shown_text: ShownText | None = None,
) -> list[Match]:
    """The matches of ``query`` in ``messages`` as a list (at most ``limit`` of them)."""
    found = iter_matches(
        messages, query, case_sensitive=case_sensitive, index=index, versions=versions, shown_text=shown_text
    )
    return list(found) if limit is None else list(itertools.islice(found, limit))
