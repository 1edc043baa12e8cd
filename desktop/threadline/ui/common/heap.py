"""Giving back the memory a closed chat freed, at once rather than some day.

Closing a long chat frees tens of megabytes at once (a 10,000-message tree, its model, view
and documents; figures in docs/performance.md). Two things keep that memory in the process
otherwise:

* the tab's widgets, model and conversation refer to each other, so only the cyclic garbage
  collector frees them, and its full collections come rarely in a long-running app;
* glibc's ``malloc`` returns memory to the system only from the top of its heaps: pages
  freed in the middle stay resident until something reuses them. ``malloc_trim(0)``
  returns every whole free page.

``release_freed_memory`` does both. The collection takes a noticeable pause with a big chat
just closed (the trim far less), so the window calls it only when a chat of at least
``BIG_CHAT`` messages is released. Elsewhere than Linux with glibc (macOS, Windows, musl)
only the collection runs. Memory Python's own allocator keeps (arenas of small objects
that a few survivors still use) is not affected by either (docs/performance.md).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from functools import cache

BIG_CHAT = 1_000
"""Messages from which closing a chat is worth a full collection and a heap trim."""


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where there is none (ctypes imported on first use)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_freed_memory() -> bool:
    """Free what only the cycle collector can, then return free heap pages to the system.

    Returns whether the heap could be trimmed (glibc), whatever it returned.
    """
    gc.collect()
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
