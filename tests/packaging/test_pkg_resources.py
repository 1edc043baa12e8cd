"""threadline.app.resources finds the bundled files from a checkout, an override, a frozen build."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

from threadline.app import resources

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _fresh_cache() -> object:
    resources.resources_dir.cache_clear()
    yield
    resources.resources_dir.cache_clear()


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", header[16:24])


def test_checkout_resources_are_found() -> None:
    assert resources.resources_dir() == REPO / "resources"
    assert resources.resource_path("icons", "threadline.svg").is_file()
    assert resources.resource_path(resources.DESKTOP_FILE).is_file()


def test_every_icon_size_is_rendered_at_its_size() -> None:
    pngs = [p for p in resources.app_icon_paths() if p.suffix == ".png"]
    assert len(pngs) == len(resources.ICON_SIZES)
    for size, path in zip(resources.ICON_SIZES, pngs, strict=True):
        assert _png_size(path) == (size, size)
    assert resources.app_icon_paths()[-1].suffix == ".svg"


def test_app_icon_path_picks_the_next_size_up() -> None:
    assert resources.app_icon_path(48).parent.parent.name == "48x48"
    assert resources.app_icon_path(50).parent.parent.name == "64x64"
    assert resources.app_icon_path(4096).parent.parent.name == "512x512"


def _fake_resources(root: Path) -> Path:
    (root / "icons").mkdir(parents=True)
    (root / "icons" / "threadline.svg").write_text("<svg/>")
    return root


def test_override_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _fake_resources(tmp_path / "elsewhere")
    monkeypatch.setenv("THREADLINE_RESOURCES", str(fake))
    assert resources.resources_dir() == fake


def test_frozen_build_uses_meipass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = tmp_path / "_internal"
    fake = _fake_resources(bundle / "resources")
    monkeypatch.delenv("THREADLINE_RESOURCES", raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(bundle), raising=False)
    assert resources.resources_dir() == fake


def test_missing_resources_say_where_they_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resources, "_candidates", lambda: [tmp_path / "nowhere"])
    with pytest.raises(resources.ResourceNotFoundError, match="nowhere"):
        resources.resources_dir()


def test_missing_single_resource_raises() -> None:
    with pytest.raises(resources.ResourceNotFoundError):
        resources.resource_path("no-such-file.png")


def test_resources_module_does_not_import_qt() -> None:
    source = Path(resources.__file__).read_text(encoding="utf-8")
    assert "import PySide6" not in source and "from PySide6" not in source
