"""Screenshots of Quick ask, for review: ``python .ci/screenshots_quick_ask.py [OUT]``.

Runs under Xvfb (started here when there is no display; needs the ``xvfb`` package), or
offscreen with ``QT_QPA_PLATFORM=offscreen``. The real window on a real engine, the replay
server as the model. Saves, light and dark: Quick ask as it opens (only the composer,
``qa1``), asked about a selection (the quote in the composer, ``qa2``) and with a streamed
Markdown reply (``qa3``), each drawn over the main window as it would float above it, and
Settings → Quick ask (``qa4``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "desktop"))

REPLY = """Use `git stash` only when you mean to come back soon. For a longer detour, a branch is clearer:

```bash
git switch -c try-idea
git commit -am "WIP"
```

- **Stash**: quick, unnamed, easy to forget.
- **Branch**: named, shows in `git log`, survives a week away.
"""


def ensure_display() -> None:
    if os.environ.get("DISPLAY") or os.environ.get("QT_QPA_PLATFORM") == "offscreen":
        return
    if shutil.which("xvfb-run") is None:
        print("no display and no xvfb-run: install xvfb, or set QT_QPA_PLATFORM=offscreen", file=sys.stderr)
        sys.exit(2)
    args = ["xvfb-run", "-a", "-s", "-screen 0 1400x900x24 -dpi 96", sys.executable, *sys.argv]
    sys.exit(subprocess.call(args))


async def settle(ms: int = 300) -> None:
    import asyncio

    await asyncio.sleep(ms / 1000)


async def until(condition: Any, seconds: float = 60) -> None:
    import asyncio

    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            raise TimeoutError("the screen did not get there")
        await asyncio.sleep(0.02)


def over_window(window: Any, card: Any, path: Path) -> None:
    """The card drawn over the main window where it floats (its shadow on the window)."""
    from PySide6.QtGui import QPainter

    shot = window.grab()
    painter = QPainter(shot)
    x = (shot.width() - card.width()) // 2
    painter.drawPixmap(x, 60, card.grab())
    painter.end()
    shot.save(str(path))


async def one_theme(window: Any, server: Any, choice: Any, out: Path) -> None:
    """The four screenshots in one theme."""
    from PySide6.QtGui import QGuiApplication
    from tests.support.sse_server import openai_text_stream, split_text, sse_response

    name = choice.value
    window.set_theme(choice)
    qa = window.quick_ask
    assert qa is not None
    window.open_quick_ask()
    await until(lambda: qa.window is not None and qa.tab is not None and qa.window.isVisible())
    assert qa.window is not None and qa.tab is not None
    if qa.tab.model.rowCount():
        qa.new_ask()
        await until(lambda: qa.tab is not None and qa.tab.model.rowCount() == 0)
    await settle(500)
    over_window(window, qa.window, out / f"qa1-open-{name}.png")
    QGuiApplication.clipboard().setText("Stashes are a stack of unfinished changes kept aside.")
    window.open_quick_ask(about_selection=True)
    await until(lambda: qa.tab is not None and qa.tab.composer.text().startswith(">"))
    tab = qa.tab
    assert tab is not None
    tab.composer.set_text(tab.composer.text() + "When should I use it instead of a branch?")
    await settle(400)
    over_window(window, qa.window, out / f"qa2-selection-{name}.png")
    server.enqueue(sse_response(openai_text_stream(split_text(REPLY, 6)), chunk_delay=0.01))
    tab.composer.submit()
    await until(lambda: tab.live.conversation.ready_for_input and not tab.busy and tab.model.rowCount() == 2)
    await settle(800)
    over_window(window, qa.window, out / f"qa3-reply-{name}.png")
    qa.hide()
    window.open_settings("quick-ask")
    dialog = window._settings_dialog
    await settle(600)
    dialog.grab().save(str(out / f"qa4-settings-{name}.png"))
    dialog.close()


async def scene(theme: Any, out: Path) -> None:
    from PySide6.QtWidgets import QApplication
    from tests.support.sse_server import ReplayServer

    from threadline.core.config import ProviderConfig, ProviderKind
    from threadline.engine.engine import Engine
    from threadline.ui.common.theme import ThemeChoice
    from threadline.ui.window.main_window import MainWindow

    with tempfile.TemporaryDirectory() as tmp, ReplayServer() as server:
        data = Path(tmp) / "data"
        engine = await Engine.open(data)
        await engine.providers.save_provider(
            ProviderConfig(
                "local", ProviderKind.OPENAI, base_url=server.openai_base_url, default_model="gpt-4o-mini"
            ),
            "sk-test",
        )
        window = MainWindow(theme, data)
        window.resize(1200, 760)
        window.show()
        await window.attach_engine(engine)
        for choice in (ThemeChoice.LIGHT, ThemeChoice.DARK):
            await one_theme(window, server, choice, out)
        window.close()
        await until(lambda: not window.isVisible())
        await engine.aclose()
        QApplication.processEvents()


def main() -> int:
    ensure_display()
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build" / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    from PySide6.QtWidgets import QApplication

    import threadline.ui  # noqa: F401  (first, as the app: tames PySide6's import hook)

    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    import keyring
    import qasync
    from tests.support.memory_keyring import MemoryKeyring

    from threadline.ui.common.theme import ThemeManager

    keyring.set_keyring(MemoryKeyring())
    theme = ThemeManager(app)
    theme.apply()
    loop = qasync.QEventLoop(app)
    with loop:
        loop.run_until_complete(scene(theme, out))
    print(f"screenshots in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
