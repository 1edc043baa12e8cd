"""The parts of the runtime's sharing that do not need llama.cpp, with real processes: the OS
lock (``files/os_lock.py``, the same code on POSIX and Windows above the system call), the
leases of live and killed processes (``models/runtime_leases.py``), and the guard
(``models/runtime_guard.py``) ending a stand-in server when the last lease goes, also when
started the way a frozen build starts it (``packaging/launcher.py``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.fresh_python import ROOT
from tests.support.waiting import until_sync

from threadline.files.os_lock import try_lock, unlock
from threadline.models import runtime_guard
from threadline.models.runtime_guard import GUARD_FLAG, guard_command
from threadline.models.runtime_leases import KEY_FILE, STATE_FILE, USERS_FOLDER, Lease, holders

ENV = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'desktop'}"}
HOLDER = """
import sys
from pathlib import Path
from threadline.models.runtime_leases import Lease
lease = Lease.take(Path(sys.argv[1]))
print(lease.path, flush=True)
sys.stdin.read()
"""
SERVER = [sys.executable, "-c", "import time; time.sleep(600)"]
"""A stand-in for the llama.cpp server: a process that runs until it is ended."""


class Holder:
    """Another process holding a lease on ``state_dir``."""

    def __init__(self, state_dir: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(state_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=ENV,
            text=True,
        )
        assert self.process.stdout is not None
        self.path = Path(self.process.stdout.readline().strip())

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(60)


@pytest.fixture
def holders_made() -> Iterator[list[Holder]]:
    made: list[Holder] = []
    yield made
    for holder in made:
        if holder.process.poll() is None:
            holder.kill()


def test_the_os_lock_excludes_another_open_file_until_let_go(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    with open(path, "a+b") as first, open(path, "a+b") as second:
        assert try_lock(first)
        assert not try_lock(second)
        unlock(first)
        assert try_lock(second)
        assert not try_lock(first)


def test_leases_of_live_processes_count_and_those_of_killed_ones_go(
    tmp_path: Path, holders_made: list[Holder]
) -> None:
    holders_made += [Holder(tmp_path), Holder(tmp_path)]
    first, second = holders_made
    assert first.path.parent == tmp_path / USERS_FOLDER
    assert first.path.name.startswith(f"{first.process.pid}-")
    own = Lease.take(tmp_path)
    assert holders(tmp_path) == 3 and holders(tmp_path, besides=own.path) == 2
    first.kill()
    assert holders(tmp_path, besides=own.path) == 1
    assert not first.path.exists() and second.path.exists()  # the dead one's file is gone
    own.release()
    assert not own.path.exists() and holders(tmp_path) == 1


def start_guard(state_dir: Path, command: list[str]) -> tuple[subprocess.Popen[bytes], int]:
    guard = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, env=ENV, start_new_session=True
    )
    assert guard.stdout is not None
    server = int(guard.stdout.readline())
    (state_dir / STATE_FILE).write_text(json.dumps({"pid": server, "port": 1}))
    (state_dir / "key").mkdir()
    (state_dir / "key" / KEY_FILE).write_text("k")
    return guard, server


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("frozen", [False, True], ids=["python -m", "frozen launcher"])
def test_the_guard_ends_its_server_when_the_last_lease_goes(
    tmp_path: Path, holders_made: list[Holder], monkeypatch: pytest.MonkeyPatch, frozen: bool
) -> None:
    holders_made.append(Holder(tmp_path))
    if frozen:  # the frozen executable is the launcher: here, Python running it
        monkeypatch.setattr(sys, "frozen", True, raising=False)
        monkeypatch.setattr(sys, "executable", sys.executable)
    command = guard_command(tmp_path, tmp_path / "key", SERVER)
    if frozen:
        assert command[:2] == [sys.executable, GUARD_FLAG]
        command.insert(1, str(ROOT / "packaging" / "launcher.py"))
    else:
        assert command[:3] == [sys.executable, "-m", "threadline.models.runtime_guard"]
    guard, server = start_guard(tmp_path, command)
    try:
        assert alive(server)
        holders_made[0].kill()
        until_sync(lambda: guard.poll() is not None, "the guard ending after the last user was killed")
        assert not alive(server)
        assert not (tmp_path / STATE_FILE).exists() and not (tmp_path / "key" / KEY_FILE).exists()
    finally:
        if guard.poll() is None:
            guard.kill()
            guard.wait(60)


def test_the_guard_keeps_a_state_that_names_another_server(tmp_path: Path) -> None:
    """A guard whose server was replaced (a swap) must not remove the new runtime's state."""
    (tmp_path / STATE_FILE).write_text(json.dumps({"pid": 1, "port": 1}))
    runtime_guard._forget(tmp_path, tmp_path, 12345)
    assert (tmp_path / STATE_FILE).exists()


def test_the_guard_ends_with_its_server(tmp_path: Path, holders_made: list[Holder]) -> None:
    holders_made.append(Holder(tmp_path))
    guard, server = start_guard(tmp_path, guard_command(tmp_path, tmp_path / "key", SERVER))
    os.kill(server, signal.SIGTERM)
    assert guard.wait(60) == 128 + signal.SIGTERM  # the server's own end, passed on
