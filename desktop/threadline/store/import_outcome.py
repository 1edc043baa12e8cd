"""What storing one imported conversation came to, without the ORM (see ``ops_import``).

The engine's importer names these at start; ``ops_import`` (which loads the SQLModel
tables, SQLAlchemy's ORM and pydantic) is imported when a conversation is first stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from threadline.core.session import SessionInfo


class ImportOutcome(StrEnum):
    IMPORTED = "imported"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    KEPT_NEWER = "kept_newer"
    """Nothing to take from the file, and the stored chat holds messages it lacks (an older export)."""


@dataclass(frozen=True, slots=True)
class StoredImport:
    outcome: ImportOutcome
    session: SessionInfo


class ImportRefused(Exception):
    """The conversation does not fit the database; ``reason`` is for the import's report."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ImportCancelled(Exception):
    """The import was cancelled while this conversation was being written: it is rolled back."""
