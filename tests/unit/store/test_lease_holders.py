"""Who holds a lease, and whether a late heartbeat makes it expired (``store.lease_types``).

A holder names its process as ``host|pid|token.start``. A reader on the same machine asks
whether that very process still runs: a running pid with another start is a later process
that reused the pid, so the holder is gone. A live holder's late heartbeat is not its death.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from threadline.store.lease_types import (
    LIVE_SILENCE,
    Lease,
    expired,
    holder_alive,
    new_holder,
    process_started,
    retire_holder,
)

HOST = socket.gethostname()
EXPIRES_AFTER = timedelta(seconds=20)
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="starts are read on Linux")


@pytest.fixture
def live_pid() -> Iterator[int]:
    """Another process on this machine, alive for the test."""
    process = subprocess.Popen(["sleep", "60"])
    try:
        yield process.pid
    finally:
        process.kill()
        process.wait()


@pytest.fixture
def dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def lease(holder: str, silent: timedelta) -> Lease:
    return Lease("s1", holder, HOST, NOW - silent, NOW - silent, False, NOW)


def test_a_holder_names_its_process_and_start(live_pid: int) -> None:
    holder = new_holder()
    try:
        host, pid, token = holder.split("|")
        assert (host, pid) == (HOST, str(os.getpid()))
        assert token.partition(".")[2] == process_started(os.getpid())
    finally:
        retire_holder(holder)
    assert process_started(live_pid) is not None
    assert process_started(live_pid) != process_started(os.getpid())


def test_a_live_process_here_is_alive_and_a_reused_pid_is_not(live_pid: int, dead_pid: int) -> None:
    started = process_started(live_pid)
    assert holder_alive(f"{HOST}|{live_pid}|abcd.{started}") is True
    assert holder_alive(f"{HOST}|{live_pid}|abcd.1") is False  # the pid now names a later process
    assert holder_alive(f"{HOST}|{live_pid}|abcd") is None  # no start recorded: cannot tell
    assert holder_alive(f"{HOST}|{dead_pid}|abcd.{started}") is False
    assert holder_alive(f"elsewhere.example|{live_pid}|abcd.{started}") is None


def test_a_live_holder_s_late_heartbeat_does_not_expire_it_until_it_is_silent_a_minute(live_pid: int) -> None:
    holder = f"{HOST}|{live_pid}|abcd.{process_started(live_pid)}"
    assert not expired(lease(holder, EXPIRES_AFTER * 2), NOW, EXPIRES_AFTER)
    assert not expired(lease(holder, LIVE_SILENCE), NOW, EXPIRES_AFTER)
    assert expired(lease(holder, LIVE_SILENCE + timedelta(seconds=1)), NOW, EXPIRES_AFTER)


def test_a_gone_holder_expires_at_once_an_unknown_one_by_its_heartbeat(live_pid: int, dead_pid: int) -> None:
    started = process_started(live_pid)
    for gone in (f"{HOST}|{dead_pid}|abcd.{started}", f"{HOST}|{live_pid}|abcd.1"):
        assert expired(lease(gone, timedelta(0)), NOW, EXPIRES_AFTER)
    for unknown in (f"elsewhere.example|{live_pid}|abcd.{started}", f"{HOST}|{live_pid}|abcd"):
        assert not expired(lease(unknown, EXPIRES_AFTER), NOW, EXPIRES_AFTER)
        assert expired(lease(unknown, EXPIRES_AFTER + timedelta(seconds=1)), NOW, EXPIRES_AFTER)


def test_an_engine_of_this_process_is_judged_by_its_heartbeat_and_is_gone_once_closed() -> None:
    """This process runs (it is reading): its engine's silence means it cannot reach the database."""
    holder = new_holder()
    try:
        assert not expired(lease(holder, EXPIRES_AFTER), NOW, EXPIRES_AFTER)
        assert expired(lease(holder, EXPIRES_AFTER + timedelta(seconds=1)), NOW, EXPIRES_AFTER)
    finally:
        retire_holder(holder)
    assert expired(lease(holder, timedelta(0)), NOW, EXPIRES_AFTER)
