"""The data folder is the user's alone: folders 0700, files 0600, whatever the umask lets others read.

An older Threadline left the folder 0755 and the database, its WAL, backups and logs 0644:
every local user could read every conversation. A fresh start now writes everything
private, and the first start of this version tightens a folder an older one made.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.integration.engine.helpers import turn
from tests.integration.tools.conftest import faulty_server
from tests.support.cli_process import threadline
from tests.support.engines import open_engine
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response

from threadline.app.logging_setup import setup_logging
from threadline.engine.engine import DATABASE_FILENAME, Engine
from threadline.store import damage
from threadline.store.backups import make_backup, restore_backup
from threadline.store.repository import Store

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


@pytest.fixture(autouse=True)
def ordinary_umask() -> Iterator[None]:
    """The usual 022, whatever the machine's: the one that made everything readable by all."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def modes(root: Path) -> dict[str, str]:
    """Every folder and file under ``root`` (``root`` itself as "."), with its permission bits."""
    return {
        (str(path.relative_to(root)) if path != root else "."): oct(stat.S_IMODE(path.lstat().st_mode))
        for path in [root, *sorted(root.rglob("*"))]
    }


def not_private(root: Path) -> dict[str, str]:
    return {
        name: mode
        for name, mode in modes(root).items()
        if mode != ("0o700" if (root / name).is_dir() else "0o600")
    }


@pytest.mark.asyncio
async def test_a_fresh_start_writes_everything_for_its_owner_alone(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    data = tmp_path / "data"
    setup = setup_logging(data)
    try:
        logging.getLogger("threadline.test").info("a log line")
        engine = await open_engine(data, replay_server)
        try:
            session = await engine.sessions.new_session()
            replay_server.enqueue(sse_response(openai_text_stream(["Hi."])))
            await turn(engine, session.id, "hello")
            await engine.tool_servers.save_server(faulty_server())
            await engine.tool_servers.start("faulty")  # its stderr goes to logs/mcp-faulty.log
            make_backup(data / DATABASE_FILENAME, "test")
            engine.voice.save_settings(engine.voice.settings.changed(rate=10))  # voice.json
            docs = tmp_path / "docs"
            docs.mkdir()
            (docs / "notes.md").write_text("# Notes\n\nThe pump needs oil.\n")
            await engine.knowledge.add("notes", [docs])
            await engine.knowledge.index("notes")  # the index holds passages of the user's files
            setup.handler.doRollover()  # type: ignore[attr-defined]
            logging.getLogger("threadline.test").info("a line in the next log file")
            seen = modes(data)
            wrong = not_private(data)
        finally:
            await engine.aclose()
    finally:
        setup.close()
    print(seen)
    expected = {
        "threadline.db",
        "threadline.db-wal",
        "threadline.db-shm",
        "logs/threadline.log",
        "logs/threadline.log.1",
        "logs/mcp-faulty.log",
        "voice.json",
        "knowledge.sqlite3",
    }
    assert wrong == {}
    assert expected <= seen.keys()
    assert any(name.startswith("backups/threadline-") for name in seen)


@pytest.mark.asyncio
async def test_a_folder_an_older_version_made_is_tightened_once(tmp_path: Path) -> None:
    data = older_version_folder(tmp_path / "data")
    notes = data / "notes.txt"
    notes.write_text("the user's own file, not Threadline's")
    notes.chmod(0o644)
    database = data / DATABASE_FILENAME
    store = await Store.open(Store.sqlite_url(database))
    await store.close()
    database.chmod(0o644)
    engine = await Engine.open(data)
    await engine.aclose()
    assert not_private(data) == {"notes.txt": "0o644"}

    data.chmod(0o750)  # the user's choice, after the pass: kept
    engine = await Engine.open(data)
    await engine.aclose()
    assert modes(data)["."] == "0o750"


def test_the_real_process_starts_private_and_tightens_an_old_folder(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    listed = threadline(fresh, "list")
    assert listed.returncode == 0, listed.stderr
    assert (fresh / DATABASE_FILENAME).exists()
    assert not_private(fresh) == {}

    old = older_version_folder(tmp_path / "old")
    listed = threadline(old, "list")
    assert listed.returncode == 0, listed.stderr
    assert not_private(old) == {}


def older_version_folder(data: Path) -> Path:
    """A data folder as an older Threadline left it: 0755 folders, 0644 files."""
    for folder in (data, data / "logs", data / "backups"):
        folder.mkdir(parents=True)
        folder.chmod(0o755)
    files = {
        "logs/threadline.log": "",
        "logs/threadline.log.1": "",
        "logs/mcp-time.log": "",
        "backups/threadline-20250101-120000-daily.db": "",
        "database.json": '{"backend": "sqlite"}\n',
    }
    for name, text in files.items():
        (data / name).write_text(text)
        (data / name).chmod(0o644)
    return data


@pytest.mark.asyncio
async def test_a_damage_marker_and_a_restored_database_are_private_too(tmp_path: Path) -> None:
    data = tmp_path / "data"
    database = data / DATABASE_FILENAME
    store = await Store.open(Store.sqlite_url(database))
    await store.close()
    backup = make_backup(database, "test")
    backup.chmod(0o644)  # say, copied in by hand
    damage.record_damage(database, damage.SEEN_BY_SELF_TEST, "a page is damaged")
    assert not_private(data) == {"backups/" + backup.name: "0o644"}
    assert damage.marker_path(database).exists()
    restore_backup(backup, database)
    assert not_private(data) == {"backups/" + backup.name: "0o644"}
