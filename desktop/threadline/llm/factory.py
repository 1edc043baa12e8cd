"""``ProviderConfig`` → a ``Provider`` (the SDK is imported here, on first use)."""

from __future__ import annotations

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.llm.base import Provider


def make_provider(
    config: ProviderConfig, api_key: str | None, *, timeout: float = 60.0, connect_timeout: float = 10.0
) -> Provider:
    """A provider for ``config``; ``timeout`` also bounds the silence inside a stream."""
    if config.kind is ProviderKind.ANTHROPIC:
        from threadline.llm.anthropic_provider import AnthropicProvider

        return AnthropicProvider(config, api_key, timeout=timeout, connect_timeout=connect_timeout)
    from threadline.llm.openai_provider import OpenAIProvider

    return OpenAIProvider(config, api_key, timeout=timeout, connect_timeout=connect_timeout)
