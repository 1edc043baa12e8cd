"""A bare PySide6 window on qasync, the yardstick for Threadline's start-up.

    python bench/bare_window.py [--stay]

A ``QMainWindow`` with a list and tabs in a splitter, at Threadline's window size, on a
qasync loop. It prints the milliseconds from the process's start to its first paint
and exits, exactly as ``threadline --startup-probe`` does: both use the process start
time from ``/proc`` (``threadline.app.start.process_start_time``) and the same first-paint
watcher (``threadline.ui.common.first_paint``). ``bench/ui_bench.py start`` runs the
two alternately and prints the medians and their ratio. With ``--stay`` it stays open after
the paint (``bench/ui_bench.py settled`` reads its memory from outside, as Threadline's).
"""

from __future__ import annotations

import asyncio
import sys

from threadline.app.start import process_start_time


def main() -> int:
    started = process_start_time()
    import qasync
    from PySide6.QtWidgets import QApplication, QListWidget, QMainWindow, QSplitter, QTabWidget

    from threadline.ui.common.first_paint import FirstPaintWatcher, print_probe

    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    window = QMainWindow()
    window.setWindowTitle("Bare")
    window.resize(1180, 760)
    splitter = QSplitter()
    sidebar = QListWidget()
    sidebar.addItems([f"Chat {i}" for i in range(20)])
    tabs = QTabWidget()
    tabs.addTab(QListWidget(), "Start")
    splitter.addWidget(sidebar)
    splitter.addWidget(tabs)
    window.setCentralWidget(splitter)
    done: asyncio.Future[int] = loop.create_future()

    stay = "--stay" in sys.argv[1:]

    def painted() -> None:
        import time

        print_probe(started, time.time())
        if not stay:
            done.set_result(0)

    FirstPaintWatcher(window, painted)
    window.show()
    with loop:
        code: int = loop.run_until_complete(done)
    window.deleteLater()
    return code


if __name__ == "__main__":
    sys.exit(main())
