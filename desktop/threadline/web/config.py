"""What the user chose in Settings → Web (or with ``threadline web``): the provider and the rules.

Kept as one JSON setting by ``engine.web``. No key is ever in it: Brave's and Tavily's keys
live in the system keychain, or the setting names an environment variable to read them
from (``api_key_env``, for computers without a keychain; docs/web.md, "Keys").
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit


class WebProvider(StrEnum):
    NONE = ""
    SEARXNG = "searxng"
    BRAVE = "brave"
    TAVILY = "tavily"
    DUCKDUCKGO = "duckduckgo"

    @property
    def label(self) -> str:
        return _LABELS[self]

    @property
    def needs_key(self) -> bool:
        return self in (WebProvider.BRAVE, WebProvider.TAVILY)


_LABELS = {
    WebProvider.NONE: "None",
    WebProvider.SEARXNG: "SearXNG",
    WebProvider.BRAVE: "Brave Search",
    WebProvider.TAVILY: "Tavily",
    WebProvider.DUCKDUCKGO: "DuckDuckGo (best-effort)",
}


@dataclass(frozen=True, slots=True)
class WebConfig:
    provider: WebProvider = WebProvider.NONE
    searxng_url: str = ""
    """The SearXNG instance, e.g. ``http://localhost:8888`` (its JSON format must be enabled)."""
    api_key_env: str = ""
    """An environment variable holding the Brave or Tavily key, where there is no keychain."""
    allow_local: bool = False
    """Let ``fetch_page`` open addresses on this computer and the local network (docs/web.md)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider.value,
            "searxng_url": self.searxng_url,
            "api_key_env": self.api_key_env,
            "allow_local": self.allow_local,
        }

    @classmethod
    def from_json(cls, data: Any) -> WebConfig:
        if not isinstance(data, dict):
            return cls()
        provider = data.get("provider", "")
        return cls(
            provider=WebProvider(provider)
            if provider in WebProvider._value2member_map_
            else WebProvider.NONE,
            searxng_url=str(data.get("searxng_url") or ""),
            api_key_env=str(data.get("api_key_env") or ""),
            allow_local=bool(data.get("allow_local", False)),
        )

    def provider_origin(self) -> tuple[str, str, int] | None:
        """The SearXNG instance's origin: the one address exempt from the local-address rule."""
        if self.provider is not WebProvider.SEARXNG or not self.searxng_url:
            return None
        return origin_of(self.searxng_url)


def origin_of(url: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an http(s) URL, the port filled in; ``None`` for anything else."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or (443 if scheme == "https" else 80)


BRAVE_URL = "https://api.search.brave.com/res/v1"
TAVILY_URL = "https://api.tavily.com"


@dataclass(frozen=True, slots=True)
class Endpoints:
    """Where Brave and Tavily answer. Only tests change these (to fakes on loopback); the
    user cannot, so a key is only ever sent to its own service."""

    brave: str = BRAVE_URL
    tavily: str = TAVILY_URL
