"""Errors the store raises, each with a message a person can act on.

The UI shows ``user_message`` as is (DESIGN.md §6: every failure a user can meet
says what happened and what to do), so these never carry a traceback or SQL.
This module imports nothing heavy: the app can catch store errors before the
store itself (and SQLAlchemy) has been imported.
"""

from __future__ import annotations


class StoreError(Exception):
    """Base of everything the store raises on purpose."""

    default_message = "The conversation database could not be used."

    def __init__(self, detail: str = "", *, user_message: str | None = None) -> None:
        super().__init__(detail or user_message or self.default_message)
        self._user_message = user_message or self.default_message
        self.detail = detail

    @property
    def user_message(self) -> str:
        """What to show the user: what happened and what to do."""
        return self._user_message


class SchemaTooNewError(StoreError):
    """The database carries a schema revision this version of the app does not know."""

    default_message = (
        "This database was written by a newer version of Threadline. "
        "Update Threadline to open it, or choose another data folder; "
        "the database has not been changed."
    )

    def __init__(self, revision: str, *, location: str = "") -> None:
        where = f" ({location})" if location else ""
        super().__init__(f"unknown schema revision {revision!r}{where}")
        self.revision = revision


class CorruptDatabaseError(StoreError):
    """The file is not a SQLite database, or its contents are damaged."""

    default_message = (
        "The conversation database is damaged or is not a Threadline database. "
        "Restore a copy from the backups folder beside it, or move the file away "
        "to start with an empty database."
    )


class StorageFullError(StoreError):
    """The disk (or the server's storage) is full: nothing more can be written."""

    default_message = (
        "The disk holding the conversation database is full, so the latest changes "
        "could not be saved. Free some space and try again."
    )


class NotFoundError(StoreError, KeyError):
    """A session or message id that is not in the database."""

    default_message = "The conversation no longer exists; it may have been deleted elsewhere."

    def __str__(self) -> str:
        # KeyError.__str__ would repr() the detail; keep it readable.
        return self.detail or self.default_message


class StoreClosedError(StoreError):
    """The store was used after ``close()``."""

    default_message = "The conversation database is closed."
