"""The window on a real X server, for ``test_quick_ask_x11``: run as a child process on Xvfb.

The test suite's own QApplication is offscreen and cannot connect to an X server, so the
window runs here with ``QT_QPA_PLATFORM=xcb``. It reports each step on standard output
as one line (``READY``, ``OPENED``, ``TYPED``, ``STREAMING``, ``REPLY``, ``TAB``, then in
Settings ``RECORDING``, ``HELD``, ``RECORDED``, ``REOPENED``, and ``DONE``)
and waits for the test to act between them (the test presses the keys with ``xdotool``).

    python x11_child.py DATA_DIR OPENAI_BASE_URL
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path

import keyring
from tests.support.memory_keyring import MemoryKeyring

keyring.set_keyring(MemoryKeyring())  # never the machine's keychain

DEADLINE = 90.0
"""Per step; generous for a loaded machine."""


def say(*parts: object) -> None:
    print(*parts, flush=True)


async def until(condition: Callable[[], object], what: str) -> None:
    end = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > end:
            say("FAILED", what)
            raise SystemExit(3)
        await asyncio.sleep(0.02)


def main() -> int:
    data_dir, base_url = Path(sys.argv[1]), sys.argv[2]
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from threadline.app.start import create_application

    app, theme, loop = create_application()
    assert app.platformName() == "xcb", app.platformName()
    from threadline.core.config import ProviderConfig, ProviderKind
    from threadline.engine.engine import Engine
    from threadline.ui.window.main_window import MainWindow

    async def run() -> None:
        engine = await Engine.open(data_dir)
        provider = ProviderConfig(
            "replay", ProviderKind.OPENAI, base_url=base_url, default_model="gpt-4o-mini"
        )
        await engine.providers.save_provider(provider, "sk-test")
        window = MainWindow(theme, data_dir)
        window.resize(900, 600)
        window.show()
        await window.attach_engine(engine)
        qa = window.quick_ask
        assert qa is not None
        await until(lambda: qa.shortcut.status, "the shortcut's state")
        say("READY", qa.shortcut.working, qa.shortcut.status)
        await until(
            lambda: qa.window is not None and qa.window.isVisible() and qa.tab is not None, "Quick ask"
        )
        assert qa.window is not None and qa.tab is not None
        tab = qa.tab
        await until(lambda: tab.composer.edit.hasFocus(), "the composer's focus")
        say("OPENED", qa.window.windowTitle())
        await until(lambda: tab.composer.text().endswith("?"), "the typed question")
        say("TYPED", tab.composer.text())
        QTest.keyClick(tab.composer.edit, Qt.Key.Key_Return)

        def reply() -> str:
            path = tab.live.conversation.path()
            return path[1].text if len(path) == 2 else ""

        await until(lambda: reply(), "the reply's first words")
        say("STREAMING", tab.chat_split.isVisible())
        await until(lambda: tab.live.conversation.ready_for_input and not tab.busy, "the reply's end")
        say("REPLY", reply())
        QTest.mouseClick(qa.window.continue_button, Qt.MouseButton.LeftButton)
        await until(lambda: window.tabs.tab_for(tab.session_id) is not None, "the tab in the window")
        current = window.tabs.current_tab()
        say("TAB", current is not None and current.session_id == tab.session_id, qa.window.isVisible())

        # Settings → Quick ask: the editor records the keys pressed, the held one included.
        window.open_settings("quick-ask")
        dialog = window._settings_dialog
        page = dialog.pages.currentWidget()
        recorded: list[str] = []
        page.editor.keySequenceChanged.connect(lambda seq: recorded.append(seq.toString()))
        await until(lambda: dialog.isVisible(), "the Settings dialog")
        dialog.activateWindow()
        page.editor.setFocus()
        await until(lambda: page.editor.hasFocus(), "the shortcut editor's focus")
        say("RECORDING", int(dialog.winId()))
        await until(lambda: "Ctrl+Alt+Space" in recorded, "Ctrl+Alt+Space recorded")
        say("HELD", qa.window.isVisible())
        await until(lambda: qa.shortcut.sequence.toString() == "Ctrl+Alt+K", "the new shortcut")
        dialog.close()
        window.activateWindow()
        await until(lambda: not page.editor.hasFocus(), "the editor let go")
        say("RECORDED", qa.shortcut.working, qa.shortcut.status)
        await until(lambda: qa.window is not None and qa.window.isVisible(), "Quick ask by the new shortcut")
        say("REOPENED")
        closed = asyncio.get_running_loop().create_future()
        window.closed.connect(lambda: closed.done() or closed.set_result(None))
        window.close()
        await asyncio.wait_for(closed, DEADLINE)
        await engine.aclose()
        say("DONE")

    with loop:
        loop.run_until_complete(run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
