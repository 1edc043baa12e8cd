"""Embeddings from any server with an OpenAI-compatible ``/v1/embeddings`` endpoint.

OpenAI, Ollama, llama.cpp, LM Studio and vLLM all serve one.

It uses the provider layer's conventions (``llm/openai_http``): the provider's base
URL and headers, a key from the keychain, a plain-http local server that never
negotiates TLS, no redirects. Indexing runs in a worker thread, so the client here is
the synchronous one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from threadline.core.config import ProviderConfig
from threadline.knowledge.vectors import EmbeddingError
from threadline.llm._http import httpx_module
from threadline.llm.openai_http import base_url, request_headers, tls_context_for

BATCH = 64
"""Texts per request: small enough for every server's limit, large enough to keep it busy."""


class OpenAIEmbedder:
    def __init__(
        self, config: ProviderConfig, model: str, api_key: str | None, *, timeout: float = 60.0
    ) -> None:
        httpx = httpx_module()
        url = base_url(config).rstrip("/") + "/"
        context = tls_context_for(url)
        options: dict[str, Any] = {} if context is None else {"verify": context}
        self._model = model
        self._provider = config.name
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

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            vectors.extend(self._batch(list(texts[start : start + BATCH])))
        return vectors

    def _batch(self, texts: list[str]) -> list[list[float]]:
        httpx = httpx_module()
        try:
            response = self._client.post("embeddings", json={"model": self._model, "input": texts})
        except httpx.HTTPError as err:
            raise EmbeddingError(
                f"{self._provider} could not be reached for embeddings ({type(err).__name__}).",
                server=self.server,
                reason=self._why(err),
            ) from err
        if response.status_code >= 400:
            raise EmbeddingError(
                f"{self._provider} refused the embedding request (HTTP {response.status_code}).",
                server=self.server,
                reason=f"HTTP {response.status_code}",
            )
        try:
            items = sorted(response.json()["data"], key=lambda item: item["index"])
            vectors = [[float(x) for x in item["embedding"]] for item in items]
        except (ValueError, KeyError, TypeError) as err:
            raise EmbeddingError(
                f"{self._provider} answered the embedding request with something unreadable.",
                server=self.server,
                reason="an unreadable answer",
            ) from err
        if len(vectors) != len(texts):
            raise EmbeddingError(
                f"{self._provider} returned {len(vectors)} embeddings for {len(texts)} texts.",
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
