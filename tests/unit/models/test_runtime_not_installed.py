"""What a first message to a local model says when nothing can run it: pip advice from a source
install, the packaged build's own words from a package (pip cannot add to a package)."""

from __future__ import annotations

import sys

import pytest

from threadline.models.runtime import NO_RUNTIME_IN_BUILD, not_installed


def test_a_source_install_is_told_how_to_add_the_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(sys, "frozen", raising=False)
    assert "pip install 'threadline[local]'" in not_installed()


def test_a_package_is_told_to_choose_a_llama_server_program(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    message = not_installed()
    assert NO_RUNTIME_IN_BUILD in message and "Models page" in message
    assert "pip" not in message and "threadline[local]" not in message
