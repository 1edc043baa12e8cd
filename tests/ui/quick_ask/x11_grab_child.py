"""A windowless Qt process on a real X server that takes the X11 key grab, for ``test_x11_key_grab``.

It has no window, so a key reaches it only through its passive grab on the root window.
Lines on standard output: ``BOUND <grabs>`` or ``TAKEN <message>`` (then it exits), ``HIT``
on each press; a line ``unbind`` on standard input lets go (``UNBOUND <grabs>``) while it keeps
running; when standard input closes it exits.

    python x11_grab_child.py SHORTCUT
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QSocketNotifier
from PySide6.QtGui import QGuiApplication, QKeySequence

from threadline.ui.quick_ask.shortcuts.base import ShortcutError
from threadline.ui.quick_ask.shortcuts.x11 import X11Shortcut


def say(*parts: object) -> None:
    print(*parts, flush=True)


def main() -> None:
    app = QGuiApplication([])
    shortcut = X11Shortcut()
    try:
        shortcut.bind(QKeySequence(sys.argv[1]), lambda: say("HIT"))
    except ShortcutError as err:
        say("TAKEN", err.user_message)
        return
    say("BOUND", len(shortcut._grabs))

    def line() -> None:
        text = sys.stdin.readline()
        if not text:
            app.quit()
        elif text.strip() == "unbind":
            shortcut.unbind()
            say("UNBOUND", len(shortcut._grabs))

    notifier = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read)
    notifier.activated.connect(line)
    app.exec()


if __name__ == "__main__":
    main()
