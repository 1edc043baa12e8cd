"""The provider layer: streaming replies from OpenAI-compatible servers and Anthropic.

``base`` (the ``Provider`` protocol, ``ChatParams``), ``events`` (what a stream
yields), ``errors`` (what it raises), ``factory.make_provider``, ``timeouts``
(connect, first-byte and stall bounds per provider), ``retry`` (backoff for
transient errors, within a time budget), ``credentials`` (keys in the keychain or an
environment variable) and ``local`` (finding local servers). Nothing here
imports an SDK until a provider is made (docs/design.md §9: paint first).
"""
