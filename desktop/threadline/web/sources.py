"""The web results that reached the model, as the reply's sources of kind ``web``.

Derived from the history, not kept aside (docs/design.md §1, "history is the source of
truth"): a reply's web sources are the ``web_search`` results and ``fetch_page`` pages in the
tool results on its path since the prompt that began the turn — exactly what the request that
made the reply carried. A page read in full replaces the search result with its URL, in its
place, so a number once given stays the same for the rest of the turn.

The model sees the same numbers: ``numbered_path`` labels each of the turn's web results with
``"cite": "[n]"`` when the request is built, counting on from the knowledge passages sent with
it, which is the order the reply's Sources list shows (docs/web.md, "Sources").
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from threadline.core.conversation import Conversation
from threadline.core.messages import Message, MessageKind, ToolResult
from threadline.core.request import ToolSpec
from threadline.core.sources import Source, SourceKind, SourceLocator
from threadline.web.tools import FETCH_PAGE, WEB_SEARCH, WEB_TOOL_NAMES

CITE = "cite"
"""The key of the number a web result carries in the request: ``"[n]"``, as the model cites it."""


def offers_web(offered: Sequence[ToolSpec]) -> bool:
    return any(spec.name in WEB_TOOL_NAMES for spec in offered)


def web_sources_of(conversation: Conversation, offered: Sequence[ToolSpec]) -> tuple[Source, ...]:
    """The web sources of the reply ``conversation`` is making; nothing to look for (and no path
    to unpack) when the request offered no web tool."""
    if not offers_web(offered):
        return ()
    return web_sources(conversation.path())


def web_sources(path: Sequence[Message]) -> tuple[Source, ...]:
    """The web sources of the turn that ends ``path`` (the path up to the reply being made)."""
    found: dict[str, Source] = {}
    for result, value in _turn_results(path):
        for item, text in _items(result, value):
            _add(found, item, text)
    return tuple(found.values())


def numbered_path(path: Sequence[Message], first: int) -> list[Message]:
    """``path`` with each web result of its last turn labelled with its source number.

    ``first`` is the number of the first web source: one more than the knowledge passages sent
    with the same request, which come first in the reply's Sources. Only the request changes;
    the stored tool results stay as the tools returned them.
    """
    numbers = {source.locator.url: n for n, source in enumerate(web_sources(path), start=first)}
    if not numbers:
        return list(path)
    start = _turn_start(path)
    out = list(path)
    for i in range(start + 1, len(out)):
        message = out[i]
        if any(_is_web(r) for r in message.tool_results):
            labelled = tuple(_numbered(r, numbers) for r in message.tool_results)
            out[i] = replace(message, tool_results=labelled)
    return out


def _numbered(result: ToolResult, numbers: dict[str, int]) -> ToolResult:
    value = result.json_value() if _is_web(result) else None
    if not isinstance(value, dict):
        return result
    for item, _text in _items(result, value):
        item[CITE] = f"[{numbers[str(item['url'])]}]"
    return replace(result, text=json.dumps(value, ensure_ascii=False))


def _turn_start(path: Sequence[Message]) -> int:
    return max((i for i, m in enumerate(path) if m.kind is MessageKind.PROMPT), default=-1)


def _is_web(result: ToolResult) -> bool:
    return not result.is_error and result.tool_name in (WEB_SEARCH, FETCH_PAGE)


def _turn_results(path: Sequence[Message]) -> Iterator[tuple[ToolResult, dict[str, Any]]]:
    for message in path[_turn_start(path) + 1 :]:
        for result in message.tool_results:
            value = result.json_value() if _is_web(result) else None
            if isinstance(value, dict):
                yield result, value


def _items(result: ToolResult, value: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    """The results a web tool result holds (a search's hits, or the page), with their source text."""
    if result.tool_name == WEB_SEARCH:
        for item in value.get("results") or ():
            if isinstance(item, dict) and item.get("url"):
                yield item, str(item.get("snippet") or "")
    elif value.get("url"):
        yield value, str(value.get("text") or "")


def _add(found: dict[str, Source], item: dict[str, Any], text: str) -> None:
    """The newest look at a URL is what counts; it keeps the place (and number) of the first."""
    url = str(item["url"])
    found[url] = Source(
        kind=SourceKind.WEB,
        label=urlsplit(url).hostname or url,
        locator=SourceLocator(url=url, heading=str(item.get("title") or "")),
        text=text,
    )
