"""How much memory something took at its peak: in this process, or in one child process.

In-process, ``tracemalloc`` sees every Python allocation (inflated bytes and decoded text
are Python objects), unaffected by what the rest of the suite left in the heap. A child's
peak resident size comes from ``os.wait4`` for that child alone: ``RUSAGE_CHILDREN`` would
report the largest child the test run ever waited for.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
MB = 1024 * 1024


@contextmanager
def _tracing() -> Iterator[Callable[[], int]]:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        yield lambda: tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def traced_peak(work: Callable[[], T]) -> tuple[T, int]:
    """``work()``'s result and the most bytes of Python objects held at once beyond what was
    held when it started (every thread counts: work handed to a worker is seen too)."""
    with _tracing() as peak:
        result = work()
        return result, peak()


async def traced_peak_async(work: Callable[[], Awaitable[T]]) -> tuple[T, int]:
    """``traced_peak`` for a coroutine: its result and its peak, measured while awaited."""
    with _tracing() as peak:
        result = await work()
        return result, peak()


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str
    max_rss: int
    """The child's peak resident memory, in bytes."""


def run_measured(args: Sequence[str], folder: Path, *, env: dict[str, str], timeout: float = 300) -> Finished:
    """Run ``args`` to its end (killed after ``timeout`` seconds) and measure its peak memory."""
    folder.mkdir(parents=True, exist_ok=True)
    out, err = folder / "stdout", folder / "stderr"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        child = subprocess.Popen(list(args), stdout=stdout, stderr=stderr, env=env)
    watchdog = threading.Timer(timeout, child.kill)
    watchdog.start()
    try:
        _, status, usage = os.wait4(child.pid, 0)
    finally:
        watchdog.cancel()
    child.returncode = os.waitstatus_to_exitcode(status)
    return Finished(
        child.returncode,
        out.read_text(errors="replace"),
        err.read_text(errors="replace"),
        usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024),  # kilobytes on Linux
    )
