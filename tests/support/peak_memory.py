"""How much memory something took at its peak: in this process, or in one child process.

In-process, ``tracemalloc`` sees every Python allocation (inflated bytes and decoded text
are Python objects), unaffected by what the rest of the suite left in the heap. A child's
peak resident size comes from ``os.wait4`` for that child alone (``RUSAGE_CHILDREN`` would
report the largest child the test run ever waited for), waited for by a small driver
process (see ``_DRIVER``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
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


_DRIVER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""
"""Runs the command and reports its exit code and peak. Linux counts a process's memory
before its ``exec`` (the copy of its parent) in its peak, so the command is started by this
small interpreter rather than by the test process, which may hold hundreds of megabytes."""


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
    out, err, result = folder / "stdout", folder / "stderr", folder / "result"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        driver = subprocess.Popen(
            [sys.executable, "-c", _DRIVER, str(result), *args],
            stdout=stdout,
            stderr=stderr,
            env=env,
            start_new_session=True,
        )
    try:
        driver.wait(timeout)
    finally:
        if driver.returncode is None:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait()
    assert driver.returncode == 0, err.read_text(errors="replace")
    code, max_rss = (int(word) for word in result.read_text().split())
    return Finished(
        code,
        out.read_text(errors="replace"),
        err.read_text(errors="replace"),
        max_rss * (1 if sys.platform == "darwin" else 1024),  # kilobytes on Linux
    )
