"""The web: searching it through the provider the user chose, and reading one page.

A lower-layer room (beside ``knowledge`` and ``models``): it knows HTTP, the search
providers' JSON and the address rules, and nothing of conversations or storage. The
engine's ``engine.web`` facet keeps the settings and the keys and hands this package a
``WebConfig``; the ``web_search`` and ``fetch_page`` tools live in ``web/tools.py``.
Why the rules are what they are: docs/web.md.
"""

from __future__ import annotations

from threadline.web.config import Endpoints, WebConfig, WebProvider
from threadline.web.errors import WebError
from threadline.web.fetch import FetchLimits, Page, PageFetcher
from threadline.web.search import SearchResult

__all__ = [
    "Endpoints",
    "FetchLimits",
    "Page",
    "PageFetcher",
    "SearchResult",
    "WebConfig",
    "WebError",
    "WebProvider",
]
