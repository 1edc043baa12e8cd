"""Retries with backoff for transient provider errors (DESIGN.md §4).

Only errors marked ``retryable`` (network, timeout, rate limit, overloaded,
server) are retried, and only while the stream has yielded nothing: once text
reached the user, a retry would repeat it, so the error goes up and the partial
reply is kept. The wait is exponential with jitter, or what the provider asked
for in ``Retry-After``. Each retry is announced through ``on_retry`` so the user
sees "retrying in 4 s" instead of a frozen tab.
"""

from __future__ import annotations

import asyncio
import inspect
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass

from threadline.llm.errors import ProviderError, RateLimitError, format_seconds
from threadline.llm.events import StreamEvent

OnRetry = Callable[[int, float, ProviderError], Awaitable[None] | None]
"""``(attempt, delay, error)``: ``attempt`` is the number of the attempt about to be made (2, 3, …)."""

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4
    """Attempts in all, the first included (1: never retry)."""
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 120.0
    """A longer ``Retry-After`` than this is not waited for: the error goes to the user."""

    def delay(
        self, attempt: int, error: ProviderError, rng: Callable[[], float] = random.random
    ) -> float | None:
        """Seconds to wait before attempt ``attempt + 1`` after ``error``; ``None``: do not retry."""
        if not error.retryable or attempt >= self.max_attempts:
            return None
        retry_after = error.retry_after if isinstance(error, RateLimitError) else None
        if retry_after is not None:
            if retry_after > self.max_retry_after:
                return None
            return retry_after + rng() * min(1.0, self.base_delay)  # never earlier than asked
        backoff = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return backoff / 2 + rng() * backoff / 2  # "equal jitter": at least half the backoff


def describe_retry(
    attempt: int, delay: float, error: ProviderError, policy: RetryPolicy | None = None
) -> str:
    """A status line for the tab, e.g. "… rate limiting requests; retrying in 12 s (attempt 2 of 4)"."""
    total = f" of {policy.max_attempts}" if policy else ""
    reason = error.user_message.split(";")[0].split(". ")[0].rstrip(".")
    return f"{reason}; retrying in {format_seconds(delay)} (attempt {attempt}{total})."


async def stream_with_retries(
    open_stream: Callable[[], AsyncIterator[StreamEvent]],
    policy: RetryPolicy | None = None,
    on_retry: OnRetry | None = None,
    *,
    sleep: Sleep = asyncio.sleep,
    rng: Callable[[], float] = random.random,
) -> AsyncIterator[StreamEvent]:
    """The events of ``open_stream()``, opened again after a transient error before any output."""
    policy = policy or RetryPolicy()
    attempt = 1
    while True:
        started = False
        try:
            async with aclosing(open_stream()) as stream:  # type: ignore[type-var]
                async for event in stream:
                    started = True
                    yield event
            return
        except ProviderError as err:
            delay = None if started else policy.delay(attempt, err, rng)
            if delay is None:
                raise
            attempt += 1
            if on_retry is not None:
                result = on_retry(attempt, delay, err)
                if inspect.isawaitable(result):
                    await result
            await sleep(delay)
