"""The command that starts llama.cpp's server: ``python -m llama_cpp.server`` from a Python
environment, the ``threadline`` program's hidden ``--run-local-runtime`` entry in a frozen
build (where ``sys.executable`` is that program), and in both the model on 127.0.0.1 and no
key on the command line (docs/local-models.md, "Packaging")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.support.tiny_gguf import make_tiny_gguf

from threadline.models import runtime
from threadline.models.library import InstalledModel, ModelLibrary
from threadline.models.runtime import RuntimeSettings, server_command

SETTINGS = RuntimeSettings(context=512, gpu_layers=3)


@pytest.fixture
def tiny(tmp_path: Path) -> InstalledModel:
    library = ModelLibrary(tmp_path / "models")
    library.folder.mkdir()
    make_tiny_gguf(library.folder / "tiny.gguf")
    return library.get("tiny.gguf")


@pytest.fixture(autouse=True)
def runtime_present(monkeypatch: pytest.MonkeyPatch) -> None:
    """Command building is what is tested here, whether or not the extra is in this environment."""
    monkeypatch.setattr(runtime, "llama_cpp_installed", lambda: True)


def _served_arguments(command: list[str], tiny: InstalledModel) -> None:
    at = command.index("--model")
    assert command[at:] == [
        "--model", str(tiny.path), "--host", "127.0.0.1", "--port", "4321", "--model_alias", "tiny.gguf",
        "--n_ctx", "512", "--n_gpu_layers", "3",
    ]  # fmt: skip


def test_from_a_python_environment_it_is_python_dash_m(tiny: InstalledModel) -> None:
    assert not getattr(sys, "frozen", False)
    made = server_command(SETTINGS, tiny, 4321)
    assert made is not None
    command, key_variable = made
    assert command[:3] == [sys.executable, "-m", "llama_cpp.server"]
    _served_arguments(command, tiny)
    assert key_variable == "API_KEY"


def test_from_a_frozen_build_it_is_the_programs_hidden_entry(
    tiny: InstalledModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", "/opt/threadline/threadline")
    made = server_command(SETTINGS, tiny, 4321)
    assert made is not None
    command, key_variable = made
    assert command[:3] == ["/opt/threadline/threadline", "--run-local-runtime", "--model"]
    assert "-m" not in command  # the frozen program is not a Python that takes -m
    _served_arguments(command, tiny)
    assert key_variable == "API_KEY"


def test_a_chosen_llama_server_wins_in_a_frozen_build_too(
    tiny: InstalledModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = tmp_path / "llama-server"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    made = server_command(RuntimeSettings(server_binary=str(binary)), tiny, 4321)
    assert made is not None
    assert made[0][:5] == [str(binary), "-m", str(tiny.path), "--host", "127.0.0.1"]
    assert made[1] == "LLAMA_API_KEY"
