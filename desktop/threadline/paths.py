"""Where Threadline keeps its files: the platform's user data dir unless told otherwise."""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "Threadline"


def default_data_dir() -> Path:
    """``$THREADLINE_DATA_DIR`` or the platform data dir (e.g. ~/.local/share/Threadline)."""
    override = os.environ.get("THREADLINE_DATA_DIR")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))
