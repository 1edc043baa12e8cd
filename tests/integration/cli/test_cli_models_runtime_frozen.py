"""``threadline models runtime`` in a packaged (frozen) build says what runs the models: the
runtime in the build, or that the build has none and a ``llama-server`` can be chosen — never
the ``pip install`` advice, which a package cannot follow (docs/local-models.md, "Packaging").
``packaging/test_deb.sh`` reads the first line from the real packages."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from threadline.__main__ import main
from threadline.engine import models as engine_models


def runs_line(data: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["models", "runtime", "--data-dir", str(data)]) == 0
    return capsys.readouterr().out.splitlines()[0]


def test_a_frozen_build_names_its_runtime_or_its_absence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    monkeypatch.setattr(engine_models, "llama_cpp_installed", lambda: False)
    assert runs_line(data, capsys) == "Runs: llama-cpp-python (threadline[local]) - not installed"
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert runs_line(data, capsys) == (
        "Runs: nothing - this build has no local runtime; choose a llama-server program with --server PATH"
    )
    monkeypatch.setattr(engine_models, "llama_cpp_installed", lambda: True)
    assert runs_line(data, capsys) == "Runs: llama-cpp-python (in this build)"
