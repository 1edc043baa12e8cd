"""A damaged page in a database of a few hundred chats, seen through the real ``threadline`` process.

The daily backup that follows is checked and set aside, the healthy ones are kept, every
advice names the newest healthy backup, writing commands refuse until the file is
restored (``threadline db restore``) or the user says ``--ignore-damage``.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from tests.unit.store.test_store_integrity import damage_a_messages_page

from threadline.core.messages import Message
from threadline.store.backups import daily_backup, list_backups, quick_check, set_aside_backups
from threadline.store.damage import marker_path
from threadline.store.repository import Store

REPO = Path(__file__).resolve().parents[3]
ENV = {
    **os.environ,
    "PYTHONPATH": str(REPO / "desktop"),
    "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    "QT_QPA_PLATFORM": "offscreen",
}
CHATS = 300


def threadline(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "threadline", *args, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        check=False,
    )


async def write_chats(path: Path, chats: int = CHATS) -> None:
    """``chats`` chats of one long prompt each: the messages fill many pages."""
    store = await Store.open(Store.sqlite_url(path), keep_daily_backups=0)
    try:
        for i in range(chats):
            info = await store.create_session(title=f"chat {i}")
            await store.append_message(info.id, Message.prompt(f"chat {i}: " + "lorem ipsum dolor " * 30))
    finally:
        await store.close()


def count_rows(path: Path, table: str) -> int:
    connection = sqlite3.connect(path)
    try:
        return int(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        connection.close()


async def damaged_with_a_week_of_backups(data_dir: Path) -> tuple[Path, list[Path]]:
    """A database of ``CHATS`` chats with healthy daily backups from the last 7 days, then a
    damaged page; returns the database and its backups, oldest first."""
    database = data_dir / "threadline.db"
    await write_chats(database)
    today = datetime.now()
    week = [daily_backup(database, now=today - timedelta(days=days)) for days in range(7, 0, -1)]
    assert all(b is not None for b in week)
    damage_a_messages_page(database)
    return database, [b for b in week if b is not None]


@pytest.mark.asyncio
async def test_the_backup_after_a_damaged_page_is_set_aside_and_writing_is_refused(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    database, week = await damaged_with_a_week_of_backups(data_dir)
    newest_healthy = week[-1]

    threadline(data_dir, "list")  # the first command after the damage takes today's backup

    assert sorted(list_backups(database)) == sorted(week)  # all seven healthy ones kept
    aside = set_aside_backups(database)
    assert len(aside) == 1 and aside[0].name.endswith("-daily.db.damaged")
    assert quick_check(aside[0])  # the set-aside copy is the damaged one
    assert marker_path(database).exists()

    refused = threadline(data_dir, "ask", "hello")
    assert refused.returncode == 1
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1, refused.stderr
    assert "damaged" in lines[0] and "nothing was written" in lines[0]
    assert str(newest_healthy) in lines[0] and "`threadline db restore`" in lines[0]
    assert "--ignore-damage" in lines[0]
    assert count_rows(newest_healthy, "sessions") == CHATS
    assert count_rows(database, "sessions") == CHATS  # no new chat written into the damaged file


@pytest.mark.asyncio
async def test_self_test_names_the_backup_and_the_restore_command_restores_it(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    database, week = await damaged_with_a_week_of_backups(data_dir)
    newest_healthy = week[-1]
    # A damaged copy from before the fix, the newest of all: never named, never restored.
    bad = newest_healthy.with_name(newest_healthy.name.replace("-daily", "-daily-2"))
    bad.write_bytes(database.read_bytes())
    assert quick_check(bad)

    checked = threadline(data_dir, "--self-test")
    assert checked.returncode == 1
    lines = checked.stderr.strip().splitlines()
    assert len(lines) == 1, checked.stderr
    assert lines[0].startswith("threadline self-test FAILED while checking the database:")
    assert str(newest_healthy) in lines[0] and "`threadline db restore`" in lines[0]
    assert bad.name not in lines[0]

    add = ("provider", "add", "local", "--kind", "openai", "--base-url", "http://127.0.0.1:9/v1")
    refused = threadline(data_dir, *add)
    assert refused.returncode == 1 and str(newest_healthy) in refused.stderr
    assert count_rows(database, "providers") == 0
    allowed = threadline(data_dir, *add, "--ignore-damage")
    assert allowed.returncode == 0, allowed.stderr
    assert count_rows(database, "providers") == 1

    listed = threadline(data_dir, "db", "restore", "--list")
    assert listed.returncode == 0, listed.stderr
    assert "damaged (found by the self-test" in listed.stdout
    lines = listed.stdout.splitlines()
    assert "  ok  " in next(
        line for line in lines if line.endswith(f"{newest_healthy.name}  (restored by default)")
    )
    assert "DAMAGED" in next(line for line in lines if f"{bad.name}.damaged" in line)
    assert sum(" ok " in line for line in lines) == len(week)

    restored = threadline(data_dir, "db", "restore")
    assert restored.returncode == 0, restored.stderr
    assert newest_healthy.name in restored.stdout
    assert not marker_path(database).exists()
    kept = [p for p in data_dir.iterdir() if p.name.startswith("threadline.db.damaged-")]
    assert len(kept) == 1 and quick_check(kept[0])  # the damaged file is kept aside
    assert quick_check(database) == [] and count_rows(database, "sessions") == CHATS
    again = threadline(data_dir, *add)
    assert again.returncode == 0, again.stderr
