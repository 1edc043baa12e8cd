"""A packaged (frozen) build without the runtime: the Models page says what the command line
says (``threadline models runtime``), never the pip advice a package user cannot follow
(docs/local-models.md, "Packaging"). Simulated as tests/integration/cli/
test_cli_models_runtime_frozen.py does: ``sys.frozen`` set and llama-cpp-python reported missing."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from tests.support.fake_hub import FakeHub, point_at
from tests.ui.models.test_models_page import open_page

from threadline.engine import models as engine_models
from threadline.models.runtime import NO_RUNTIME_IN_BUILD


def test_a_packaged_build_without_the_runtime_says_what_the_command_line_says(
    harness: Any, hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_models, "llama_cpp_installed", lambda: False)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    point_at(harness.data_dir, hub)
    harness.open()
    note = open_page(harness).runtime_note.text()
    assert f"{NO_RUNTIME_IN_BUILD} below" in note, note
    assert "this build has no local runtime; choose a llama-server program below" in note
    assert "pip" not in note and "threadline[local]" not in note, note


def test_an_installation_without_the_runtime_still_says_how_to_add_it(
    harness: Any, hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_models, "llama_cpp_installed", lambda: False)
    monkeypatch.delattr(sys, "frozen", raising=False)
    point_at(harness.data_dir, hub)
    harness.open()
    note = open_page(harness).runtime_note.text()
    assert "pip install 'threadline[local]'" in note, note
