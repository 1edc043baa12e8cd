"""``threadline --self-test``: prove an installed build works, without a display.

Starts Qt offscreen, opens the database through the real engine, builds the main
window, creates a session, opens it in a tab, deletes it and shuts down. Exit 0
means the packaged app can import everything it needs, paint, and use its store.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path


def run_self_test(data_dir: Path, database_url: str | None) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    import qasync

    from threadline.engine.engine import Engine
    from threadline.ui.main_window import MainWindow
    from threadline.ui.theme import ThemeManager

    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    theme = ThemeManager(app)
    theme.apply()
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    use_dir = data_dir
    scratch = None
    if database_url is None and not data_dir.exists():
        scratch = tempfile.TemporaryDirectory(prefix="threadline-self-test-")
        use_dir = Path(scratch.name)

    async def check() -> int:
        engine = await Engine.open(use_dir, database_url=database_url)
        window = MainWindow(theme, use_dir)
        try:
            window.show()
            await window.attach_engine(engine)
            info = await engine.new_session("self-test")
            tab = await window._open(info.id, focus=True)
            if tab is None or window.tabs.tab_for(info.id) is None:
                print("self-test: the session did not open in a tab", file=sys.stderr)
                return 1
            window.grab()
            window.tabs.close_tab(tab)
            await engine.delete_session(info.id)
            remaining = [s.id for s in await engine.list_sessions(limit=10_000)]
            if info.id in remaining:
                print("self-test: the session was not deleted", file=sys.stderr)
                return 1
            print("self-test: ok")
            return 0
        finally:
            window.sidebar.detach()
            window.hide()
            window.deleteLater()
            await engine.aclose()

    try:
        with loop:
            return int(loop.run_until_complete(check()))
    except Exception as err:  # noqa: BLE001 - the exit code and message are the result
        print(f"self-test failed: {err}", file=sys.stderr)
        return 1
    finally:
        if scratch is not None:
            scratch.cleanup()
