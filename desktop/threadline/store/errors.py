"""Errors the store raises, each with a message a person can act on.

The UI shows ``user_message`` as is (every failure a user can meet says what
happened and what to do), so these never carry a traceback, SQL or a driver's
own text; that goes to ``detail`` (and ``str(error)``) for the log. This module
imports nothing heavy: the app can catch store errors before the store itself
(and SQLAlchemy) has been imported.

``transient`` tells a caller whether the same write is worth trying again later
(a busy database, a lost server connection) or whether something must change
first (a full disk, a read-only file, a damaged database).
"""

from __future__ import annotations

from pathlib import Path

from threadline.core.sizes import readable_size


class StoreError(Exception):
    """Base of everything the store raises on purpose."""

    default_message = "The conversation database could not be used."
    transient = False
    """Whether retrying the same operation later may succeed without anyone changing anything."""

    def __init__(self, detail: str = "", *, user_message: str | None = None) -> None:
        super().__init__(detail or user_message or self.default_message)
        self._user_message = user_message or self.default_message
        self.detail = detail

    @property
    def user_message(self) -> str:
        """What to show the user: what happened and what to do."""
        return self._user_message


class StoreBusyError(StoreError):
    """Another connection kept the database locked (or kept winning a race) for too long."""

    default_message = (
        "The database is busy: another Threadline window or program is writing to it, "
        "and it stayed locked while Threadline kept trying. Wait a moment and try again, "
        "or close the other program."
    )
    transient = True


class DatabaseUnreachableError(StoreError):
    """The connection to the database server was lost or could not be made."""

    default_message = (
        "The connection to the database server was lost, or could not be made. Check that "
        "the server is running and that this computer can reach it."
    )
    transient = True


class ReadOnlyDatabaseError(StoreError):
    """The database may be read but not written (file or folder permissions, a read-only server)."""

    default_message = (
        "The conversation database cannot be changed: the file or its folder is read-only "
        "(or on a read-only disk), or the server only allows reading. Make it writable, or "
        "choose another data folder, and try again; nothing new was saved."
    )


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
    """The file is not a SQLite database, or its contents are damaged.

    ``backup`` is the newest backup of the database, when one exists; the message
    names it, and never points at a backups folder that is not there.
    """

    default_message = (
        "The conversation database is damaged or is not a Threadline database, and no "
        "backup of it was found. Move the file away (keep it: it may still be recoverable) "
        "to start with an empty database."
    )

    def __init__(self, detail: str = "", *, backup: Path | None = None, database: Path | None = None) -> None:
        super().__init__(detail, user_message=damaged_message(backup, database))
        self.backup = backup
        self.database = database


def damaged_message(backup: Path | None, database: Path | None = None) -> str:
    """What to tell the user about a damaged database, given its newest backup (if any)."""
    what = f"The conversation database ({database})" if database else "The conversation database"
    if backup is None:
        return (
            f"{what} is damaged or is not a Threadline database, and no backup of it was found. "
            "Move the file away (keep it: it may still be recoverable) to start with an empty database."
        )
    from threadline.store.backups import backup_time

    taken = backup_time(backup)
    when = f"from {taken:%Y-%m-%d %H:%M}" if taken else f"{backup.name}"
    return (
        f"{what} is damaged or is not a Threadline database. Restore the copy {when} "
        f"in {backup.parent} (the damaged file is kept beside it), or move the file away "
        "to start with an empty database."
    )


class StorageFullError(StoreError):
    """The disk (or the server's storage) is full: nothing more can be written."""

    default_message = (
        "The disk holding the conversation database is full, so the latest changes "
        "could not be saved. Free some space and try again."
    )


def disk_full_message(folder: Path, free_bytes: int) -> str:
    """What to tell the user when the disk holding the database's ``folder`` is full:
    how much is left there, and where to make room."""
    return (
        f"The disk holding the conversation database is full ({readable_size(free_bytes)} free in "
        f"{folder}), so the latest changes could not be saved. Free some space there and try again."
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
