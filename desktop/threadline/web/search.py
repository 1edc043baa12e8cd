"""Searching the web through the provider the user chose: results as title, URL and snippet.

SearXNG (``/search?format=json``), Brave Search (``/web/search`` with the
``X-Subscription-Token`` header), Tavily (``POST /search`` with a bearer key) and DuckDuckGo
through ``ddgs`` (no key; it reads DuckDuckGo's pages, so it breaks when they change: offered
as best-effort). The provider's own address is the user's choice and is not subject to the
local-address rule (docs/web.md); a key only ever goes to its own service (``Endpoints``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from threadline.llm._http import httpx_module
from threadline.web.config import Endpoints, WebConfig, WebProvider
from threadline.web.errors import WebError
from threadline.web.fetch import user_agent

MAX_RESULTS = 10
SEARCH_SECONDS = 20.0
SNIPPET_CHARS = 600


@dataclass(frozen=True, slots=True)
class SearchResult:
    title: str
    url: str
    snippet: str


class Searcher(Protocol):
    label: str

    async def search(self, query: str, limit: int) -> list[SearchResult]: ...


def searcher_for(config: WebConfig, api_key: str | None, endpoints: Endpoints) -> Searcher:
    """The provider ``config`` names; ``WebError`` when it is not set up (no URL, no key)."""
    provider = config.provider
    if provider is WebProvider.SEARXNG:
        if not config.searxng_url:
            raise WebError("SearXNG has no address: set it in Settings → Web.")
        return SearxngSearch(config.searxng_url)
    if provider in (WebProvider.BRAVE, WebProvider.TAVILY):
        if not api_key:
            where = f" or in ${config.api_key_env}" if config.api_key_env else ""
            raise WebError(
                f"There is no {provider.label} API key in the keychain{where}: add it in Settings → Web."
            )
        if provider is WebProvider.BRAVE:
            return BraveSearch(api_key, endpoints.brave)
        return TavilySearch(api_key, endpoints.tavily)
    if provider is WebProvider.DUCKDUCKGO:
        return DuckDuckGoSearch()
    raise WebError("No web search provider is chosen: pick one in Settings → Web.")


def _client() -> Any:
    httpx = httpx_module()
    return httpx.AsyncClient(
        timeout=httpx.Timeout(SEARCH_SECONDS),
        follow_redirects=True,
        headers={"User-Agent": user_agent(), "Accept": "application/json"},
    )


async def _json(label: str, send: Callable[[Any], Any]) -> Any:
    """The provider's JSON answer; every failure as a ``WebError`` naming the provider."""
    httpx = httpx_module()
    try:
        async with _client() as client:
            response = await send(client)
    except httpx.TimeoutException as err:
        raise WebError(f"{label} did not answer within {SEARCH_SECONDS:g} s.") from err
    except httpx.TransportError as err:
        raise WebError(f"{label} could not be reached ({type(err).__name__}: {err}).") from err
    if response.status_code in (401, 403):
        raise WebError(f"{label} refused the request (HTTP {response.status_code}): {_refusal_hint(label)}")
    if response.status_code == 429:
        raise WebError(f"{label} says too many searches were made (HTTP 429); try again later.")
    if response.status_code >= 400:
        raise WebError(f"{label} answered HTTP {response.status_code} {response.reason_phrase}.")
    try:
        return response.json()
    except ValueError as err:
        raise WebError(f"{label} did not answer with JSON; is the address right?") from err


def _refusal_hint(label: str) -> str:
    if label == "SearXNG":
        return "enable the JSON format in its settings.yml (search: formats: [html, json])."
    return "check the API key in Settings → Web."


def _clip(text: Any) -> str:
    value = " ".join(str(text or "").split())
    return value if len(value) <= SNIPPET_CHARS else value[: SNIPPET_CHARS - 1] + "…"


def _results(items: Any, title: str, url: str, snippet: str, limit: int) -> list[SearchResult]:
    found: list[SearchResult] = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get(url):
            found.append(SearchResult(_clip(item.get(title)), str(item[url]), _clip(item.get(snippet))))
    return found[:limit]


class SearxngSearch:
    label = "SearXNG"

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")

    async def search(self, query: str, limit: int) -> list[SearchResult]:
        url = f"{self.base_url}/search"
        data = await _json(self.label, lambda c: c.get(url, params={"q": query, "format": "json"}))
        return _results(
            data.get("results") if isinstance(data, dict) else None, "title", "url", "content", limit
        )


class BraveSearch:
    label = "Brave Search"

    def __init__(self, api_key: str, base_url: str) -> None:
        self._key = api_key
        self.base_url = base_url.rstrip("/")

    async def search(self, query: str, limit: int) -> list[SearchResult]:
        url = f"{self.base_url}/web/search"
        data = await _json(
            self.label,
            lambda c: c.get(
                url, params={"q": query, "count": limit}, headers={"X-Subscription-Token": self._key}
            ),
        )
        web = data.get("web") if isinstance(data, dict) else None
        items = web.get("results") if isinstance(web, dict) else None
        return _results(items, "title", "url", "description", limit)


class TavilySearch:
    label = "Tavily"

    def __init__(self, api_key: str, base_url: str) -> None:
        self._key = api_key
        self.base_url = base_url.rstrip("/")

    async def search(self, query: str, limit: int) -> list[SearchResult]:
        url = f"{self.base_url}/search"
        data = await _json(
            self.label,
            lambda c: c.post(
                url,
                json={"query": query, "max_results": limit},
                headers={"Authorization": f"Bearer {self._key}"},
            ),
        )
        return _results(
            data.get("results") if isinstance(data, dict) else None, "title", "url", "content", limit
        )


class DuckDuckGoSearch:
    label = "DuckDuckGo"

    async def search(self, query: str, limit: int) -> list[SearchResult]:
        try:
            items = await asyncio.to_thread(_ddgs_text, query, limit)
        except Exception as err:
            detail = " ".join(f"{type(err).__name__}: {err}".split())
            detail = detail if len(detail) <= 160 else detail[:159] + "…"
            raise WebError(
                f"DuckDuckGo could not be searched ({detail}). This keyless way is best-effort; "
                "SearXNG, Brave or Tavily in Settings → Web are steadier."
            ) from err
        return _results(items, "title", "href", "body", limit)


def _ddgs_text(query: str, limit: int) -> list[dict[str, Any]]:
    from ddgs import DDGS

    return list(DDGS(timeout=int(SEARCH_SECONDS)).text(query, max_results=limit, backend="duckduckgo"))
