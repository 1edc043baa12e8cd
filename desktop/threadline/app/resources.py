"""Find Threadline's bundled files (icons, styles, .desktop/metainfo templates).

The one place that knows where ``resources/`` lives, whichever way the app was started:

1. ``$THREADLINE_RESOURCES`` — an explicit override (tests, unusual installs);
2. a PyInstaller build — ``sys._MEIPASS/resources`` (one-folder, and the macOS .app, where
   PyInstaller links data files from ``Contents/Resources`` into ``Contents/Frameworks``);
3. a checkout or an editable install — ``<repo>/resources`` next to ``desktop/``;
4. an installed wheel — ``<prefix>/share/threadline/resources`` (pyproject ``data-files``).

No Qt here (only ``ui/`` imports PySide6): callers turn the paths into ``QIcon`` etc.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from functools import cache
from pathlib import Path

APP_ID = "io.github.threadline.Threadline"
"""Reverse-DNS AppStream id (``/usr/share/metainfo/<APP_ID>.metainfo.xml``)."""

DESKTOP_FILE = "threadline.desktop"
"""The menu entry; its base name matches ``QGuiApplication.setDesktopFileName("threadline")``
in ``app/start.py``, which is the Wayland app id that ties the window to this entry and its icon."""

ICON_NAME = "threadline"
"""Name of the icon in the freedesktop icon theme (``Icon=`` in the .desktop file)."""

ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
"""Sizes rendered from ``icons/threadline.svg`` into ``icons/hicolor/<N>x<N>/apps/threadline.png``."""

_MARKER = Path("icons") / "threadline.svg"


class ResourceNotFoundError(FileNotFoundError):
    """A bundled file is missing: the build or the install is incomplete."""


def _candidates() -> list[Path]:
    found: list[Path] = []
    override = os.environ.get("THREADLINE_RESOURCES")
    if override:
        found.append(Path(override).expanduser())
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        found.append(Path(frozen_root) / "resources")
        # macOS .app: data files live in Contents/Resources.
        found.append(Path(sys.executable).resolve().parent.parent / "Resources" / "resources")
    # desktop/threadline/app/resources.py -> <repo>/resources
    found.append(Path(__file__).resolve().parents[3] / "resources")
    for prefix in dict.fromkeys((sys.prefix, sysconfig.get_path("data"), sys.base_prefix)):
        if prefix:
            found.append(Path(prefix) / "share" / "threadline" / "resources")
    user_data = sysconfig.get_path("data", f"{os.name}_user") if os.name != "nt" else None
    if user_data:
        found.append(Path(user_data) / "share" / "threadline" / "resources")
    return found


@cache
def resources_dir() -> Path:
    """The directory holding ``icons/``, the .desktop file and the metainfo template."""
    tried = _candidates()
    for directory in tried:
        if (directory / _MARKER).is_file():
            return directory
    raise ResourceNotFoundError(
        "Threadline's resources are missing (looked in " + ", ".join(str(d) for d in tried) + ")"
    )


def resource_path(*parts: str) -> Path:
    """``resources/<parts…>``; raises :class:`ResourceNotFoundError` when it does not exist."""
    path = resources_dir().joinpath(*parts)
    if not path.exists():
        raise ResourceNotFoundError(f"missing resource: {path}")
    return path


def app_icon_paths() -> list[Path]:
    """The app icon's PNGs, smallest first (feed each to ``QIcon.addFile``), then the SVG."""
    base = resources_dir() / "icons"
    pngs = [base / "hicolor" / f"{n}x{n}" / "apps" / f"{ICON_NAME}.png" for n in ICON_SIZES]
    return [p for p in pngs if p.is_file()] + [base / "threadline.svg"]


def app_icon_path(size: int = 256) -> Path:
    """The PNG of the app icon closest to ``size`` (at least that big when there is one)."""
    pngs = [p for p in app_icon_paths() if p.suffix == ".png"]
    if not pngs:
        return resource_path("icons", "threadline.svg")
    for path in pngs:
        if int(path.parent.parent.name.split("x")[0]) >= size:
            return path
    return pngs[-1]
