"""The web results that reached the model, as the reply's sources of kind ``web``.

Derived from the history, not kept aside (docs/design.md §1, "history is the source of
truth"): a reply's web sources are the ``web_search`` results and ``fetch_page`` pages in the
tool results on its path since the prompt that began the turn — exactly what the request that
made the reply carried. A page read in full replaces the search result with its URL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from threadline.core.conversation import Conversation
from threadline.core.messages import Message, MessageKind
from threadline.core.request import ToolSpec
from threadline.core.sources import Source, SourceKind, SourceLocator
from threadline.web.tools import FETCH_PAGE, WEB_SEARCH, WEB_TOOL_NAMES


def web_sources_of(conversation: Conversation, offered: Sequence[ToolSpec]) -> tuple[Source, ...]:
    """The web sources of the reply ``conversation`` is making; nothing to look for (and no path
    to unpack) when the request offered no web tool."""
    if not any(spec.name in WEB_TOOL_NAMES for spec in offered):
        return ()
    return web_sources(conversation.path())


def web_sources(path: Sequence[Message]) -> tuple[Source, ...]:
    """The web sources of the turn that ends ``path`` (the path up to the reply being made)."""
    start = max((i for i, m in enumerate(path) if m.kind is MessageKind.PROMPT), default=-1)
    found: dict[str, Source] = {}
    for message in path[start + 1 :]:
        for result in message.tool_results:
            if result.is_error or result.tool_name not in (WEB_SEARCH, FETCH_PAGE):
                continue
            value = result.json_value()
            if not isinstance(value, dict):
                continue
            if result.tool_name == WEB_SEARCH:
                for item in value.get("results") or ():
                    if isinstance(item, dict) and item.get("url"):
                        _add(found, item, str(item.get("snippet") or ""))
            elif value.get("url"):
                _add(found, value, str(value.get("text") or ""))
    return tuple(found.values())


def _add(found: dict[str, Source], item: dict[str, Any], text: str) -> None:
    url = str(item["url"])
    found.pop(url, None)  # the newest look at a URL is what counts, and it goes last
    found[url] = Source(
        kind=SourceKind.WEB,
        label=urlsplit(url).hostname or url,
        locator=SourceLocator(url=url, heading=str(item.get("title") or "")),
        text=text,
    )
