"""Start the window: QApplication + qasync loop, first paint, then the engine.

Order matters for the first-frame budget (DESIGN.md §5, §9): Qt and the window
skeleton come first; the engine (SQLAlchemy, Alembic, provider SDKs) is imported
and opened only after the window has painted. Shutdown saves the layout, cancels
running turns (the engine keeps their partial replies) and closes the store.

A crash handler (``sys.excepthook``) writes unexpected errors to ``crash.log`` in
the data folder and shows one calm dialog; expected errors never reach it (they
are shown in the tab or the status bar, see ``ui.tasks``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any

log = logging.getLogger("threadline.app")

_IMPORT_TIME = time.time()


def process_start_time() -> float:
    """Wall-clock time the process started (Linux: from /proc; elsewhere: this module's import)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        start_ticks = int(fields[19])
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        ticks = os.sysconf("SC_CLK_TCK")
        return time.time() - uptime + start_ticks / ticks
    except (OSError, ValueError, IndexError):
        return _IMPORT_TIME


def main(argv_namespace: Any) -> int:
    """Entry from an argparse namespace with ``data_dir``, ``database_url``, ``startup_probe``."""
    from threadline.paths import default_data_dir

    data_dir = getattr(argv_namespace, "data_dir", None) or default_data_dir()
    return run_gui(
        Path(data_dir),
        getattr(argv_namespace, "database_url", None),
        startup_probe=bool(getattr(argv_namespace, "startup_probe", False)),
    )


def _setup_logging(data_dir: Path) -> None:
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(data_dir / "threadline.log", encoding="utf-8")
    except OSError:
        handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("threadline")
    root.addHandler(handler)
    root.setLevel(logging.INFO)


class CrashHandler:
    """Logs unexpected exceptions to the data folder and tells the user once, calmly."""

    def __init__(self, data_dir: Path) -> None:
        self.log_path = data_dir / "crash.log"
        self._showing = False
        self._previous = sys.excepthook
        self.count = 0

    def install(self) -> None:
        sys.excepthook = self

    def uninstall(self) -> None:
        if sys.excepthook is self:
            sys.excepthook = self._previous

    def __call__(self, kind: type[BaseException], err: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            self._previous(kind, err, tb)
            return
        self.count += 1
        text = "".join(traceback.format_exception(kind, err, tb))
        log.error("unexpected error:\n%s", text)
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with self.log_path.open("a", encoding="utf-8") as f:
                f.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')}\n{text}\n")
        except OSError:
            sys.stderr.write(text)
        self._show()

    def _show(self) -> None:
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices
        from PySide6.QtWidgets import QApplication, QMessageBox

        offscreen = os.environ.get("QT_QPA_PLATFORM") == "offscreen"
        if self._showing or QApplication.instance() is None or offscreen:
            return
        self._showing = True
        try:
            box = QMessageBox(
                QMessageBox.Icon.Warning,
                "Something went wrong",
                "Threadline ran into an unexpected problem. Your conversations are saved, "
                "and you can keep working.\n\nThe details were written to a log file.",
            )
            open_button = box.addButton("Show Log", QMessageBox.ButtonRole.ActionRole)
            box.addButton("Continue", QMessageBox.ButtonRole.AcceptRole)
            box.exec()
            if box.clickedButton() is open_button:
                QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.log_path.parent)))
        finally:
            self._showing = False


def create_application() -> tuple[Any, Any, Any]:
    """QApplication, applied theme and qasync loop, as the window starts (the benchmarks use it too).

    Returns ``(QApplication, ThemeManager, qasync.QEventLoop)``; typed loosely so this
    module stays importable without Qt.
    """
    from PySide6.QtWidgets import QApplication

    import threadline.ui  # noqa: F401  (first: tames PySide6's import hook, see ui.qt_runtime)

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Threadline")
    app.setOrganizationName("Threadline")
    app.setDesktopFileName("threadline")
    app.setQuitOnLastWindowClosed(False)

    from threadline.ui.common.theme import ThemeManager

    theme = ThemeManager(app)
    theme.apply()

    import qasync

    loop = qasync.QEventLoop(app)
    # Plain Python threads for asyncio.to_thread (file tools, previews): qasync's default
    # QThread executor aborts the process at exit if a QThread is still alive.
    loop.set_default_executor(ThreadPoolExecutor(max_workers=4, thread_name_prefix="threadline-io"))
    asyncio.set_event_loop(loop)
    return app, theme, loop


def run_gui(data_dir: Path, database_url: str | None, startup_probe: bool = False) -> int:
    started = process_start_time()
    _app, theme, loop = create_application()
    from PySide6.QtCore import QEvent, QObject, QTimer

    from threadline.ui.window.main_window import MainWindow

    window = MainWindow(theme, data_dir)
    done: asyncio.Future[int] = loop.create_future()
    engine_box: list[Any] = []

    class FirstPaint(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.seen = False

        def eventFilter(self, obj: QObject, event: QEvent) -> bool:
            if not self.seen and event.type() == QEvent.Type.Paint:
                self.seen = True
                QTimer.singleShot(0, after_first_paint)
            return False

    first_paint = FirstPaint()
    window.installEventFilter(first_paint)

    def after_first_paint() -> None:
        window.removeEventFilter(first_paint)
        if startup_probe:
            print(f"{(time.time() - started) * 1000:.0f}")
            sys.stdout.flush()
            if not done.done():
                done.set_result(0)
            return
        loop.create_task(start_engine())

    async def start_engine() -> None:
        _setup_logging(data_dir)
        crash = CrashHandler(data_dir)
        crash.install()
        try:
            from threadline.engine.engine import Engine

            engine = await Engine.open(data_dir, database_url=database_url)
        except Exception as err:
            log.exception("could not open the data folder")
            from PySide6.QtWidgets import QMessageBox

            QMessageBox.critical(
                window,
                "Threadline cannot start",
                f"The conversations in {database_url or data_dir} could not be opened:\n\n{err}",
            )
            if not done.done():
                done.set_result(1)
            return
        engine_box.append(engine)
        await window.attach_engine(engine)

    async def shutdown() -> None:
        for engine in engine_box:
            try:
                await engine.aclose()
            except Exception:
                log.exception("engine close failed")
        if not done.done():
            done.set_result(0)

    window.closed.connect(lambda: loop.create_task(shutdown()))
    window.show()
    with loop:
        code: int = loop.run_until_complete(done)
    window.deleteLater()
    return code
