"""``until``: wait, inside a coroutine, for a condition that another task or process makes true.

Tests wait on conditions, never on fixed sleeps: the machine that runs them may have every core
busy. The default bound is therefore generous; it only decides how long a failing test takes to
say so, never whether a passing test passes. A test that checks how *quickly* something happens
passes its own, shorter ``timeout``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

WAIT = 60.0
"""The default bound, in seconds: long enough for a loaded 2-core machine."""

WAIT_MS = int(WAIT * 1000)
"""The same bound in milliseconds, for pytest-qt's ``waitUntil``/``waitSignal``: a UI test waits
as long as any other for a condition a busy machine is slow to make true."""

POLL = 0.02
"""Seconds between two checks of the condition."""


async def until(condition: Callable[[], object], what: str = "the condition", timeout: float = WAIT) -> None:
    """Return once ``condition()`` is true; fail with an ``AssertionError`` naming ``what`` if it
    is still false ``timeout`` seconds later. The condition is checked once more after the
    deadline, so a slow loop that finally got there does not fail."""
    deadline = time.monotonic() + timeout
    while True:
        late = time.monotonic() > deadline
        if condition():
            return
        if late:
            raise AssertionError(f"{what} did not happen within {timeout:g} s")
        await asyncio.sleep(POLL)


def until_sync(condition: Callable[[], object], what: str = "the condition", timeout: float = WAIT) -> None:
    """``until`` for code that is not in a coroutine (fixtures starting a process)."""
    deadline = time.monotonic() + timeout
    while True:
        late = time.monotonic() > deadline
        if condition():
            return
        if late:
            raise AssertionError(f"{what} did not happen within {timeout:g} s")
        time.sleep(POLL)
