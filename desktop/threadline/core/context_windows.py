"""How many tokens a model can take: one answer for the meter, the budget and compaction.

The window is looked up in this order: the user's own figure for that provider's
model (a setting, for a server that reports nothing or reports wrongly), what the
server itself reports (a model listing's ``context_length`` / ``max_model_len``, a
llama.cpp server's configured ``n_ctx``), then the published window of well-known
models below. ``None`` means unknown, and callers then do without a window rather
than guess one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from threadline.core.model_ids import base_model_id

KNOWN_WINDOWS: Mapping[str, int] = {
    "gpt-5": 400_000,
    "gpt-5-mini": 400_000,
    "gpt-5-nano": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1-nano": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o4-mini": 200_000,
    "claude-opus-4-5": 200_000,
    "claude-opus-4-1": 200_000,
    "claude-opus-4": 200_000,
    "claude-sonnet-4-5": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-3-7-sonnet": 200_000,
    "claude-haiku-4-5": 200_000,
    "claude-3-5-haiku": 200_000,
}
"""Published context windows of well-known models, by exact id (a dated snapshot id matches too)."""

LISTING_FIELDS = ("context_length", "context_window", "max_model_len", "max_context_length")
"""Fields of a model listing entry that servers use for the window (OpenRouter, Groq, vLLM, LM Studio)."""


def known_window(model: str) -> int | None:
    """The published window of a well-known model; an unknown model, ``None``.

    A model served under a vendor's id by another server (``gpt-4o`` on a proxy)
    gets the vendor's window, which is what such proxies pass through.
    """
    bare = model.rsplit("/", 1)[-1]  # "openai/gpt-4o" as OpenRouter names it
    return KNOWN_WINDOWS.get(bare) or KNOWN_WINDOWS.get(base_model_id(bare))


def window_from_listing(entry: Mapping[str, Any]) -> int | None:
    """The window a server's model listing entry states, if it states one that makes sense."""
    for key in LISTING_FIELDS:
        value = entry.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    meta = entry.get("meta")
    if isinstance(meta, Mapping):  # llama.cpp lists the trained window; /props has the configured one
        value = meta.get("n_ctx_train")
        if isinstance(value, int) and value > 0:
            return value
    return None


def served_window(props: Any) -> int | None:
    """The per-slot window in a llama.cpp server's ``/props`` (``default_generation_settings.n_ctx``)."""
    settings = props.get("default_generation_settings") if isinstance(props, Mapping) else None
    value = settings.get("n_ctx") if isinstance(settings, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def user_window(setting: Any, provider: str, model: str) -> int | None:
    """The user's figure from the ``context_windows`` setting: ``{"provider/model": tokens}``."""
    if not isinstance(setting, Mapping):
        return None
    value = setting.get(f"{provider}/{model}")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
