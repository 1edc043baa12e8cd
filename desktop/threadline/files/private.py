"""Files only their owner can read: folders 0700, files 0600, made so when they are created.

The data folder holds every conversation, the logs hold what went wrong with them and the
backups are whole copies: none of it is for other local users. The usual umask (022) would
make them 0755 and 0644, readable by everyone on the machine. Changing the process's umask
is not the answer, since tools write the user's own files and those keep normal modes; so
each writer of Threadline's own files creates them private here, from the first byte (a
file made readable and narrowed afterwards could be opened in between). SQLite gives a
database's ``-wal`` and ``-shm`` files the mode of the database file, so a private database
keeps its companions private. See docs/storage.md, "Who can read the files".

On systems without POSIX modes (Windows) the modes are ignored and the user's profile
folder's access rules apply.

Imported by the logging set-up before the window's first paint: standard library only, and
nothing slow at import.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600
POSIX = os.name == "posix"
_OPEN_FLAGS = {
    "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
    "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "w+": os.O_RDWR | os.O_CREAT | os.O_TRUNC,
}


def private_folder(path: Path) -> Path:
    """``path`` as a folder, made (with any missing parents) 0700 if it does not exist yet.

    An existing folder keeps its mode: tightening old folders is ``tighten``'s, once.
    """
    path = Path(path)
    missing: list[Path] = []
    folder = path
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        folder.mkdir(mode=PRIVATE_FOLDER, exist_ok=True)
    path.mkdir(mode=PRIVATE_FOLDER, exist_ok=True)  # raises as mkdir does when a file is in the way
    return path


def create_private_file(path: Path) -> None:
    """Create ``path`` empty and 0600 unless it exists (an existing file is left as it is).

    Called before another library creates the file itself (SQLite a database or a
    backup, ``shutil`` a copy), which then writes into it and keeps its mode.
    """
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        return
    os.close(descriptor)


def open_private(
    path: Path | str, mode: Literal["a", "w", "w+"], *, encoding: str, errors: str | None = None
) -> io.TextIOWrapper:
    """``open(path, mode, …)`` as text, for ``mode`` "a", "w" or "w+", creating the file 0600.

    An existing file keeps its mode (an old one is tightened by ``tighten``, once)."""
    descriptor = os.open(path, _OPEN_FLAGS[mode], PRIVATE_FILE)
    try:
        return open(descriptor, mode, encoding=encoding, errors=errors)
    except BaseException:
        os.close(descriptor)
        raise


def tighten(folders: Iterable[Path], files: Iterable[Path]) -> list[Path]:
    """Take group and other access away from ``folders`` and ``files`` that have it; the
    ones changed. Missing paths and symbolic links are passed over (a link's target may be
    anything); a path that cannot be changed is left as it is (it raises nothing)."""
    changed: list[Path] = []
    if not POSIX:
        return changed
    for path, wanted, is_kind in [
        *((folder, PRIVATE_FOLDER, stat.S_ISDIR) for folder in folders),
        *((file, PRIVATE_FILE, stat.S_ISREG) for file in files),
    ]:
        try:
            mode = os.lstat(path).st_mode
            if not is_kind(mode) or not stat.S_IMODE(mode) & 0o077:
                continue
            os.chmod(path, stat.S_IMODE(mode) & wanted)
        except OSError:
            continue
        changed.append(path)
    return changed
