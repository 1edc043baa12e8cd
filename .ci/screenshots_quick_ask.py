"""Screenshots of Quick ask, for review: ``python .ci/screenshots_quick_ask.py [OUT]``.

Runs under Xvfb (started here when there is no display; needs the ``xvfb`` package), or
offscreen with ``QT_QPA_PLATFORM=offscreen``. The real window on a real engine, the replay
server as the model. Saves, light and dark: Quick ask as it opens (only the composer,
``qa1``), asked about a selection (the quote in the composer, ``qa2``) and with a streamed
Markdown reply (``qa3``), each drawn over the main window as it would float above it, and
Settings → Quick ask (``qa4``).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from screenshot_run import run  # .ci/: the display, the app and its loop

REPLY = """Use `git stash` only when you mean to come back soon. For a longer detour, a branch is clearer:

```bash
git switch -c try-idea
git commit -am "WIP"
```

- **Stash**: quick, unnamed, easy to forget.
- **Branch**: named, shows in `git log`, survives a week away.
"""


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


async def shoot(app: Any, out: Path) -> int:
    from threadline.ui.common.theme import ThemeManager

    theme = ThemeManager(app)
    theme.apply()
    await scene(theme, out)
    print(f"screenshots in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(run(shoot))
