"""A full disk says "full", with the free space and the folder, whatever SQLite's code (no mount needed).

The tmpfs tests (``tests/integration/store/test_store_disks.py``) fill a real disk;
these check the wording and the decision on any disk: SQLite's "full" code names
the folder and its free space, and an I/O error on a disk with room to spare stays
a disk error (it is not taken for a full disk).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import sqlalchemy as sa

from threadline.core.sizes import readable_size
from threadline.store.errors import StorageFullError, StoreError, disk_full_message
from threadline.store.translate import FULL_BELOW, translate_error

SQLITE_FULL = 13
SQLITE_IOERR_SHMSIZE = 10 | (19 << 8)


def _wrapped(code: int, text: str) -> sa.exc.OperationalError:
    error = sqlite3.OperationalError(text)
    error.sqlite_errorcode = code
    return sa.exc.OperationalError("UPDATE messages SET text=?", {}, error)


def test_sizes_read_as_a_file_manager_shows_them() -> None:
    assert readable_size(0) == "0 bytes"
    assert readable_size(1023) == "1023 bytes"
    assert readable_size(12 * 1024) == "12 KB"
    assert readable_size(3_500_000) == "3.3 MB"
    assert readable_size(5 * 1024**4) == "5.0 TB"


def test_the_message_names_the_free_space_and_the_folder(tmp_path: Path) -> None:
    message = disk_full_message(tmp_path, 4096)
    assert message.startswith("The disk holding the conversation database is full")
    assert f"4.0 KB free in {tmp_path}" in message and "Free some space" in message


def test_sqlites_full_code_names_the_folder_and_its_free_space(tmp_path: Path) -> None:
    database = tmp_path / "threadline.db"
    translated = translate_error(_wrapped(SQLITE_FULL, "database or disk is full"), sqlite_file=database)
    assert isinstance(translated, StorageFullError) and not translated.transient
    assert f"free in {tmp_path})" in translated.user_message
    assert "database or disk is full" not in translated.user_message  # the driver's words stay in detail


def test_an_io_error_with_room_to_spare_is_a_disk_error_not_a_full_disk(tmp_path: Path) -> None:
    assert shutil.disk_usage(tmp_path).free >= FULL_BELOW, "the temp folder's disk is nearly full"
    database = tmp_path / "threadline.db"
    translated = translate_error(_wrapped(SQLITE_IOERR_SHMSIZE, "disk I/O error"), sqlite_file=database)
    assert type(translated) is StoreError
    assert "reported an error while reading or writing" in translated.user_message


def test_without_a_file_the_message_stays_general() -> None:
    translated = translate_error(_wrapped(SQLITE_FULL, "database or disk is full"))
    assert isinstance(translated, StorageFullError)
    assert translated.user_message == StorageFullError.default_message
