"""The managed runtime with the real llama.cpp server (``llama-cpp-python``, the
``threadline[local]`` extra): the tiny random-weight llama of ``tests/support/tiny_gguf.py``
loaded and answering on 127.0.0.1 with a key, shared by a second process, restarted after a
kill, unloaded when idle, and a model too big for this computer refused before loading."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.tiny_gguf import make_tiny_gguf

from threadline.models.library import InstalledModel, ModelLibrary
from threadline.models.runtime import (
    KEY_FILE,
    LocalRuntime,
    ModelTooBig,
    RuntimeSettings,
    RuntimeUnavailable,
    llama_cpp_installed,
)

pytestmark = pytest.mark.skipif(
    not llama_cpp_installed(), reason="needs the threadline[local] extra (llama-cpp-python[server])"
)

SETTINGS = RuntimeSettings(context=256, gpu_layers=0, idle_minutes=30)


@pytest.fixture
def tiny(tmp_path: Path) -> InstalledModel:
    library = ModelLibrary(tmp_path / "models")
    library.folder.mkdir()
    make_tiny_gguf(library.folder / "tiny.gguf")
    return library.get("tiny.gguf")


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[LocalRuntime]:
    made = LocalRuntime(tmp_path / "runtime", key_dir=tmp_path / "runtime" / "key")
    yield made
    made.stop()


def chat(base_url: str, key: str, model: str) -> tuple[int, str]:
    from threadline.models.download import httpx_module

    response = httpx_module().post(
        base_url + "/chat/completions",
        headers={"Authorization": f"Bearer {key}"},
        json={"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8},
        timeout=120,
        trust_env=False,
    )
    return response.status_code, response.text


def listening(port: int) -> set[str]:
    """The local addresses listening on ``port`` (from /proc/net/tcp and tcp6, in hex)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            for row in list(rows)[1:]:
                local, state = row.split()[1], row.split()[3]
                address, hex_port = local.rsplit(":", 1)
                if state == "0A" and int(hex_port, 16) == port:
                    found.add(address)
    return found


def test_loads_the_model_answers_with_the_key_only_and_logs_no_key(
    runtime: LocalRuntime, tiny: InstalledModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOST", "0.0.0.0")  # llama_cpp.server would take these over its arguments
    monkeypatch.setenv("PORT", "1")
    endpoint = runtime.ensure(tiny, SETTINGS)
    assert endpoint.base_url.startswith("http://127.0.0.1:")
    port = int(endpoint.base_url.rsplit(":", 1)[1].split("/")[0])
    assert listening(port) == {"0100007F"}  # 127.0.0.1 only
    status, body = chat(endpoint.base_url, endpoint.api_key, tiny.name)
    assert status == 200, body
    assert json.loads(body)["choices"][0]["message"]["role"] == "assistant"
    assert chat(endpoint.base_url, "wrong", tiny.name)[0] == 401
    key_file = runtime.state_dir / "key" / KEY_FILE
    assert (key_file.stat().st_mode & 0o777) == 0o600
    assert endpoint.api_key not in runtime.log_path.read_text(errors="replace")
    assert endpoint.api_key not in (runtime.state_dir / "state.json").read_text()
    assert (
        f"/proc/{endpoint.pid}" and endpoint.api_key not in Path(f"/proc/{endpoint.pid}/cmdline").read_text()
    )
    assert runtime.ensure(tiny, SETTINGS) == endpoint  # loaded already: the same one


def test_a_second_process_uses_the_running_runtime(runtime: LocalRuntime, tiny: InstalledModel) -> None:
    endpoint = runtime.ensure(tiny, SETTINGS)
    script = (
        "import sys, json; from pathlib import Path\n"
        "from threadline.models.library import ModelLibrary\n"
        "from threadline.models.runtime import LocalRuntime, RuntimeSettings\n"
        "rt = LocalRuntime(Path(sys.argv[1]), key_dir=Path(sys.argv[1]) / 'key')\n"
        "e = rt.ensure(ModelLibrary(Path(sys.argv[2])).get('tiny.gguf'), RuntimeSettings(context=256))\n"
        "print(json.dumps([e.pid, e.base_url]))\n"
    )
    other = subprocess.run(
        [sys.executable, "-c", script, str(runtime.state_dir), str(tiny.path.parent)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert other.returncode == 0, other.stderr
    assert json.loads(other.stdout) == [endpoint.pid, endpoint.base_url]


def test_killed_runtime_is_started_again_on_the_next_use(runtime: LocalRuntime, tiny: InstalledModel) -> None:
    first = runtime.ensure(tiny, SETTINGS)
    os.kill(first.pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while runtime.alive(first) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not runtime.alive(first)
    second = runtime.ensure(tiny, SETTINGS)
    assert second.pid != first.pid and second.api_key != first.api_key
    assert chat(second.base_url, second.api_key, tiny.name)[0] == 200


def test_unloads_after_the_idle_time(runtime: LocalRuntime, tiny: InstalledModel) -> None:
    stopped: list[str] = []
    runtime.on_stopped = stopped.append
    endpoint = runtime.ensure(tiny, RuntimeSettings(context=256, idle_minutes=0.02))  # 1.2 s
    deadline = time.monotonic() + 60
    while not stopped and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stopped == ["tiny.gguf"]
    assert runtime.status() is None and not runtime.alive(endpoint)
    assert not (runtime.state_dir / "key" / KEY_FILE).exists()


def test_a_model_too_big_is_refused_before_loading(runtime: LocalRuntime, tiny: InstalledModel) -> None:
    huge = RuntimeSettings(context=10_000_000_000)  # its KV cache alone: terabytes
    with pytest.raises(ModelTooBig) as refused:
        runtime.ensure(tiny, huge)
    message = refused.value.user_message
    assert (
        message.startswith("tiny.gguf needs about ")
        and " TB of memory with a context of 10,000,000,000" in message
    )
    assert "this computer has " in message
    assert not runtime.log_path.exists()  # nothing was started


def test_a_missing_llama_server_binary_is_named(
    runtime: LocalRuntime, tiny: InstalledModel, tmp_path: Path
) -> None:
    gone = str(tmp_path / "no-such-llama-server")
    with pytest.raises(RuntimeUnavailable, match="llama-server program set for local models was not found"):
        runtime.ensure(tiny, RuntimeSettings(context=256, server_binary=gone))
