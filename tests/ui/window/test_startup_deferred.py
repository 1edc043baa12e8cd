"""What the window leaves for after its first paint still happens, and the first frame does
not load what it does not show (the engine's modules, the Alt watch)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QLabel, QStyle

from threadline.ui.common.first_paint import FirstPaintWatcher
from threadline.ui.common.theme import MnemonicState, ThemeChoice, ThemeManager

ROOT = Path(__file__).resolve().parents[3]


def test_the_first_paint_watcher_fires_once_after_the_first_paint(qtbot: Any) -> None:
    label = QLabel("hello")
    qtbot.addWidget(label)
    calls: list[bool] = []
    watcher = FirstPaintWatcher(label, lambda: calls.append(watcher.seen))
    QApplication.processEvents()
    assert calls == []  # not shown, not painted
    label.show()
    qtbot.waitUntil(lambda: calls == [True], timeout=15000)
    label.repaint()
    label.update()
    QApplication.processEvents()
    assert calls == [True]


def _press_alt(widget: Any, kind: QEvent.Type) -> None:
    modifier = (
        Qt.KeyboardModifier.AltModifier if kind == QEvent.Type.KeyPress else Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(widget, QKeyEvent(kind, Qt.Key.Key_Alt, modifier))


def test_the_alt_watch_can_start_late_and_then_underlines_as_before(qtbot: Any, qapp: Any) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    ThemeManager(qapp, ThemeChoice.LIGHT).apply(watch_alt=False)
    state = MnemonicState.of(app)
    app.removeEventFilter(state)
    state.listening = False  # as the window starts: the watch not yet installed
    label = QLabel("&Allow")
    qtbot.addWidget(label)
    label.show()
    hint = QStyle.StyleHint.SH_UnderlineShortcut
    _press_alt(label, QEvent.Type.KeyPress)
    assert QApplication.style().styleHint(hint, None, label) == 0  # nobody listening yet
    _press_alt(label, QEvent.Type.KeyRelease)
    MnemonicState.of(app).listen()
    MnemonicState.of(app).listen()  # once only: a second filter would not change the answer, but costs
    _press_alt(label, QEvent.Type.KeyPress)
    assert QApplication.style().styleHint(hint, None, label) == 1
    _press_alt(label, QEvent.Type.KeyRelease)
    assert QApplication.style().styleHint(hint, None, label) == 0


CHECK_FIRST_FRAME = """
import sys
from pathlib import Path
from threadline.app import create_application
app, theme, loop = create_application(watch_alt=False)
from threadline.ui.common.theme import MnemonicState, ThemeChoice, ThemeManager
from threadline.ui.window.main_window import MainWindow
window = MainWindow(theme, Path(sys.argv[1]))
window.show()
app.processEvents()
heavy = sorted(m for m in sys.modules if m.startswith(("threadline.engine", "threadline.core.config",
    "threadline.store", "threadline.llm.", "sqlalchemy", "openai", "anthropic", "keyring", "mcp")))
print("loaded:", heavy)
print("alt watched:", MnemonicState.of(app, listen=False).listening)
"""


def test_the_first_frame_loads_no_engine_module(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": f"{ROOT}:{ROOT / 'desktop'}"}
    out = subprocess.run(
        [sys.executable, "-c", CHECK_FIRST_FRAME, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "loaded: []" in out
    assert "alt watched: False" in out


def test_the_startup_probe_and_the_bare_window_print_their_first_paint(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": f"{ROOT}:{ROOT / 'desktop'}"}
    for command in (
        [sys.executable, "-m", "threadline", "--data-dir", str(tmp_path), "--startup-probe"],
        [sys.executable, str(ROOT / "bench" / "bare_window.py")],
    ):
        out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=True)
        milliseconds = int(out.stdout.strip().splitlines()[-1])
        assert 0 < milliseconds < 120_000
