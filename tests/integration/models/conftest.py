"""Fixtures for the local-model tests: a fake Hub on 127.0.0.1 holding a tiny GGUF model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.fake_hub import FakeHub, running_hub
from tests.support.tiny_gguf import make_tiny_gguf

REPO = "tiny/Tiny-Llama-GGUF"
FILE = "tiny-llama.Q8_0.gguf"


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return make_tiny_gguf(tmp_path_factory.mktemp("gguf") / FILE).read_bytes()


@pytest.fixture
def hub(tiny_model: bytes) -> Iterator[FakeHub]:
    with running_hub() as fake:
        fake.add(REPO, FILE, tiny_model, downloads=100)
        fake.add(REPO, "tiny-llama.F16.gguf", tiny_model[:-7] + b"1234567", downloads=100)
        fake.add("someone/Broken-GGUF", "other.gguf", b"x", downloads=5)
        yield fake


def point_at(data_dir: Path, hub: FakeHub, folder: Path | None = None) -> None:
    """The data folder's models settings: this fake Hub (and a models folder, when given)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    config: dict[str, str] = {"hub_endpoint": hub.url}
    if folder is not None:
        config["folder"] = str(folder)
    (data_dir / "local-models.json").write_text(json.dumps(config))
