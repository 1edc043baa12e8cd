"""What the window leaves for after its first paint still happens, and the first frame does
not load what it does not show (the engine's modules, the Alt watch, the sidebar and the
tabs: the app paints a skeleton first and builds them on the next loop turn)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel, QStyle
from tests.support.fresh_python import run_fresh
from tests.support.waiting import WAIT_MS

from threadline.ui.common.first_paint import FirstPaintWatcher
from threadline.ui.common.theme import LIGHT, MnemonicState, ThemeChoice, ThemedStyle, ThemeManager
from threadline.ui.window.main_window import MainWindow


def test_the_first_paint_watcher_fires_once_after_the_first_paint(qtbot: Any) -> None:
    label = QLabel("hello")
    qtbot.addWidget(label)
    calls: list[bool] = []
    watcher = FirstPaintWatcher(label, lambda: calls.append(watcher.seen))
    QApplication.processEvents()
    assert calls == []  # not shown, not painted
    label.show()
    qtbot.waitUntil(lambda: calls == [True], timeout=WAIT_MS)
    label.repaint()
    label.update()
    QApplication.processEvents()
    assert calls == [True]


def _press_alt(widget: Any, kind: QEvent.Type) -> None:
    """Alt pressed or released as a keyboard sends it: to the focused window."""
    if kind == QEvent.Type.KeyPress:
        QTest.keyPress(widget.windowHandle(), Qt.Key.Key_Alt, Qt.KeyboardModifier.AltModifier)
    else:
        QTest.keyRelease(widget.windowHandle(), Qt.Key.Key_Alt, Qt.KeyboardModifier.NoModifier)


def test_the_alt_watch_can_start_late_and_then_underlines_as_before(qtbot: Any, qapp: Any) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    state = MnemonicState(app, listen=False)  # as the window starts: the watch not yet started
    style = ThemedStyle(LIGHT, state)
    try:
        label = QLabel("&Allow")
        qtbot.addWidget(label)
        label.show()
        label.activateWindow()
        qtbot.waitActive(label)  # the window has the focus before the watch starts, as in the app
        hint = QStyle.StyleHint.SH_UnderlineShortcut
        _press_alt(label, QEvent.Type.KeyPress)
        assert style.styleHint(hint, None, label) == 0  # nobody listening yet
        _press_alt(label, QEvent.Type.KeyRelease)
        state.listen()
        state.listen()  # once only: a second filter would not change the answer, but costs
        _press_alt(label, QEvent.Type.KeyPress)
        assert style.styleHint(hint, None, label) == 1
        _press_alt(label, QEvent.Type.KeyRelease)
        assert style.styleHint(hint, None, label) == 0
    finally:
        state.setParent(None)  # the application's own watch stays the one ``MnemonicState.of`` finds
        state.deleteLater()


CHECK_FIRST_FRAME = """
import sys
from pathlib import Path
from threadline.app.start import create_application
app, theme, loop = create_application(watch_alt=False)
from threadline.ui.common.theme import MnemonicState, ThemeChoice, ThemeManager
from threadline.ui.window.main_window import MainWindow
window = MainWindow(theme, Path(sys.argv[1]), skeleton=True)
window.show()
app.processEvents()
heavy = sorted(m for m in sys.modules if m.startswith(("threadline.engine", "threadline.core.config",
    "threadline.store", "threadline.llm.", "sqlalchemy", "openai", "anthropic", "keyring", "mcp",
    "threadline.ui.sessions", "threadline.ui.window.tab_container", "threadline.core.messages",
    "threadline.core.session")))
print("loaded:", heavy)
print("alt watched:", MnemonicState.of(app, listen=False).listening)
print("built:", window.sidebar_built, window.tabs_built)
window.finish_building()
print("then built:", window.sidebar_built, window.tabs_built)
"""


def test_the_first_frame_loads_no_engine_module(tmp_path: Path) -> None:
    out = run_fresh(CHECK_FIRST_FRAME, str(tmp_path))
    assert "loaded: []" in out
    assert "alt watched: False" in out
    assert "built: False False" in out
    assert "then built: True True" in out


CHECK_APP_START = """
import asyncio
import sys
from pathlib import Path
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
import threadline.app.start as app_module

async def opener(data_dir, database_url):
    # Where the app opens the engine: what the window holds by then, and a shortcut used at once.
    window = next(w for w in QApplication.topLevelWidgets() if type(w).__name__ == "MainWindow")
    print("built before the engine:", window.sidebar_built, window.tabs_built)
    print("problem dialog loaded:", "threadline.ui.window.startup_dialog" in sys.modules)  # on failure only
    log = data_dir / "logs" / "threadline.log"
    print("log file before the sidebar's paint:", log.exists())
    while not window.sidebar.isVisible():
        await asyncio.sleep(0.01)
    print("sidebar shown in its slot:", window.sidebar.parent() is window.sidebar_slot)
    while not log.exists():  # opened once the whole window has painted
        await asyncio.sleep(0.01)
    print("log file then written:", "log started" in log.read_text())
    window.activateWindow()
    QTest.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    print("Ctrl+K focuses the search:", window.focusWidget() is window.sidebar.filter)
    window.close()
    await asyncio.Event().wait()

app_module.open_chosen_engine = opener
sys.exit(app_module.run_gui(Path(sys.argv[1]), None))
"""


def test_the_app_builds_the_rest_of_the_window_before_it_opens_the_engine(tmp_path: Path) -> None:
    out = run_fresh(CHECK_APP_START, str(tmp_path))
    assert "built before the engine: True True" in out
    assert "problem dialog loaded: False" in out
    assert "log file before the sidebar's paint: False" in out  # nothing on screen waits for it
    assert "sidebar shown in its slot: True" in out
    assert "log file then written: True" in out
    assert "Ctrl+K focuses the search: True" in out


def _skeleton_window(qtbot: Any, qapp: Any, data_dir: Path) -> MainWindow:
    theme = ThemeManager(qapp, ThemeChoice.LIGHT)
    theme.apply()
    window = MainWindow(theme, data_dir, skeleton=True)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def test_the_rest_of_a_skeleton_window_fills_in_without_moving_its_layout(
    qtbot: Any, qapp: Any, tmp_path: Path
) -> None:
    window = _skeleton_window(qtbot, qapp, tmp_path)
    assert not window.sidebar_built and not window.tabs_built
    layout = [w.geometry() for w in (window.menuBar(), window.sidebar_slot, window.right, window.statusBar())]
    window.finish_building()
    qtbot.waitUntil(lambda: window.sidebar.isVisible(), timeout=WAIT_MS)
    assert [
        w.geometry() for w in (window.menuBar(), window.sidebar_slot, window.right, window.statusBar())
    ] == layout
    assert window.sidebar.geometry() == window.sidebar_slot.rect()  # the sidebar fills its slot
    assert window.right.currentWidget() is window.empty  # the tabs wait behind the start page
    assert window.right.indexOf(window.tabs) >= 0


def test_the_skeleton_shows_the_menu_titles_and_the_shortcuts_work_once_the_rest_is_built(
    qtbot: Any, qapp: Any, tmp_path: Path
) -> None:
    window = _skeleton_window(qtbot, qapp, tmp_path)
    menus = [a.menu() for a in window.menuBar().actions()]
    assert [a.text() for a in window.menuBar().actions()] == ["&File", "&Edit", "&View", "&Help"]
    assert all(m is not None and not m.actions() for m in menus)  # the items come with the rest
    window.finish_building()
    assert "&New Chat" in [a.text() for a in menus[0].actions()]
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)  # window shortcuts need the active window
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.focusWidget() is window.sidebar.filter, timeout=WAIT_MS)
