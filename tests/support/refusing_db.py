"""Make a real SQLite database refuse writes the way a full disk does, and accept them again.

A trigger added from a connection of its own (as another program would) raises SQLite's
"database or disk is full" on the chosen statements, so the store, the engine and the
window all meet the real error, not a stand-in.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

REFUSAL = "database or disk is full"


def run_sql(path: Path, *statements: str) -> None:
    """Run ``statements`` on a connection of their own, as another program would."""
    connection = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        for statement in statements:
            connection.execute(statement)
    finally:
        connection.close()


def refuse(path: Path, operation: str, when: str = "1") -> None:
    """From now on, ``operation`` (INSERT, UPDATE) on messages fails as on a full disk."""
    run_sql(
        path,
        f"CREATE TRIGGER refuse_{operation.lower()} BEFORE {operation} ON messages "
        f"WHEN {when} BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END",
    )


def accept(path: Path, operation: str) -> None:
    run_sql(path, f"DROP TRIGGER refuse_{operation.lower()}")
