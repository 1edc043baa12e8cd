"""``threadline --self-test``: prove a build or an install works, without a display.

Starts Qt offscreen (so the Qt platform and image-format plugins must load), loads the
app icon from the bundled resources, checks that keyring found its backends, opens the
database through the real engine (so SQLAlchemy, the dialect and the Alembic migration
scripts must be there), builds the main
window, creates a session, opens it in a tab, deletes it and shuts down. It writes only to
``data_dir`` (or the database at ``database_url``).

Exit 0 and one ``… self-test OK`` line with the version and the data dir; otherwise exit 1
and one line on stderr that says which step failed — smoke tests grep these.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any


class SelfTestError(RuntimeError):
    """A check failed; the message says which."""


def _load_app_icon() -> Any:
    from PySide6.QtGui import QIcon

    from threadline.resources import app_icon_paths

    icon = QIcon()
    for path in app_icon_paths():
        if path.suffix == ".png":
            icon.addFile(str(path))
    if icon.isNull() or icon.pixmap(48, 48).isNull():
        raise SelfTestError("the app icon did not load (resources or Qt image plugins missing)")
    return icon


def _keychain() -> str:
    """The keyring backend in use; keyring finds its backends through entry points, so a build
    without keyring's metadata would silently have none (that is a packaging bug: fail)."""
    from importlib.metadata import entry_points

    if not list(entry_points(group="keyring.backends")):
        raise SelfTestError("keyring has no backends (its distribution metadata is missing)")
    import keyring

    backend = keyring.get_keyring()
    name = type(backend).__module__.removeprefix("keyring.backends.") + "." + type(backend).__name__
    return "none usable" if "fail" in name or "null" in name else name


def run_self_test(data_dir: Path, database_url: str | None) -> int:
    """Run the checks; print one line; return the process exit status."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    step = "starting"
    try:
        from threadline import __version__

        step = "finding resources"
        from threadline.resources import resource_path

        resource_path("icons", "threadline.svg")

        step = "starting Qt"
        from PySide6.QtCore import qVersion
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance() or QApplication(sys.argv[:1] or ["threadline"])
        assert isinstance(app, QApplication)
        app.setQuitOnLastWindowClosed(False)
        step = "loading the app icon"
        app.setWindowIcon(_load_app_icon())
        qt = f"Qt {qVersion()} ({app.platformName()})"

        step = "checking the keychain"
        keychain = _keychain()

        step = "starting the event loop"
        import qasync

        from threadline.engine.engine import Engine
        from threadline.ui.common.theme import ThemeManager
        from threadline.ui.window.main_window import MainWindow

        theme = ThemeManager(app)
        theme.apply()
        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)

        async def check() -> None:
            nonlocal step
            step = "opening the database"
            engine = await Engine.open(data_dir, database_url=database_url)
            step = "building the main window"
            window = MainWindow(theme, data_dir)
            try:
                window.show()
                await window.attach_engine(engine)
                step = "creating a session"
                info = await engine.new_session("self-test")
                step = "opening the session in a tab"
                tab = await window._open(info.id, focus=True)
                if tab is None or window.tabs.tab_for(info.id) is None:
                    raise SelfTestError("the session did not open in a tab")
                window.grab()
                window.tabs.close_tab(tab)
                step = "deleting the session"
                await engine.delete_session(info.id)
                remaining = [s.id for s in await engine.list_sessions(limit=10_000)]
                if info.id in remaining:
                    raise SelfTestError("the session was not deleted")
            finally:
                window.sidebar.detach()
                window.hide()
                window.deleteLater()
                await engine.aclose()

        try:
            with loop:
                loop.run_until_complete(check())
        finally:
            asyncio.set_event_loop(None)
    except Exception as err:  # one line, no traceback: the exit code and message are the result
        text = str(err).strip()
        detail = text.splitlines()[0] if text else ""
        reason = f"{type(err).__name__}: {detail}" if detail else type(err).__name__
        print(f"threadline self-test FAILED while {step}: {reason}", file=sys.stderr)
        return 1
    where = database_url.rsplit("@", 1)[-1] if database_url else str(data_dir)
    print(f"threadline {__version__} self-test OK: {qt}, keychain {keychain}, database in {where}")
    return 0
