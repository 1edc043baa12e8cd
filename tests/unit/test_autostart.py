"""Start at login on Linux: the XDG autostart entry is written and removed (``files/autostart``)."""

from __future__ import annotations

import configparser
import shlex
from pathlib import Path

import pytest

from threadline.files import autostart


def test_the_entry_is_written_where_the_spec_looks_and_removed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert not autostart.is_enabled()
    path = autostart.enable(["/opt/thread line/threadline", "--data-dir", "/home/me/100% data"])
    assert path == tmp_path / "config" / "autostart" / "threadline.desktop"
    assert autostart.is_enabled()
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path, encoding="utf-8")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application" and entry["Name"] == "Threadline"
    assert shlex.split(entry["Exec"].replace("%%", "%")) == [
        "/opt/thread line/threadline", "--data-dir", "/home/me/100% data",
    ]  # fmt: skip
    autostart.disable()
    assert not autostart.is_enabled()
    autostart.disable()  # nothing there: nothing to do


def test_the_command_names_a_data_folder_only_when_given(tmp_path: Path) -> None:
    assert "--data-dir" not in autostart.start_command()
    assert autostart.start_command(tmp_path)[-2:] == ["--data-dir", str(tmp_path)]
