"""The shared runtime ends when no Threadline process uses it any more, and not before
(``models/runtime_guard.py``, ``models/runtime_leases.py``), with the real llama.cpp server and
real processes: the last user killed with SIGKILL, the guard itself killed, two users of which
one is killed or closes, and a runtime an older Threadline left running found at start."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.integration.models.test_runtime import chat
from tests.support.fresh_python import ROOT
from tests.support.tiny_gguf import make_tiny_gguf
from tests.support.waiting import until_sync

from threadline.engine.models import Models
from threadline.models.library import InstalledModel, ModelLibrary
from threadline.models.runtime import (
    Endpoint,
    LocalRuntime,
    RuntimeSettings,
    _free_port,
    llama_cpp_installed,
    server_command,
)

pytestmark = pytest.mark.skipif(
    not llama_cpp_installed(), reason="needs the threadline[local] extra (llama-cpp-python[server])"
)

SETTINGS = RuntimeSettings(context=256, gpu_layers=0, idle_minutes=30)
USER = """
import json, sys
from pathlib import Path
from threadline.models.library import ModelLibrary
from threadline.models.runtime import LocalRuntime, RuntimeSettings
state = Path(sys.argv[1])
runtime = LocalRuntime(state, key_dir=state / "key")
e = runtime.ensure(ModelLibrary(Path(sys.argv[2])).get("tiny.gguf"), RuntimeSettings(context=256))
print(json.dumps([e.pid, e.base_url, e.api_key]), flush=True)
sys.stdin.read()  # until the test closes our stdin (or kills us)
runtime.close()
"""


def gone(pid: int) -> bool:
    """Whether ``pid`` has ended (a zombie of ours counts as ended: it holds no memory)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


class User:
    """Another Threadline process using the runtime of ``state_dir``."""

    def __init__(self, state_dir: Path, models: Path) -> None:
        env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'desktop'}"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", USER, str(state_dir), str(models)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the user process could not start the runtime"
        self.pid, self.base_url, self.key = json.loads(line)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(60)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self.process.wait(120) == 0


@pytest.fixture
def tiny(tmp_path: Path) -> InstalledModel:
    library = ModelLibrary(tmp_path / "models")
    library.folder.mkdir()
    make_tiny_gguf(library.folder / "tiny.gguf")
    return library.get("tiny.gguf")


@pytest.fixture
def state_dir(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "runtime"
    yield folder
    LocalRuntime(folder, key_dir=folder / "key").stop()  # whatever a failed test left


def leases(state_dir: Path) -> list[str]:
    return sorted(p.name for p in (state_dir / "users").glob("*.lease"))


def test_the_runtime_ends_when_its_only_user_is_killed(state_dir: Path, tiny: InstalledModel) -> None:
    user = User(state_dir, tiny.path.parent)
    assert chat(user.base_url, user.key, tiny.name)[0] == 200
    user.kill()
    until_sync(lambda: gone(user.pid), "the runtime ending after its only user was killed")
    assert not (state_dir / "state.json").exists() and not (state_dir / "key" / "runtime.key").exists()
    assert leases(state_dir) == []


def test_the_runtime_ends_when_its_guard_is_killed(state_dir: Path, tiny: InstalledModel) -> None:
    runtime = LocalRuntime(state_dir, key_dir=state_dir / "key")
    endpoint = runtime.ensure(tiny, SETTINGS)
    with open(f"/proc/{endpoint.pid}/stat") as stat:
        guard = int(stat.read().rsplit(")", 1)[1].split()[2])  # the server's parent
    assert guard != os.getpid()
    os.kill(guard, signal.SIGKILL)
    until_sync(lambda: gone(endpoint.pid), "the server ending with its guard")
    runtime.close()


def test_a_killed_user_leaves_the_other_its_runtime(state_dir: Path, tiny: InstalledModel) -> None:
    starter = User(state_dir, tiny.path.parent)  # starts the runtime: its guard is that process's child
    runtime = LocalRuntime(state_dir, key_dir=state_dir / "key")
    endpoint = runtime.ensure(tiny, SETTINGS)
    assert endpoint.pid == starter.pid and len(leases(state_dir)) == 2
    starter.kill()
    # The guard looked at the leases after the kill: it removed the dead process's one.
    until_sync(lambda: len(leases(state_dir)) == 1, "the killed user's lease removed")
    assert not gone(endpoint.pid)
    assert chat(endpoint.base_url, endpoint.api_key, tiny.name)[0] == 200
    assert runtime.ensure(tiny, SETTINGS) == endpoint
    runtime.close()  # the last user closing: the runtime goes with it
    until_sync(lambda: gone(endpoint.pid), "the runtime ending with its last user")


def test_a_user_closing_normally_leaves_the_other_its_runtime(state_dir: Path, tiny: InstalledModel) -> None:
    runtime = LocalRuntime(state_dir, key_dir=state_dir / "key")
    endpoint = runtime.ensure(tiny, SETTINGS)  # this process starts it
    other = User(state_dir, tiny.path.parent)
    assert other.pid == endpoint.pid
    runtime.close()  # as the window that started it closes
    assert not gone(endpoint.pid)
    assert chat(other.base_url, other.key, tiny.name)[0] == 200
    other.kill()
    until_sync(lambda: gone(endpoint.pid), "the runtime ending when its other user was killed")


def test_a_runtime_an_older_threadline_left_is_stopped_at_start(tmp_path: Path, tiny: InstalledModel) -> None:
    """As a Threadline before leases ran it: the server a direct child in a session of its own,
    the state and the key written, no lease; that process then killed."""
    old = LocalRuntime(tmp_path / "runtime")
    port = _free_port()
    made = server_command(SETTINGS, tiny, port)
    assert made is not None
    command, variable = made
    key = "an-old-key"
    log = open(tmp_path / "old.log", "wb")  # noqa: SIM115
    server = subprocess.Popen(
        command,
        env={**os.environ, variable: key, "HOST": "127.0.0.1", "PORT": str(port)},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        old._write_state({"path": str(tiny.path), "model": tiny.name, "pid": server.pid, "port": port}, key)
        endpoint = Endpoint(f"http://127.0.0.1:{port}/v1", key, tiny.name, server.pid)
        until_sync(lambda: old._answers(endpoint), "the old runtime answering")
        Models(tmp_path)  # a Threadline starting on this data folder
        state = tmp_path / "runtime" / "state.json"
        until_sync(lambda: server.poll() is not None and not state.exists(), "the orphaned runtime stopped")
    finally:
        if server.poll() is None:
            server.kill()
        server.wait(60)
        log.close()
