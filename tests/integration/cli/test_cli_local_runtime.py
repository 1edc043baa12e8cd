"""``threadline ask --provider threadline --model NAME``: a downloaded model answered by the
real llama.cpp server of the ``threadline[local]`` extra, started for the question and
stopped when ``ask`` ends; ``threadline models runtime`` shows and sets its settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.cli_process import threadline
from tests.support.tiny_gguf import make_tiny_gguf

from threadline.models.runtime import llama_cpp_installed

pytestmark = pytest.mark.skipif(
    not llama_cpp_installed(), reason="needs the threadline[local] extra (llama-cpp-python[server])"
)


def test_ask_a_downloaded_model_on_this_computer(tmp_path: Path) -> None:
    data = tmp_path / "data"
    source = make_tiny_gguf(tmp_path / "tiny.gguf")
    imported = threadline(data, "models", "import", str(source))
    assert imported.returncode == 0, imported.stderr
    setting = threadline(data, "models", "runtime", "--context", "256", "--idle", "5")
    assert setting.returncode == 0, setting.stderr
    assert "Context: 256 tokens, GPU layers: 0, unloads after 5 min unused" in setting.stdout
    assert "Not running" in setting.stdout

    listed = threadline(data, "provider", "list")
    assert "On this computer" in listed.stdout, listed.stdout

    asked = threadline(data, "ask", "--provider", "threadline", "--model", "tiny.gguf", "Hello", timeout=600)
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.strip(), asked  # random words from random weights, but words
    after = threadline(data, "models", "runtime")
    assert "Not running" in after.stdout  # ask started it, and stopped it on the way out
    assert f"Log: {data / 'runtime' / 'runtime.log'}" in after.stdout
    assert "Serving tiny.gguf on 127.0.0.1:" in (data / "runtime" / "runtime.log").read_text()


def test_ask_names_a_model_that_is_not_there(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert threadline(data, "models", "import", str(make_tiny_gguf(tmp_path / "tiny.gguf"))).returncode == 0
    asked = threadline(data, "ask", "--provider", "threadline", "--model", "nope.gguf", "Hello", timeout=300)
    assert asked.returncode != 0
    assert "No model nope.gguf in " in asked.stderr, asked.stderr
