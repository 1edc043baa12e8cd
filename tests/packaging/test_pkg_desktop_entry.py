"""The .desktop file and the AppStream metainfo are valid and agree with each other."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from threadline.app import resources

REPO = Path(__file__).resolve().parents[2]
DESKTOP = REPO / "resources" / resources.DESKTOP_FILE
METAINFO_IN = REPO / "resources" / f"{resources.APP_ID}.metainfo.xml.in"


def _entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(DESKTOP, encoding="utf-8")
    return parser["Desktop Entry"]


def test_desktop_entry_runs_threadline_with_its_icon() -> None:
    entry = _entry()
    assert entry["Type"] == "Application"
    assert entry["Exec"].split()[0] == "threadline"
    assert entry["Icon"] == resources.ICON_NAME
    assert entry["Terminal"] == "false"
    assert entry["Categories"].endswith(";")


def _metainfo(tmp_path: Path) -> Path:
    text = METAINFO_IN.read_text(encoding="utf-8")
    text = text.replace("@VERSION@", "0.1.0").replace("@DATE@", "2026-01-01")
    out = tmp_path / f"{resources.APP_ID}.metainfo.xml"
    out.write_text(text, encoding="utf-8")
    return out


def test_metainfo_names_the_desktop_entry(tmp_path: Path) -> None:
    root = ET.parse(_metainfo(tmp_path)).getroot()
    assert root.get("type") == "desktop-application"
    assert root.findtext("id") == resources.APP_ID
    assert root.findtext("launchable[@type='desktop-id']") == resources.DESKTOP_FILE
    assert root.findtext("icon[@type='stock']") == resources.ICON_NAME
    assert root.find("releases/release").get("version") == "0.1.0"  # type: ignore[union-attr]


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="desktop-file-utils not installed")
def test_desktop_file_validate() -> None:
    result = subprocess.run(
        ["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(shutil.which("appstreamcli") is None, reason="appstream not installed")
def test_appstreamcli_validate(tmp_path: Path) -> None:
    result = subprocess.run(
        ["appstreamcli", "validate", "--no-net", str(_metainfo(tmp_path))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_build_script_agrees_on_names() -> None:
    """packaging/build.py is a script (not a package); its constants must match the app's."""
    source = (REPO / "packaging" / "build.py").read_text(encoding="utf-8")
    assert f'APP_ID = "{resources.APP_ID}"' in source
    assert f'DESKTOP_FILE = "{resources.DESKTOP_FILE}"' in source
    assert f"ICON_SIZES = {resources.ICON_SIZES}" in source
