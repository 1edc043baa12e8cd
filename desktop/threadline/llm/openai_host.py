"""Whether a provider's address is OpenAI's own service.

Its own module so that what only asks this (the usage report's prices, the request's
token-limit field) does not import the OpenAI provider with its stream decoding, message
conversion and HTTP client: the provider module loads when a provider of its kind is made
(``llm.factory``; the window's warm-up makes the configured ones after start), while the
usage report is imported by every start (docs/performance.md, "Memory after start").
"""

from __future__ import annotations


def is_official_openai(base_url: str) -> bool:
    """An empty address means the SDK's default, which is OpenAI's."""
    return not base_url or "api.openai.com" in base_url
