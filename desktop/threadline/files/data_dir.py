"""Where Threadline keeps its files: the platform's user data dir unless told otherwise."""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "Threadline"
PRIVATE_MARKER = ".private-files"
"""Written in the data folder once its files have been made private (``make_data_dir_private``)."""
_MARKER_TEXT = (
    "Threadline made this folder and its files readable by you alone (folders 0700, files 0600).\n"
    "Delete this file to have it do so again at its next start.\n"
)
_OWN_FOLDERS = ("logs", "backups")
"""Folders of the data folder that hold only Threadline's files (the logs; the local
database's backups, ``store/backups.py``)."""
_OWN_FILE_PREFIXES = ("threadline.db", "database.json", ".database-")
"""Threadline's files at the top of the data folder: the local database (with its
``-wal``/``-shm``, files set aside by a restore) and the database choice."""


def default_data_dir() -> Path:
    """``$THREADLINE_DATA_DIR`` or the platform data dir (e.g. ~/.local/share/Threadline)."""
    override = os.environ.get("THREADLINE_DATA_DIR")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def make_data_dir_private(data_dir: Path) -> list[Path]:
    """Create ``data_dir`` 0700 if needed, and once per folder take group and other access away
    from it and from Threadline's files in it; returns what was changed.

    An older Threadline made them 0755/0644. The pass runs at the first start of a version
    that knows better and then leaves a marker, so a mode the user sets later is theirs to
    keep. Only Threadline's own files are touched: the data folder may be one the user named.
    """
    from threadline.files.private import open_private, private_folder, tighten

    private_folder(data_dir)
    marker = data_dir / PRIVATE_MARKER
    if marker.exists():
        return []
    own = [data_dir / name for name in _OWN_FOLDERS]
    files = [p for p in _children(data_dir) if p.name.startswith(_OWN_FILE_PREFIXES)]
    files += [p for folder in own for p in _children(folder)]
    changed = tighten([data_dir, *own], files)
    try:
        with open_private(marker, "w", encoding="utf-8") as out:
            out.write(_MARKER_TEXT)
    except OSError:
        pass  # a read-only folder: try again at the next start
    return changed


def _children(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []
