"""Embeddings from any server with an OpenAI-compatible ``/v1/embeddings`` endpoint.

OpenAI, Ollama, llama.cpp, LM Studio and vLLM all serve one.

It uses the provider layer's conventions (``llm/openai_http``): the provider's base
URL and headers, a key from the keychain, a plain-http local server that never
negotiates TLS, no redirects. Indexing runs in a worker thread, so the client here is
the synchronous one.

A search embeds its query within a deadline (``WithinDeadline``, docs/knowledge.md, "At send
time"): a server that accepts the connection and then hangs must not hold a send for the
client's whole timeout, which is long because indexing sends big batches.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from threadline.core.config import ProviderConfig
from threadline.knowledge.vectors import EmbeddingError
from threadline.llm._http import httpx_module
from threadline.llm.openai_http import base_url, request_headers, tls_context_for

BATCH = 64
"""Texts per request: small enough for every server's limit, large enough to keep it busy."""


class EmbeddingTimeout(EmbeddingError):
    """The server did not answer within the time the caller gave (``embed(..., timeout=)``)."""


class OpenAIEmbedder:
    def __init__(
        self, config: ProviderConfig, model: str, api_key: str | None, *, timeout: float = 60.0
    ) -> None:
        httpx = httpx_module()
        url = base_url(config).rstrip("/") + "/"
        context = tls_context_for(url)
        options: dict[str, Any] = {} if context is None else {"verify": context}
        self._model = model
        self.provider = config.name
        self._timeout = timeout
        self.server = shown_address(url)
        self._client = httpx.Client(
            base_url=url,
            headers=request_headers(config, api_key),
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            follow_redirects=False,
            **options,
        )

    @property
    def model(self) -> str:
        return self._model

    def embed(self, texts: Sequence[str], *, timeout: float | None = None) -> list[list[float]]:
        """One vector per text; ``timeout``: the longest each wait on the server may be (connecting,
        sending, each read) instead of the client's, ``EmbeddingTimeout`` when one is exceeded."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            vectors.extend(self._batch(list(texts[start : start + BATCH]), timeout))
        return vectors

    def _batch(self, texts: list[str], timeout: float | None) -> list[list[float]]:
        httpx = httpx_module()
        wait = httpx.USE_CLIENT_DEFAULT if timeout is None else httpx.Timeout(timeout)
        try:
            response = self._client.post(
                "embeddings", json={"model": self._model, "input": texts}, timeout=wait
            )
        except httpx.TimeoutException as err:
            if timeout is None:
                raise EmbeddingError(
                    f"{self.provider} could not be reached for embeddings ({type(err).__name__}).",
                    server=self.server,
                    reason=self._why(err),
                ) from err
            raise EmbeddingTimeout(
                f"{self.provider} did not answer the embedding request in time.",
                server=self.server,
                reason=f"no answer in {timeout:g} s",
            ) from err
        except httpx.HTTPError as err:
            raise EmbeddingError(
                f"{self.provider} could not be reached for embeddings ({type(err).__name__}).",
                server=self.server,
                reason=self._why(err),
            ) from err
        if response.status_code >= 400:
            raise EmbeddingError(
                f"{self.provider} refused the embedding request (HTTP {response.status_code}).",
                server=self.server,
                reason=f"HTTP {response.status_code}",
            )
        try:
            items = sorted(response.json()["data"], key=lambda item: item["index"])
            vectors = [[float(x) for x in item["embedding"]] for item in items]
        except (ValueError, KeyError, TypeError) as err:
            raise EmbeddingError(
                f"{self.provider} answered the embedding request with something unreadable.",
                server=self.server,
                reason="an unreadable answer",
            ) from err
        if len(vectors) != len(texts):
            raise EmbeddingError(
                f"{self.provider} returned {len(vectors)} embeddings for {len(texts)} texts.",
                server=self.server,
                reason="a wrong number of vectors",
            )
        return vectors

    def _why(self, err: Exception) -> str:
        """The transport failure in a few words: refused, timed out, or the library's word for it."""
        httpx = httpx_module()
        if isinstance(err, httpx.TimeoutException):
            return f"no answer in {self._timeout:g} s"
        cause: BaseException | None = err
        while cause is not None:
            if isinstance(cause, ConnectionRefusedError) or "refused" in str(cause).lower():
                return "connection refused"
            cause = cause.__cause__ or cause.__context__
        if isinstance(err, httpx.ConnectError):
            return "cannot connect"
        return type(err).__name__

    def close(self) -> None:
        self._client.close()


def shown_address(url: str) -> str:
    """``url`` as it may be shown and logged: scheme, host, port and path, never a user or query."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


class WithinDeadline:
    """``inner`` for one send or search: its requests together wait at most ``seconds``.

    Only time spent on the server counts (reading an edited file before its chunks are embedded
    does not). Each request's waits are bounded by what is left; once nothing is, every further
    call fails at once, so a send that embeds an edited file and then the query waits for a
    hanging server once, not twice. ``EmbeddingError`` says the server did not answer in time;
    the search goes on with keywords and says so (``SearchResult.notice``).
    """

    def __init__(self, inner: OpenAIEmbedder, seconds: float) -> None:
        self._inner = inner
        self._seconds = seconds
        self._left = seconds

    @property
    def model(self) -> str:
        return self._inner.model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for first in range(0, len(texts), BATCH):  # a request at a time, each with what is left
            vectors.extend(self._request(texts[first : first + BATCH]))
        return vectors

    def _request(self, texts: Sequence[str]) -> list[list[float]]:
        if self._left <= 0:
            raise EmbeddingError(self._late())
        start = time.monotonic()
        try:
            return self._inner.embed(texts, timeout=self._left)
        except EmbeddingTimeout as err:
            self._left = 0.0
            raise EmbeddingError(self._late()) from err
        finally:
            self._left -= time.monotonic() - start

    def _late(self) -> str:
        return f"{self._inner.provider} did not answer the embedding request within {self._seconds:g} s."
