"""``ProviderConfig`` → a ``Provider`` (the SDK is imported here, on first use)."""

from __future__ import annotations

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.llm.base import Provider
from threadline.llm.timeouts import DEFAULT_STALL_TIMEOUT, Timeouts


def make_provider(
    config: ProviderConfig,
    api_key: str | None,
    *,
    timeout: float = DEFAULT_STALL_TIMEOUT,
    connect_timeout: float | None = None,
) -> Provider:
    """A provider for ``config`` with the bounds of ``Timeouts.for_provider``.

    ``timeout`` is the app-wide stall bound (and cap of the default first-byte
    wait); the provider's own ``connect_timeout``/``first_byte_timeout`` win.
    """
    timeouts = Timeouts.for_provider(config, stall=timeout, connect=connect_timeout)
    if config.kind is ProviderKind.ANTHROPIC:
        from threadline.llm.anthropic_provider import AnthropicProvider

        return AnthropicProvider(config, api_key, timeouts=timeouts)
    from threadline.llm.openai_provider import OpenAIProvider

    return OpenAIProvider(config, api_key, timeouts=timeouts)
