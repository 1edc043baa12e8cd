"""A frozen build's runtime, without PyInstaller: ``sys.frozen`` set and ``sys.executable`` a
``threadline`` program (here a script running ``packaging/launcher.py``, the frozen build's entry
script), so the runtime starts ``threadline --run-local-runtime …`` under its guard (the same
program with the guard's flag) and the real llama.cpp server behind that hidden entry
loads the tiny llama on 127.0.0.1 and answers with the key only (docs/local-models.md,
"Packaging"; the built packages themselves: packaging/test_deb.sh)."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.tiny_gguf import make_tiny_gguf

import threadline
from threadline.models.library import InstalledModel, ModelLibrary
from threadline.models.runtime import LocalRuntime, RuntimeSettings, llama_cpp_installed

pytestmark = pytest.mark.skipif(
    not llama_cpp_installed(), reason="needs the threadline[local] extra (llama-cpp-python[server])"
)


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


def test_the_hidden_entry_serves_the_model(
    runtime: LocalRuntime, tiny: InstalledModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = tmp_path / "bin" / "threadline"
    program.parent.mkdir()
    source = Path(threadline.__file__).resolve().parent.parent
    launcher = shlex.quote(str(source.parent / "packaging" / "launcher.py"))
    python = shlex.quote(sys.executable)
    program.write_text(f'#!/bin/sh\nPYTHONPATH={shlex.quote(str(source))} exec {python} {launcher} "$@"\n')
    program.chmod(0o755)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(program))
    monkeypatch.setenv("HOST", "0.0.0.0")  # the child's environment still gets 127.0.0.1
    endpoint = runtime.ensure(tiny, RuntimeSettings(context=256, idle_minutes=30))
    assert endpoint.base_url.startswith("http://127.0.0.1:")
    cmdline = Path(f"/proc/{endpoint.pid}/cmdline").read_bytes().split(b"\0")
    assert b"--run-local-runtime" in cmdline
    assert endpoint.api_key.encode() not in b" ".join(cmdline)
    from threadline.models.download import httpx_module

    httpx = httpx_module()
    reply = httpx.post(
        endpoint.base_url + "/chat/completions",
        headers={"Authorization": f"Bearer {endpoint.api_key}"},
        json={"model": tiny.name, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8},
        timeout=120,
        trust_env=False,
    )
    assert reply.status_code == 200, reply.text
    assert json.loads(reply.text)["choices"][0]["message"]["role"] == "assistant"
    wrong_key = {"Authorization": "Bearer wrong"}
    assert httpx.get(endpoint.base_url + "/models", headers=wrong_key, trust_env=False).status_code == 401
