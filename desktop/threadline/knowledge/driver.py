"""The SQLite the knowledge index runs on: ``sqlean``'s build when installed, Python's own otherwise.

Vector search needs ``sqlite-vec``, an extension, and Python's ``sqlite3`` loads
extensions only when it was built to: pyenv's default build and several others leave
``enable_load_extension`` out, and their SQLite versions differ from one machine to the
next. ``sqlean.py`` is the standard ``sqlite3`` module compiled against a recent SQLite with
FTS5 and extension loading, as a wheel for each platform; the index is a private file that
nothing else opens, so it always uses that one when it is there (docs/knowledge.md,
"One SQLite everywhere"). Without it (a platform with no wheel) the standard module is used,
and vectors work where that one loads extensions.
"""

from __future__ import annotations

import sqlite3
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import cast


@cache
def module() -> ModuleType:
    """``sqlean`` when installed, else ``sqlite3``; imported on first use (``sqlean`` carries a
    SQLite of its own, tens of milliseconds to load, which a command that never opens the index
    should not pay)."""
    try:
        import sqlean  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        return sqlite3
    return cast(ModuleType, sqlean)


def errors() -> tuple[type[Exception], ...]:
    """Every database error the index can raise, for ``except``."""
    return tuple(dict.fromkeys((sqlite3.Error, cast(type[Exception], module().Error))))


def connect(path: Path | str, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are begun explicitly).

    ``sqlean``'s connection has the standard one's interface; it is typed as that.
    """
    return cast(
        sqlite3.Connection,
        module().connect(str(path), check_same_thread=check_same_thread, isolation_level=None),
    )


def driver_name() -> str:
    return f"{module().__name__} (SQLite {module().sqlite_version})"
