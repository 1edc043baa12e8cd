"""Start the window: log, QApplication + qasync loop, crash handler, first paint, then the engine.

Order matters:

1. Log records are held in memory from the first line (``logging_setup.hold_records``), so
   nothing that follows is lost; the log file itself is opened once the whole window has
   painted (or the engine is open, if that comes first) and the held records are written
   to it first.
2. Then Qt and the qasync loop; Qt's own messages and the loop's unhandled errors are
   routed to the log, and the crash handler becomes ``sys.excepthook`` — all before the
   window paints, so an error in the first frame is caught like any other.
3. The window's skeleton paints (menus, start page, the sidebar's place in its colour);
   on the next loop turn the sidebar and the tab container are built into it
   (``MainWindow.finish_building``), and only then is the engine (SQLAlchemy, Alembic,
   provider SDKs) imported and opened, because the first-frame budget allows nothing heavier.
   If the conversations cannot be opened, ``StartupRecovery`` asks the user what to do
   (the store's advice, the data folder, a backup) and tries again.
4. Shut-down saves the layout, cancels running turns (the engine keeps their partial
   replies), waits for the UI's own tasks to end and closes the store.

One ``MessageBridge`` is created here and passed to the window, which hands it to its
tabs and dialogs: everything a user must be told goes through it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import qasync
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from threadline.app.instance_lock import InstanceLock
    from threadline.app.single_instance import InstanceServer
    from threadline.engine.engine import Engine
    from threadline.ui.common.crash_handler import CrashHandler
    from threadline.ui.common.message_bridge import MessageBridge
    from threadline.ui.common.theme import ThemeManager
    from threadline.ui.window.main_window import MainWindow

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


def create_application(*, watch_alt: bool = True) -> tuple[QApplication, ThemeManager, qasync.QEventLoop]:
    """QApplication, applied theme and qasync loop, as the window starts (the benchmarks use it too).

    ``watch_alt=False``: the Alt-key watch for mnemonic underlines is left for after the first
    paint (``ThemeManager.apply``); ``run_gui`` starts it then.
    """
    from PySide6.QtWidgets import QApplication

    import threadline.ui  # noqa: F401  (first: tames PySide6's import hook, see ui.common.qt_runtime)

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("Threadline")
    app.setOrganizationName("Threadline")
    app.setDesktopFileName("threadline")
    app.setQuitOnLastWindowClosed(False)

    from threadline.ui.common.theme import ThemeManager

    theme = ThemeManager(app)
    theme.apply(watch_alt=watch_alt)

    import qasync

    loop = qasync.QEventLoop(app)
    # Plain Python threads for asyncio.to_thread (file tools, previews): qasync's default
    # QThread executor aborts the process at exit if a QThread is still alive.
    loop.set_default_executor(ThreadPoolExecutor(max_workers=4, thread_name_prefix="threadline-io"))
    asyncio.set_event_loop(loop)
    return app, theme, loop


def install_error_routes(
    loop: asyncio.AbstractEventLoop, log_path: Path | None
) -> tuple[CrashHandler, Callable[[], None]]:
    """Qt messages and loop errors to the log, the crash handler as ``sys.excepthook``.

    Returns the handler and a function that undoes all three (the process may go on:
    the self-test and the tests run more than one window).
    """
    from threadline.app.logging_setup import install_loop_exception_handler
    from threadline.ui.common.crash_handler import CrashHandler
    from threadline.ui.common.qt_messages import install_qt_message_handler

    restore_qt = install_qt_message_handler()
    install_loop_exception_handler(loop)
    crash = CrashHandler(log_path)
    crash.install()

    def undo() -> None:
        crash.uninstall()
        loop.set_exception_handler(None)
        restore_qt()

    return crash, undo


def build_window(
    theme: ThemeManager, data_dir: Path, bridge: MessageBridge, *, skeleton: bool = False
) -> MainWindow:
    """The main window; ``skeleton``: only what its first frame shows, the rest by ``finish_building``."""
    from threadline.ui.window.main_window import MainWindow

    return MainWindow(theme, data_dir, bridge=bridge, skeleton=skeleton)


def save_tabs_after_crash(window: MainWindow) -> None:
    """The crash handler's ``save_session``: write the layout and open tabs now, not after the debounce."""
    if window.engine is None:
        return
    from threadline.ui.common.tasks import LogOnly, spawn

    spawn(window.save_state(), tell=LogOnly("could not save the open tabs"), name="save-tabs-after-crash")


async def open_engine(data_dir: Path, database_url: str | None) -> Engine:
    from threadline.engine.engine import Engine

    return await Engine.open(data_dir, database_url=database_url, watch_changes=True)


async def open_chosen_engine(data_dir: Path, database_url: str | None) -> Engine:
    """``open_engine`` on ``--database-url``, else the server chosen in Settings → Data
    (``database.json``), else the data folder's file. Read at each attempt, so a fixed
    choice file works on Retry; its errors carry a ``user_message`` for the startup dialog."""
    from threadline.engine.database_choice import resolve_database_url

    url = await asyncio.to_thread(resolve_database_url, data_dir, database_url)
    return await open_engine(data_dir, url)


def start_warm_up(engine: Engine) -> None:
    """Once the window is live: provider SDKs, keys and MCP servers in the background, so the
    first send shows at once instead of doing that work (``engine.warm_up``; the bench calls it too).
    Knowledge bases' upkeep starts too: unfinished indexings carry on, attached folders are watched."""
    from threadline.engine.warm_up import warm_up
    from threadline.ui.common.tasks import LogOnly, spawn

    spawn(warm_up(engine), tell=LogOnly("warming up failed"), name="warm-up")
    engine.knowledge.start()


def run_gui(
    data_dir: Path, database_url: str | None, startup_probe: bool = False, words: list[str] | None = None
) -> int:
    """The window, unless another start holds ``data_dir``: then ``words`` go to it (exit 0).

    ``words``: what the start asks of the window (``single_instance.start_words``).
    """
    started = process_start_time()
    from threadline.app.instance_lock import take_lock

    lock = take_lock(data_dir)
    if lock is None and not startup_probe:
        from threadline.app import single_instance

        handed = [*(words or [single_instance.SHOW]), *single_instance.activation_words(os.environ)]
        return single_instance.hand_off_or_say(data_dir, handed)
    from threadline.app.logging_setup import LoggingSetup, hold_records, log_file, setup_logging

    held = hold_records()
    opened: list[LoggingSetup] = []

    def open_log() -> LoggingSetup:
        """The log file, with what was held until now (once; the window calls it after its first paint)."""
        if not opened:
            opened.append(setup_logging(data_dir, held=held))
        return opened[0]

    try:
        app, theme, loop = create_application(watch_alt=False)
        crash, undo_routes = install_error_routes(loop, log_file(data_dir))

        def open_log_for_window() -> None:
            crash.log_path = open_log().log_path  # None if it fell back to stderr

        crash.open_log = open_log_for_window
        try:
            start = _Start(data_dir, database_url, started, startup_probe, lock, words or [])
            return _run_window(app, theme, loop, crash, start, open_log_for_window)
        finally:
            undo_routes()
    finally:
        open_log().close()  # a window that never painted: what it logged still reaches the file


class _Start:
    """What a window start was given: the folder, the database, the probe, the instance lock, the words."""

    def __init__(
        self,
        data_dir: Path,
        database_url: str | None,
        started: float,
        startup_probe: bool,
        lock: InstanceLock | None,
        opened: list[str],
    ) -> None:
        self.data_dir = data_dir
        self.database_url = database_url
        self.started = started
        self.startup_probe = startup_probe
        self.lock = lock
        self.opened = opened


def _run_window(
    app: QApplication,
    theme: ThemeManager,
    loop: qasync.QEventLoop,
    crash: CrashHandler,
    start: _Start,
    open_log: Callable[[], None],
) -> int:
    from threadline.ui.common.first_paint import FirstPaintWatcher, print_probe

    data_dir, database_url, started, startup_probe = (
        start.data_dir,
        start.database_url,
        start.started,
        start.startup_probe,
    )
    from threadline.ui.common.message_bridge import MessageBridge
    from threadline.ui.common.tasks import cancel_running

    bridge = MessageBridge(app)
    if sys.platform == "darwin":  # a file opened in Finder arrives now, long before the window can open it
        from threadline.ui.desktop.file_opens import listen as listen_for_file_opens

        listen_for_file_opens(app)
    window = build_window(theme, data_dir, bridge, skeleton=True)
    crash.save_session = lambda: save_tabs_after_crash(window)
    crash.quitRequested.connect(window.close)
    done: asyncio.Future[int] = loop.create_future()
    engine_box: list[Engine] = []
    instance_box: list[InstanceServer] = []

    def finish(code: int) -> None:
        if not done.done():
            done.set_result(code)

    def listen() -> None:
        """Later starts hand their words here from now on (once; QtNetwork after the whole window)."""
        if start.lock is not None and not instance_box:
            from threadline.app.single_instance import serve

            instance_box.append(serve(start.lock, data_dir))

    def whole_window_painted() -> None:
        # The log file (with the records held until now) once the whole window is on screen:
        # nothing the user sees waits for it (docs/performance.md). The engine's start opens it too, should
        # the sidebar never paint (a window minimised at once).
        open_log()
        listen()
        if startup_probe:
            print_probe(started, time.time())
            finish(0)

    def after_first_paint() -> None:
        from threadline.ui.common.theme import MnemonicState

        painted = time.time()
        # The rest of the window, before anything else: the sidebar fills its slot in the
        # next frame, and the engine (opened below) finds the sidebar and the tabs built.
        window.finish_building()
        MnemonicState.of(app).listen()
        FirstPaintWatcher(window.sidebar, whole_window_painted)
        if startup_probe:
            # The probe also waits for the sidebar's paint (its second line), so that its
            # exit and CPU time include the whole window.
            print_probe(started, painted)
            return
        loop.create_task(start_engine())

    async def start_engine() -> None:
        from threadline.ui.window.startup_recovery import StartupRecovery

        recovery = StartupRecovery(data_dir, database_url, opener=open_chosen_engine, parent_widget=window)
        engine = await recovery.open_engine()
        if engine is None:
            finish(1)
            return
        engine_box.append(engine)
        open_log()  # done already unless the sidebar has not painted yet
        listen()
        await window.attach_engine(engine)
        start_warm_up(engine)
        _become_a_desktop_citizen(window, engine, instance_box, start.opened)
        from threadline.ui.window import damage_recovery

        def replaced(new_engine: Engine) -> None:  # a restore in the window reopened the database
            engine_box[:] = [new_engine]

        damage_recovery.install(window, recovery, replaced)

    async def shutdown() -> None:
        await cancel_running()
        for engine in engine_box:
            try:
                await engine.aclose()
            except Exception:
                log.exception("engine close failed")
        finish(0)

    window.closed.connect(lambda: loop.create_task(shutdown()))
    window.closed.connect(lambda: _close_all(instance_box))
    FirstPaintWatcher(window, after_first_paint)
    window.show()
    with loop:
        code: int = loop.run_until_complete(done)
    window.deleteLater()
    return code


def _close_all(servers: list[InstanceServer]) -> None:
    for server in servers:
        server.close()


def _become_a_desktop_citizen(
    window: MainWindow, engine: Engine, instance_box: list[InstanceServer], opened: list[str]
) -> None:
    """Tray, notifications, and what this start and later ones asked for (``ui/desktop``, docs/desktop.md)."""
    from threadline.ui.desktop.actions import QUICK_ASK
    from threadline.ui.desktop.citizen import DesktopCitizen

    citizen = DesktopCitizen(window, engine)  # a child of the window: lives as long as it
    citizen.actions.register(QUICK_ASK, window.open_quick_ask)  # the tray, --quick-ask, a second start
    citizen.open_words(opened)
    for server in instance_box:
        server.set_handler(citizen.open_words)


# -- the part of ``--self-test`` that needs Qt ------------------------------------------------------


def load_app_icon() -> QIcon:
    """The window icon from the bundled PNGs; raises ``RuntimeError`` if none loads (plugins missing)."""
    from PySide6.QtGui import QIcon

    from threadline.app.resources import app_icon_paths

    icon = QIcon()
    for path in app_icon_paths():
        if path.suffix == ".png":
            icon.addFile(str(path))
    if icon.isNull() or icon.pixmap(48, 48).isNull():
        raise RuntimeError("the app icon did not load (resources or Qt image plugins missing)")
    return icon


def self_test_window(
    data_dir: Path,
    database_url: str | None,
    set_step: Callable[[str], None],
) -> str:
    """Paint the real window offscreen on the real engine, open and delete a chat in a tab.

    ``set_step`` is told each step as it starts (the caller reports the one that failed).
    Returns a description of Qt ("Qt 6.8.1 (offscreen)"). Raises on the first failure.
    """
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    set_step("starting Qt")
    from PySide6.QtCore import qVersion

    app, theme, loop = create_application()
    set_step("loading the app icon")
    app.setWindowIcon(load_app_icon())
    qt = f"Qt {qVersion()} ({app.platformName()})"

    from threadline.ui.common.message_bridge import MessageBridge

    async def check() -> None:
        set_step("opening the database")
        engine = await open_engine(data_dir, database_url)
        set_step("building the main window")
        window = build_window(theme, data_dir, MessageBridge(app))
        try:
            window.show()
            await window.attach_engine(engine)
            set_step("creating a session")
            info = await engine.sessions.new_session("self-test")
            set_step("opening the session in a tab")
            tab = await window.session_tabs.open(info.id, focus=True)
            if tab is None or window.tabs.tab_for(info.id) is None:
                raise RuntimeError("the session did not open in a tab")
            window.grab()
            window.tabs.close_tab(tab)
            set_step("deleting the session")
            await engine.sessions.delete_session(info.id)
            remaining = [s.id for s in await engine.sessions.list_sessions(limit=10_000)]
            if info.id in remaining:
                raise RuntimeError("the session was not deleted")
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
    return qt
