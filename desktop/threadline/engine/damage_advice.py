"""What to tell the user about a damaged database: the backup to restore and the command.

The command line (``threadline db restore``, the refusal of a writing command) and the
self-test both say it, so it lives below both (docs/storage.md, "Damage").
"""

from __future__ import annotations

from pathlib import Path

RESTORE_COMMAND = "threadline db restore"


def restore_advice(database: Path) -> str:
    """The sentence that names the backup to restore and the command that does it."""
    from threadline.store.backups import newest_healthy_backup

    backup = newest_healthy_backup(database)
    if backup is None:
        return (
            "No healthy backup of it was found: copy out what you can (`threadline export`), "
            "then move the file away to start with an empty database."
        )
    return f"Restore the copy from {backup_taken(backup)} with `{RESTORE_COMMAND}` ({backup})."


def backup_taken(backup: Path) -> str:
    """When ``backup`` was taken, e.g. "2026-03-01 14:05" (its name when that cannot be read)."""
    from threadline.store.backups import backup_time

    taken = backup_time(backup)
    return f"{taken:%Y-%m-%d %H:%M}" if taken else backup.name
