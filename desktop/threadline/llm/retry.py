"""Retries with backoff for transient provider errors (docs/design.md §4).

Only errors marked ``retryable`` (network, timeout, rate limit, overloaded,
server) are retried, and only while the stream has yielded nothing: once text
reached the user, a retry would repeat it, so the error goes up and the partial
reply is kept. The wait is exponential with jitter, or what the provider asked
for in ``Retry-After``. Each retry is announced through ``on_retry`` so the user
sees "Retrying (2 of 4) in 4 s" instead of a frozen tab.

Attempts are bounded twice: by count (``max_attempts``) and by time
(``budget``): the seconds from the first attempt until the user gets the first
event or the error. Without the time bound a server that accepts connections
but never answers cost every attempt's whole first-byte timeout plus the
backoff (four attempts of 120 s: over eight minutes of silence). With it, an
attempt still waiting when the budget is spent is cut short, and no retry is
scheduled whose wait alone would reach past the budget.

The count announced is the count that can happen: "Retrying (2 of 4)" followed by
a failure after two attempts would be untrue. When the budget cannot hold the
attempts the policy allows — an attempt that failed by waiting 60 s out of a
120 s budget leaves room for one more such wait, not three — the total announced
is what fits, and no attempt beyond an announced total is made.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass

from threadline.llm.errors import ProviderError, ProviderTimeoutError, RateLimitError, format_seconds
from threadline.llm.events import StreamEvent

OnRetry = Callable[[int, float, ProviderError, int], Awaitable[None] | None]
"""``(attempt, delay, error, most)``: ``attempt`` is the number of the attempt about to be made
(2, 3, …), ``most`` the most attempts there will be in all (see ``stream_with_retries``)."""

Sleep = Callable[[float], Awaitable[None]]

BudgetSpent = Callable[[float], ProviderError]
"""The error to raise when ``budget`` seconds passed with nothing from the provider."""

_END = object()


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4
    """Attempts in all, the first included (1: never retry)."""
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 120.0
    """A longer ``Retry-After`` than this is not waited for: the error goes to the user."""
    budget: float | None = None
    """Seconds from the first attempt until giving up while nothing arrived; ``None``: the
    provider's own (``Timeouts.retry_budget``, set by the engine), or no bound at all."""

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


def budget_spent_error(seconds: float) -> ProviderError:
    """The default ``BudgetSpent`` (callers that know the provider's name pass their own)."""
    reason = f"The provider did not answer within {format_seconds(seconds)}"
    return ProviderTimeoutError(f"{reason}. Try again.", reason=reason)


async def stream_with_retries(
    open_stream: Callable[[], AsyncIterator[StreamEvent]],
    policy: RetryPolicy | None = None,
    on_retry: OnRetry | None = None,
    *,
    budget_spent: BudgetSpent = budget_spent_error,
    sleep: Sleep = asyncio.sleep,
    rng: Callable[[], float] = random.random,
) -> AsyncIterator[StreamEvent]:
    """The events of ``open_stream()``, opened again after a transient error before any output.

    The error that ends the attempts tells how many there were ("… (3 attempts).").
    """
    policy = policy or RetryPolicy()
    loop = asyncio.get_running_loop()
    deadline = None if policy.budget is None else loop.time() + policy.budget
    attempt = 1
    most = policy.max_attempts  # only ever lowered, so no announced total is exceeded
    while True:
        started = False
        began = loop.time()
        try:
            async with aclosing(open_stream()) as stream:  # type: ignore[type-var]
                first = await _first_event(stream, deadline, policy.budget, budget_spent)
                if first is _END:
                    return
                started = True
                yield first  # type: ignore[misc]
                async for event in stream:
                    yield event
            return
        except ProviderError as err:
            if started:
                raise
            delay = policy.delay(attempt, err, rng) if attempt < most else None
            now = loop.time()
            if delay is not None and deadline is not None and now + delay >= deadline:
                delay = None  # the wait alone would spend the budget
            if delay is None:
                told = err.after_attempts(attempt)
                if told is err:
                    raise
                raise told from err
            if deadline is not None:
                most = min(most, attempt + _attempts_that_fit(deadline - now - delay, now - began))
            attempt += 1
            if on_retry is not None:
                result = on_retry(attempt, delay, err, most)
                if inspect.isawaitable(result):
                    await result
            await sleep(delay)


def _attempts_that_fit(left: float, took: float) -> int:
    """Attempts that can still begin within ``left`` s if each fails the way the last did,
    after ``took`` s (a first-byte timeout takes its whole bound every time); at least one."""
    if took <= 0:
        return 1_000_000
    return max(1, math.ceil(left / took))


async def _first_event(
    stream: AsyncIterator[StreamEvent], deadline: float | None, budget: float | None, spent: BudgetSpent
) -> StreamEvent | object:
    """The stream's first event (``_END`` if none), waited for no later than ``deadline``."""
    if deadline is None or budget is None:
        return await anext(stream, _END)
    try:
        async with asyncio.timeout_at(deadline):
            return await anext(stream, _END)
    except TimeoutError as err:
        raise spent(budget) from err
