"""Giving freed memory back: cycles are collected, and glibc's heap is trimmed where it exists."""

from __future__ import annotations

import ctypes
import gc
import sys
import weakref

import pytest

from threadline.ui.common.heap import release_freed_memory


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def test_objects_only_the_cycle_collector_frees_are_freed() -> None:
    was_enabled = gc.isenabled()
    gc.disable()  # no automatic collection may do it first
    try:
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        del a, b
        assert gone() is not None
        release_freed_memory()
        assert gone() is None
    finally:
        if was_enabled:
            gc.enable()


def has_malloc_trim() -> bool:
    return sys.platform.startswith("linux") and hasattr(ctypes.CDLL(None), "malloc_trim")


@pytest.mark.skipif(not has_malloc_trim(), reason="no glibc malloc_trim here")
def test_the_heap_is_trimmed_with_glibc() -> None:
    assert release_freed_memory() is True


@pytest.mark.skipif(has_malloc_trim(), reason="glibc: trimmed")
def test_elsewhere_only_the_collection_runs() -> None:
    assert release_freed_memory() is False
