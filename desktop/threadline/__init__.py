"""Threadline: a desktop conversation manager for large language models."""

from __future__ import annotations

from functools import cache


@cache
def version() -> str:
    """The installed distribution's version (read on first use: ``importlib.metadata`` costs
    time and memory a start need not pay, docs/design.md §5; figures in docs/performance.md)."""
    from importlib import metadata

    try:
        return metadata.version("threadline")
    except metadata.PackageNotFoundError:  # running from a checkout without install
        return "0.1.0"


def __getattr__(name: str) -> str:
    if name == "__version__":
        return version()
    raise AttributeError(f"module 'threadline' has no attribute {name!r}")
