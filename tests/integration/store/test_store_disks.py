"""A full disk and a read-only disk: typed errors with clear messages, and what was written stays."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from tests.integration.store.mounts import fill, remount, small_tmpfs

from threadline.core.messages import Message, MessageStatus
from threadline.store.errors import ReadOnlyDatabaseError, StorageFullError
from threadline.store.integrity import check_sqlite_file
from threadline.store.repository import Store


@pytest.mark.asyncio
async def test_a_full_disk_raises_storage_full_and_keeps_what_was_written(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "disk", "4m") as disk:
        url = Store.sqlite_url(disk / "threadline.db")
        store = await Store.open(url)
        try:
            info = await store.create_session(title="before the disk filled")
            prompt = Message.prompt("written before the disk filled")
            reply = Message.reply(parent_id=prompt.id)
            await store.append_messages(info.id, [prompt, reply])
            await store.update_message_text(reply.id, "the reply so far")

            filler = fill(disk)
            with pytest.raises(StorageFullError) as caught:
                await store.update_message_text(reply.id, "the reply so far, and much more. " * 40_000)
            assert caught.value.user_message.startswith("The disk holding the conversation database is full")
            assert f"free in {disk})" in caught.value.user_message  # the folder, with what is left there
            assert "Free some space" in caught.value.user_message
            assert not caught.value.transient
            with pytest.raises(StorageFullError):
                await store.append_message(info.id, Message.prompt("x" * 1_000_000, parent_id=reply.id))

            filler.unlink()  # space again: the same store writes on
            await store.update_message(replace(reply, text="finished later", status=MessageStatus.COMPLETE))
        finally:
            await store.close()

        store = await Store.open(url)
        try:
            tree = await store.load_tree(info.id)
        finally:
            await store.close()
        assert tree.get(prompt.id).text == "written before the disk filled"
        assert tree.get(reply.id).text == "finished later"
        assert len(list(tree)) == 2
        assert check_sqlite_file(disk / "threadline.db") == []


@pytest.mark.asyncio
async def test_a_full_disk_met_as_an_io_error_still_says_full(tmp_path: Path) -> None:
    """Opening on a full disk: the WAL's shared-memory file cannot grow, and SQLite says
    "disk I/O error" (SQLITE_IOERR_SHMSIZE), not "full"; the user must still read "full"."""
    with small_tmpfs(tmp_path / "disk", "4m") as disk:
        url = Store.sqlite_url(disk / "threadline.db")
        store = await Store.open(url)
        try:
            await store.create_session(title="kept")
        finally:
            await store.close()  # the last connection removes the -wal and -shm files
        filler = fill(disk)

        with pytest.raises(StorageFullError) as caught:
            store = await Store.open(url)
            await store.close()
        assert "disk I/O error" in caught.value.detail  # what SQLite said
        assert caught.value.user_message.startswith("The disk holding the conversation database is full")
        assert f"free in {disk})" in caught.value.user_message

        filler.unlink()
        store = await Store.open(url)
        try:
            assert [s.title for s in await store.list_sessions()] == ["kept"]
        finally:
            await store.close()


@pytest.mark.asyncio
async def test_a_database_on_a_read_only_disk_says_so(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "disk", "4m") as disk:
        url = Store.sqlite_url(disk / "threadline.db")
        store = await Store.open(url)
        try:
            await store.create_session(title="kept")
        finally:
            await store.close()
        remount(disk, "ro")

        with pytest.raises(ReadOnlyDatabaseError) as caught:
            store = await Store.open(url)
            await store.create_session(title="new")

        assert "cannot be changed" in caught.value.user_message
        assert "unable to open" not in caught.value.user_message
        remount(disk, "rw")
        store = await Store.open(url)
        try:
            assert [s.title for s in await store.list_sessions()] == ["kept"]
        finally:
            await store.close()
