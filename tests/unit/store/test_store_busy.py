"""Several writers: writes take the lock first, wait for it, retry, and say so when they give up."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from threadline.core.messages import Message, MessageStatus
from threadline.store import db
from threadline.store.errors import StoreBusyError, StoreError
from threadline.store.repository import Store
from threadline.store.retry import RetryPolicy

NO_RETRY = RetryPolicy(total=0)


@contextmanager
def write_lock_held(path: Path, *, seconds: float | None = None) -> Iterator[threading.Event]:
    """Another connection holds ``BEGIN IMMEDIATE`` on ``path`` (for ``seconds``, or until the
    yielded event is set); the block runs once the lock is taken."""
    taken, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def hold() -> None:
        try:
            connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            connection.execute("BEGIN IMMEDIATE")
            taken.set()
            release.wait(seconds)
            connection.execute("COMMIT")
            connection.close()
        except BaseException as error:  # surfaced below
            errors.append(error)
            taken.set()

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert taken.wait(30)
    assert not errors, errors
    try:
        yield release
    finally:
        release.set()
        holder.join(30)
    assert not errors, errors


async def _store_with_a_prompt(path: Path, **options: object) -> tuple[Store, str, Message]:
    store = await Store.open(Store.sqlite_url(path), **options)  # type: ignore[arg-type]
    info = await store.create_session(title="busy")
    prompt = Message.prompt("is this kept?")
    await store.append_message(info.id, prompt)
    return store, info.id, prompt


@pytest.mark.asyncio
async def test_a_write_waits_for_a_lock_held_three_seconds(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite3"
    store, session_id, prompt = await _store_with_a_prompt(path)
    reply = Message.reply(parent_id=prompt.id)
    try:
        with write_lock_held(path, seconds=3):
            started = time.monotonic()
            second = Message.prompt("asked while locked", parent_id=prompt.id)
            await store.append_messages(session_id, [second])
            waited = time.monotonic() - started
            await store.append_message(session_id, reply)
            await store.update_message_text(reply.id, "streamed while another program wrote")
        await store.update_message(replace(reply, text="done", status=MessageStatus.COMPLETE))
        tree = await store.load_tree(session_id)
    finally:
        await store.close()
    assert waited > 1.0  # it really waited for the other writer
    assert tree.get(second.id).text == "asked while locked"
    assert tree.get(reply.id).text == "done"
    assert tree.get(reply.id).status is MessageStatus.COMPLETE


@pytest.mark.asyncio
async def test_writes_take_the_lock_first_so_the_busy_timeout_applies(tmp_path: Path) -> None:
    """Without retries, a read-then-write transaction still waits: it began IMMEDIATE.

    With a deferred BEGIN the append would read the session, then fail at once with
    "database is locked" when its first write asked for the lock.
    """
    path = tmp_path / "t.sqlite3"
    store, session_id, prompt = await _store_with_a_prompt(path, retry=NO_RETRY)
    try:
        with write_lock_held(path, seconds=1.5):
            await store.append_message(session_id, Message.prompt("after the lock", parent_id=prompt.id))
        assert await store.message_count(session_id) == 2
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_reads_do_not_wait_for_a_writer(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite3"
    store, session_id, prompt = await _store_with_a_prompt(path, retry=NO_RETRY)
    try:
        with write_lock_held(path):
            started = time.monotonic()
            tree = await store.load_tree(session_id)
            assert time.monotonic() - started < db.BUSY_TIMEOUT_MS / 1000
        assert tree.get(prompt.id).text == "is this kept?"
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_a_write_is_retried_past_the_busy_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 100)
    path = tmp_path / "t.sqlite3"
    store, session_id, prompt = await _store_with_a_prompt(path)
    try:
        with write_lock_held(path, seconds=1.5):
            await store.append_message(session_id, Message.prompt("kept", parent_id=prompt.id))
        assert await store.message_count(session_id) == 2
    finally:
        await store.close()


@pytest.mark.expected_log_warnings("gave up after")
@pytest.mark.asyncio
async def test_a_lock_held_past_the_retry_bound_raises_store_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 100)
    path = tmp_path / "t.sqlite3"
    store, session_id, prompt = await _store_with_a_prompt(path, retry=RetryPolicy(total=0.6))
    late = Message.prompt("sent while locked", parent_id=prompt.id)
    try:
        with write_lock_held(path), pytest.raises(StoreBusyError) as caught:
            await store.append_message(session_id, late)
        error = caught.value
        assert isinstance(error, StoreError) and error.transient
        assert error.user_message.startswith("The database is busy: another Threadline window or program")
        assert "database is locked" not in error.user_message  # the driver's words stay in the detail
        assert "database is locked" in error.detail
        await store.append_message(session_id, late)  # the same write succeeds once the lock is gone
        assert await store.message_count(session_id) == 2
    finally:
        await store.close()


@pytest.mark.expected_log_warnings("gave up after")
@pytest.mark.asyncio
async def test_closing_stops_a_write_being_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 100)
    path = tmp_path / "t.sqlite3"
    store, session_id, _ = await _store_with_a_prompt(path, retry=RetryPolicy(total=120))
    with write_lock_held(path):
        pending = asyncio.ensure_future(store.append_message(session_id, Message.prompt("x")))
        await asyncio.sleep(0.3)  # let the write reach the store thread (it fails the same either way)
        started = time.monotonic()
        await store.close()
        with pytest.raises(StoreBusyError):
            await pending
        assert time.monotonic() - started < 30


@pytest.mark.asyncio
async def test_an_append_repeated_after_it_was_committed_is_harmless(tmp_path: Path) -> None:
    """A retry after a connection lost during COMMIT may repeat an append that did land."""
    store, session_id, prompt = await _store_with_a_prompt(tmp_path / "t.sqlite3")
    try:
        await store.append_message(session_id, prompt)
        assert await store.message_count(session_id) == 1
    finally:
        await store.close()
