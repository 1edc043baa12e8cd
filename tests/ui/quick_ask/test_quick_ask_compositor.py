"""Quick ask without a compositor: an opaque card, no black band where the shadow would be.

On X11 with no compositing manager a translucent window's see-through pixels show black.
The window runs in a child process on a private Xvfb (which has no compositor) over a white
root window; the screen is grabbed and the pixels in and around the window must not be
black. With a compositor announced (the ``_NET_WM_CM_S0`` selection owned, as EWMH says),
the window keeps its shadow. Skipped where Xvfb is missing (.ci/setup --dev installs it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from tests.support.waiting import WAIT
from tests.support.xvfb import have, x11_env, xvfb_display

pytestmark = [
    pytest.mark.skipif(not have("Xvfb"), reason="needs Xvfb (.ci/setup --dev)"),
    pytest.mark.skipif(sys.platform != "linux", reason="X11"),
]
ROOT = Path(__file__).resolve().parents[3]
CHILD = Path(__file__).with_name("compositor_child.py")


def run_child(display: str, out: Path, *args: str) -> dict[str, list[str]]:
    env = x11_env(display, PYTHONPATH=f"{ROOT}:{ROOT / 'desktop'}")
    done = subprocess.run(
        [sys.executable, str(CHILD), str(out), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3 * WAIT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {line.split()[0]: line.split()[1:] for line in done.stdout.splitlines() if line.strip()}


def black(image: QImage, x: int, y: int) -> bool:
    colour = image.pixelColor(x, y)
    return colour.red() < 16 and colour.green() < 16 and colour.blue() < 16


def test_without_a_compositor_the_window_is_opaque_and_nothing_around_it_is_black(tmp_path: Path) -> None:
    shot = tmp_path / "quick-ask-no-compositor.png"
    with xvfb_display("1280x800x24", "-wr") as display:
        said = run_child(display, shot)
    x, y, w, h = (int(v) for v in said["WINDOW"])
    image = QImage(str(shot))
    assert not image.isNull()
    # The window's edge (where a shadow margin would be) and the screen just around it.
    ring = [
        *((px, py) for px in range(x - 4, x + w + 4, 7) for py in (y - 4, y + 1, y + h - 2, y + h + 3)),
        *((px, py) for py in range(y - 4, y + h + 4, 7) for px in (x - 4, x + 1, x + w - 2, x + w + 3)),
    ]
    dark = [(px, py) for px, py in ring if black(image, px, py)]
    assert not dark, f"black pixels around Quick ask at {dark[:8]} (see {shot})"
    assert said["COMPOSITING"] == ["False"]
    cx, cy, cw, ch = (int(v) for v in said["CARD"])
    assert (cx, cy, cw, ch) == (x, y, w, h)  # no see-through margin: the card is the window


def test_with_a_compositor_the_window_keeps_its_shadow(tmp_path: Path) -> None:
    shot = tmp_path / "quick-ask-compositor.png"
    with xvfb_display("1280x800x24", "-wr") as display:
        said = run_child(display, shot, "--own-cm")
    assert said["COMPOSITING"] == ["True"]
    x, _y, w, _h = (int(v) for v in said["WINDOW"])
    cx, _cy, cw, _ch = (int(v) for v in said["CARD"])
    assert cx > x and cw < w  # the shadow's margin is there
