"""The app side of the AT-SPI end-to-end test: a chat view that streams a reply, then waits.

Run with the project's Python under Xvfb and a session bus, with
``QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1`` so Qt's AT-SPI bridge exports the widgets. The
conversation is the real core ``Conversation`` behind the test double of the live
conversation (tests/support/ui_fakes.py); the reply streams in several pieces, like a
provider's, a short while after the reader writes ``start``, so the reader sees it grow and
finish. Until then the app announces a probe every few hundred milliseconds: the reader
writes ``start`` only once it has heard one, which proves that its listener has reached the
app's accessibility bridge (on a busy machine that registration can arrive seconds late,
and an announcement sent before it is lost). Prints ``ready`` when the window shows and ``finished``
when the reply is done; quits when its standard input closes.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository, for tests.support

from PySide6.QtCore import QSocketNotifier, QTimer
from PySide6.QtWidgets import QApplication
from tests.support.ui_fakes import FakeLive

from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.chat.view.conversation_model import ConversationModel
from threadline.ui.common.announce import announce

PIECES = ["The capital ", "of France ", "is Paris."]
PROBE = "Accessibility probe"
STEP_MS = 150


def main() -> int:
    app = QApplication(sys.argv)
    app.setApplicationName("threadline-atspi-e2e")
    live = FakeLive()
    live.exchange("Hello?", "Hi! Ask me anything.")
    model = ConversationModel(live)
    view = ChatView()
    view.setModel(model)
    view.setWindowTitle("Threadline accessibility test")
    view.resize(700, 500)
    view.show()
    print("ready", flush=True)

    steps = iter(range(len(PIECES) + 2))

    def step() -> None:
        i = next(steps, None)
        if i is None:
            return
        if i == 0:
            live.user_says("What is the capital of France?")
            live.begin(model="gpt-e2e")
        elif i <= len(PIECES):
            live.delta(PIECES[i - 1])
        else:
            live.finish()
            print("finished", flush=True)
            return
        QTimer.singleShot(STEP_MS, step)

    delay = int(sys.argv[1]) if len(sys.argv) > 1 else 1000

    probe = QTimer()
    probe.setInterval(300)
    probe.timeout.connect(lambda: announce(view, PROBE))
    probe.start()

    def read_stdin() -> None:
        # "start": the reader listens and sees the list, so the reply may stream now (on a busy
        # machine a fixed head start was not enough: the reader missed the announcement).
        # End of input: the reader is done, time to go.
        line = sys.stdin.readline()
        if not line:
            app.quit()
        elif line.strip() == "start":
            probe.stop()
            QTimer.singleShot(delay, step)

    stdin = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read)
    stdin.activated.connect(read_stdin)
    QTimer.singleShot(120_000, app.quit)  # never outlive a test that lost track of it
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
