"""Trying a database operation again while its failure is transient.

A busy SQLite file (another window or ``threadline ask`` holding the write lock
past the busy timeout), a PostgreSQL serialization failure or deadlock, two
writers racing for the same message ordinal, or a dropped server connection all
clear up by themselves. The store retries such operations on its own thread —
which keeps every later operation queued behind, so "append, then update the
text" still happens in order — with jittered exponential backoff, for a bounded
time (about 30 s by default: long enough to ride out another program's write,
short enough that a window does not look hung). Then the last error is raised;
its ``transient`` flag tells the caller the same write may succeed later.

While it retries, ``on_trouble`` is told the error being ridden out (and
``None`` once an attempt succeeds again), so a caller waiting for the write can
say "the database connection was lost; retrying" at once rather than after the
whole window (the store keeps it as ``Store.trouble``).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from threadline.store.errors import StoreError

TroubleCallback = Callable[[StoreError | None], None]
"""Told the transient error an operation is being retried for, and ``None`` whenever one succeeds."""

log = logging.getLogger("threadline.store")

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How long and how often to retry transient failures."""

    total: float = 30.0
    """Seconds of trying, counted from the first attempt, after which the error is raised."""
    first_delay: float = 0.05
    max_delay: float = 1.0


def run_with_retries(
    attempt: Callable[[], T],
    policy: RetryPolicy,
    *,
    stop: threading.Event | None = None,
    on_trouble: TroubleCallback | None = None,
) -> T:
    """Call ``attempt`` until it succeeds, fails for good, ``policy.total`` is spent or ``stop`` is set.

    ``attempt`` raises ``StoreError``; only ``transient`` ones are retried. ``on_trouble``
    hears each transient error before its pause, and ``None`` when an attempt succeeds.
    """
    deadline = time.monotonic() + policy.total
    delay = policy.first_delay
    failures = 0
    while True:
        try:
            result = attempt()
        except StoreError as error:
            failures += 1
            pause = random.uniform(delay / 2, delay)
            if not error.transient or time.monotonic() + pause > deadline or (stop and stop.is_set()):
                if error.transient:
                    log.warning("database write gave up after %d attempts: %s", failures, error.detail)
                raise
            if on_trouble is not None:
                on_trouble(error)
            if failures in (1, 10, 50):
                log.info("database operation failed (%s); retrying (attempt %d)", error.detail, failures + 1)
            if stop is not None:
                stop.wait(pause)
            else:
                time.sleep(pause)
            delay = min(delay * 2, policy.max_delay)
            continue
        if on_trouble is not None:
            on_trouble(None)
        return result
