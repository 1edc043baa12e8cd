"""The provider error hierarchy (docs/design.md §4, §6).

Shallow on purpose (as in openai-python): one base class, one subclass per thing
a user can do something about. Every error carries ``user_message`` — one or two
sentences fit to show in the tab, naming the provider (and model where it
matters) and saying what to do — plus ``kind`` (a stable word for logs and
tests), ``retryable`` (only transient failures: network, timeout, rate limit,
overloaded, server) and the HTTP ``status_code`` when there was one. SDK
exceptions are chained with ``raise … from err`` so logs keep the cause, but
their text never reaches the user message.

``map_status_error`` turns an HTTP error (status, parsed body, headers) into the
right subclass; both providers use it, so the two APIs' error shapes are read in
one place.
"""

from __future__ import annotations

import copy
import email.utils
import math
import re
import time
from collections.abc import Mapping
from typing import ClassVar, Self

from threadline.llm.timeouts import CONNECT_FLAG, CONNECT_SETTING, FIRST_BYTE_FLAG, FIRST_BYTE_SETTING

_MAX_DETAIL = 300


class ProviderError(Exception):
    """A request to a provider failed; ``str(err)`` is the user message."""

    kind: ClassVar[str] = "provider"
    retryable: ClassVar[bool] = False

    def __init__(
        self,
        user_message: str,
        *,
        status_code: int | None = None,
        provider: str = "",
        model: str = "",
        detail: str = "",
        reason: str = "",
    ) -> None:
        super().__init__(user_message)
        self.user_message = user_message
        self.status_code = status_code
        self.provider = provider
        self.model = model
        self.detail = detail
        """The provider's own words (for logs and a "details" disclosure), possibly empty."""
        self.reason = reason or _first_sentence(user_message)
        """What happened, without advice (e.g. "Ollama is rate limiting requests").

        The retry line shows this while the app retries by itself; advice such as
        "try again" belongs only to ``user_message``, shown once the app gave up.
        """

    def after_attempts(self, attempts: int) -> ProviderError:
        """This error as told after ``attempts`` tries: "… did not answer within 60 s (2 attempts). …"."""
        if attempts < 2 or not self.user_message.startswith(self.reason):
            return self
        return self.told_as(f"{self.reason} ({attempts} attempts){self.user_message[len(self.reason) :]}")

    def told_as(self, user_message: str) -> Self:
        """A copy of this error (same kind, provider, detail) that tells the user ``user_message``."""
        told = copy.copy(self)
        told.user_message = user_message
        told.args = (user_message,)
        return told


def _first_sentence(message: str) -> str:
    return message.split(". ", 1)[0].rstrip(".")


class NetworkError(ProviderError):
    kind = "network"
    retryable = True


class ProviderTimeoutError(ProviderError):
    kind = "timeout"
    retryable = True


class AuthenticationError(ProviderError):
    kind = "authentication"


class PermissionDeniedError(ProviderError):
    kind = "permission"


class ModelNotFoundError(ProviderError):
    kind = "model_not_found"


class QuotaExceededError(ProviderError):
    """A 429 that waiting will not fix (OpenAI ``insufficient_quota``: billing)."""

    kind = "quota"


class RateLimitError(ProviderError):
    kind = "rate_limit"
    retryable = True

    def __init__(
        self,
        user_message: str,
        *,
        retry_after: float | None = None,
        status_code: int | None = 429,
        provider: str = "",
        model: str = "",
        detail: str = "",
        reason: str = "",
    ) -> None:
        super().__init__(
            user_message,
            status_code=status_code,
            provider=provider,
            model=model,
            detail=detail,
            reason=reason,
        )
        self.retry_after = retry_after
        """Seconds the provider asked us to wait (``Retry-After``), when it said."""


class OverloadedError(ProviderError):
    kind = "overloaded"
    retryable = True


class ServerError(ProviderError):
    kind = "server"
    retryable = True


class ContextOverflowError(ProviderError):
    kind = "context_overflow"


class BadRequestError(ProviderError):
    kind = "bad_request"


class MalformedStreamError(ProviderError):
    kind = "malformed_stream"


# -- reading error bodies -------------------------------------------------------------------

_CONTEXT_PATTERNS = re.compile(
    r"context[_ ]length|context window|maximum context|context size|prompt is too long|"
    r"too many tokens|input is too long|exceeds? the (?:available )?context|"
    r"reduce the length of the (?:messages|prompt)",
    re.IGNORECASE,
)
_CONTEXT_CODES = {"context_length_exceeded", "exceed_context_size_error", "string_above_max_length"}


def error_fields(body: object) -> tuple[str, str, str]:
    """``(type, code, message)`` from an error body in either API's shape.

    OpenAI: ``{"error": {"message", "type", "param", "code"}}`` (the SDK may hand
    over the inner object); Anthropic: ``{"type": "error", "error": {"type", "message"}}``;
    llama.cpp and others: ``{"error": {"code": 400, "message", "type"}}`` or ``{"error": "text"}``.
    """
    if isinstance(body, str):
        return "", "", body
    if not isinstance(body, Mapping):
        return "", "", ""
    inner = body.get("error")
    if isinstance(inner, Mapping):
        body = inner
    elif isinstance(inner, str):
        return "", "", inner
    kind = body.get("type")
    code = body.get("code")
    message = body.get("message") or body.get("detail") or ""
    return (
        kind if isinstance(kind, str) else "",
        str(code) if isinstance(code, str | int) and not isinstance(code, bool) else "",
        message if isinstance(message, str) else str(message),
    )


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds:
        try:
            value = float(milliseconds) / 1000
        except ValueError:
            pass
        else:
            if math.isfinite(value) and value >= 0:
                return value
    raw = lowered.get("retry-after")
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(raw) if _looks_like_date(raw) else None
        if parsed is None:
            return None
        value = parsed.timestamp() - (time.time() if now is None else now)
    if not math.isfinite(value):
        return None
    return max(0.0, value)


def _looks_like_date(raw: str) -> bool:
    try:
        email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return False
    return True


def is_context_overflow(kind: str, code: str, message: str) -> bool:
    return code in _CONTEXT_CODES or kind in _CONTEXT_CODES or bool(_CONTEXT_PATTERNS.search(message))


def _detail(message: str) -> str:
    message = " ".join(message.split())
    return message if len(message) <= _MAX_DETAIL else message[: _MAX_DETAIL - 1] + "…"


def format_seconds(seconds: float) -> str:
    return f"{max(1, math.ceil(seconds))} s"


def map_status_error(
    status: int | None,
    body: object,
    headers: Mapping[str, str] | None,
    *,
    provider: str,
    model: str,
) -> ProviderError:
    """The error for an HTTP error answer (or an error event inside a stream, ``status`` 200/None)."""
    kind, code, message = error_fields(body)
    detail = _detail(message)
    said = f" ({detail})" if detail else ""

    def make(cls: type[ProviderError], text: str, reason: str = "") -> ProviderError:
        return cls(text, status_code=status, provider=provider, model=model, detail=detail, reason=reason)

    if kind == "overloaded_error" or status in (503, 529):
        return make(
            OverloadedError,
            f"{provider} is overloaded right now. Try again in a moment, or pick another model.",
            f"{provider} is overloaded right now",
        )
    if kind == "rate_limit_error" or status == 429:
        if "insufficient_quota" in (code, kind):
            return make(
                QuotaExceededError,
                f"Your account on {provider} has run out of quota. Check the plan and billing "
                f"for this API key, or use another provider.",
            )
        retry_after = parse_retry_after(headers)
        reason = f"{provider} is rate limiting requests"
        asked = f"It asked to wait {format_seconds(retry_after)}; send" if retry_after is not None else "Send"
        return RateLimitError(
            f"{reason}. {asked} again in a moment, or pick another model.",
            reason=reason,
            retry_after=retry_after,
            status_code=status,
            provider=provider,
            model=model,
            detail=detail,
        )
    if kind == "authentication_error" or status == 401:
        return make(
            AuthenticationError,
            f"{provider} rejected the API key. Check the API key for provider {provider} in Settings.",
        )
    if kind == "permission_error" or status == 403:
        return make(
            PermissionDeniedError,
            f"{provider} refused access to model '{model}'. Check that this API key may use it, "
            f"or pick another model.",
        )
    if status == 404 or kind == "not_found_error" or code == "model_not_found":
        if code == "model_not_found" or "model" in message.lower() or kind == "not_found_error":
            return make(
                ModelNotFoundError, f"Model '{model}' was not found on {provider} — pick another model."
            )
        return make(
            BadRequestError,
            f"{provider} answered 'not found'{said}. Check the provider's base URL in Settings.",
        )
    if is_context_overflow(kind, code, message) or (status == 413 and "token" in message.lower()):
        return make(
            ContextOverflowError,
            f"The conversation is too long for model '{model}' on {provider}. Compact it, remove "
            f"attached files, or continue in a new session.",
        )
    if kind == "api_error" or (status is not None and status >= 500):
        code_text = f" ({status})" if status and status >= 500 else ""
        reason = f"{provider} had a server error{code_text}"
        return make(ServerError, f"{reason}. Try again in a moment.", reason)
    if status == 408:
        reason = f"{provider} timed out handling the request"
        return make(ProviderTimeoutError, f"{reason}. Try again.", reason)
    if status is None or status < 400:
        reason = f"{provider} reported an error while streaming the reply{said}"
        return make(ServerError, f"{reason}. Try again.", reason)
    return make(BadRequestError, f"{provider} rejected the request for model '{model}'{said}.")


def network_error(
    provider: str, base_url: str, *, model: str = "", during_stream: bool = False, answered: bool = False
) -> NetworkError:
    """The connection failed: before the server answered, or (``answered``) once its reply had
    begun — a server that closes the connection mid-reply, or breaks the body's framing, was
    reached, so "could not connect" would send the user to check the wrong thing.
    ``during_stream``: part of the reply had arrived, and the engine keeps it."""
    where = f" at {base_url}" if base_url else ""
    if during_stream or answered:
        reason = f"The connection to {provider} closed before the reply finished"
        text = (
            f"{reason}. The partial reply was kept; try again." if during_stream else f"{reason}. Try again."
        )
    else:
        reason = f"Could not connect to {provider}{where}"
        text = f"{reason}. Check your network connection, or that the server is running."
    return NetworkError(text, provider=provider, model=model, reason=reason)


def _more_time(provider: str, setting: str, flag: str) -> str:
    """Where the bound really is set: the Settings field and the ``provider add`` option."""
    return (
        f"give it longer under “{setting}” for {provider} in Settings → Providers "
        f"(or `threadline provider add {provider} {flag} SECONDS`)"
    )


def timeout_error(
    provider: str, seconds: float | None, *, model: str = "", during_stream: bool = False
) -> ProviderTimeoutError:
    """Nothing arrived in time: before the reply (the first-byte bound) or in the middle of it."""
    waited = f" for {format_seconds(seconds)}" if seconds else ""
    if during_stream:
        reason = f"{provider} stopped sending the reply (nothing arrived{waited})"
        text = f"{reason}. The partial reply was kept; try again."
    else:
        within = f" within {format_seconds(seconds)}" if seconds else " in time"
        reason = f"{provider} did not answer{within}"
        text = (
            f"{reason}. Check that the server is running, or "
            f"{_more_time(provider, FIRST_BYTE_SETTING, FIRST_BYTE_FLAG)}."
        )
    return ProviderTimeoutError(text, provider=provider, model=model, reason=reason)


def connect_timeout_error(
    provider: str, base_url: str, seconds: float | None, *, model: str = ""
) -> ProviderTimeoutError:
    """The connection itself could not be opened in time (host unreachable, firewall, wrong address)."""
    where = f" at {base_url}" if base_url else ""
    within = f" within {format_seconds(seconds)}" if seconds else ""
    reason = f"Could not connect to {provider}{where}{within}"
    text = (
        f"{reason}. Check the network and the server URL, or "
        f"{_more_time(provider, CONNECT_SETTING, CONNECT_FLAG)}."
    )
    return ProviderTimeoutError(text, provider=provider, model=model, reason=reason)


def malformed_stream(provider: str, what: str, *, model: str = "") -> MalformedStreamError:
    """``what`` says plainly what was wrong, e.g. "the stream ended before the reply was finished"."""
    return MalformedStreamError(
        f"{provider} sent a reply Threadline could not read: {what}. Try again.",
        provider=provider,
        model=model,
        detail=what,
    )
