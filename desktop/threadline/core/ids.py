"""Fresh ids and timestamps, shared by every record type (messages, sessions, projects).

Kept apart from ``core.messages`` so that the session and project records, which the
window's sidebar imports before its first paint, do not bring in the message types and
their imports (``json``, ``uuid``, the reasoning blocks), which cost a start time
(figures: docs/performance.md, "Window"). ``core.messages`` re-exports both names.
"""

from __future__ import annotations

from datetime import UTC, datetime


def new_id() -> str:
    """A fresh message/session id: random, sortable enough, safe in URLs."""
    import uuid  # not free to import (docs/performance.md), and no id is made before the engine is open

    return uuid.uuid4().hex


def utcnow() -> datetime:
    return datetime.now(UTC)
