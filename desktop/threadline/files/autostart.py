"""Start at login on Linux: an XDG autostart entry, ``~/.config/autostart/threadline.desktop``.

The file is the setting: Settings → Desktop writes it when "Start at login" is switched on and
removes it when switched off, and reads the switch from whether it is there. Windows and
macOS get theirs from the installers (docs/desktop.md, "Start at login").
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

FILE_NAME = "threadline.desktop"


def autostart_file() -> Path:
    """Where the XDG Autostart spec looks: ``$XDG_CONFIG_HOME/autostart`` (default ``~/.config``)."""
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "autostart" / FILE_NAME


def is_enabled() -> bool:
    return autostart_file().is_file()


def start_command(data_dir: Path | None = None) -> list[str]:
    """How this Threadline is started: the ``threadline`` on ``PATH`` (an install), else this Python."""
    found = shutil.which("threadline")
    command = [found] if found else [sys.executable, "-m", "threadline"]
    if data_dir is not None:
        command += ["--data-dir", str(data_dir)]
    return command


def entry_text(command: list[str]) -> str:
    exec_line = " ".join(_quote(word) for word in command)
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Name=Threadline\n"
        "Comment=Start Threadline when you log in\n"
        f"Exec={exec_line}\n"
        "Icon=threadline\n"
        "Terminal=false\n"
        "X-GNOME-Autostart-enabled=true\n"
    )


def enable(command: list[str]) -> Path:
    path = autostart_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(entry_text(command), encoding="utf-8")
    return path


def disable() -> None:
    autostart_file().unlink(missing_ok=True)


def _quote(word: str) -> str:
    """A word of a desktop entry's ``Exec`` key (its spec's quoting, ``%`` doubled)."""
    word = word.replace("%", "%%")
    if word and not any(ch in word for ch in " \t\n\"'\\><~|&;$*?#()`="):
        return word
    escaped = "".join("\\" + ch if ch in '"`$\\' else ch for ch in word)
    return f'"{escaped}"'
