"""Screenshots of MCP prompts and resources in a chat: ``python .ci/screenshots_mcp_prompts.py [OUT]``.

Runs under Xvfb (started here when there is no display) with a temporary data folder, the
replay server as the model and the real ``server-everything`` (installed by
``tests/support/npm_servers.py``, once). Saves PNGs, light and dark, of: the ``/`` list with the server's
prompts, a prompt's form with the server's suggestions, the resource browser with a
template's variable, and the composer with two MCP resources attached.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from screenshot_run import run  # .ci/: the display, the app and its loop


async def shoot(app: Any, out: Path) -> int:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from tests.support.everything import STATIC_TEXT, everything_config
    from tests.support.sse_server import ReplayServer

    from threadline.core.config import ProviderConfig, ProviderKind
    from threadline.engine.engine import Engine
    from threadline.ui.common.theme import ThemeChoice, ThemeManager
    from threadline.ui.window.main_window import MainWindow

    async def pause(ms: int) -> None:
        await asyncio.sleep(ms / 1000)

    async def until(check: Any, seconds: float = 30) -> None:
        for _ in range(int(seconds * 20)):
            if check():
                return
            await asyncio.sleep(0.05)
        raise TimeoutError("screenshot state not reached")

    def save(widget: Any, name: str) -> None:
        path = out / f"{name}.png"
        widget.grab().save(str(path))
        print(path)

    async def both(widget: Any, window: Any, name: str) -> None:
        save(widget, f"{name}-light")
        window.set_theme(ThemeChoice.DARK)
        await pause(300)
        save(widget, f"{name}-dark")
        window.set_theme(ThemeChoice.LIGHT)
        await pause(200)

    theme = ThemeManager(app)
    theme.set_choice(ThemeChoice.LIGHT)
    theme.apply()
    with tempfile.TemporaryDirectory() as tmp, ReplayServer() as server:
        data = Path(tmp) / "data"
        engine = await Engine.open(data)
        await engine.providers.save_provider(
            ProviderConfig(
                "replay", ProviderKind.OPENAI, base_url=server.openai_base_url, default_model="gpt-4o-mini"
            ),
            "sk-test",
        )
        await engine.tool_servers.save_server(everything_config())
        window = MainWindow(theme, data)
        window.resize(1100, 760)
        window.show()
        await window.attach_engine(engine)
        info = await engine.sessions.new_session("Team changes")
        tab = await window.session_tabs.open(info.id, focus=True)
        edit = tab.composer.edit

        # 1. the "/" list with the server's prompts
        edit.setFocus()
        QTest.keyClicks(edit, "/")
        popup = tab.slash_completer
        await until(lambda: any(":" in s.usage for s in popup.specs()))
        QTest.keyClicks(edit, "every")
        await pause(300)
        await both(window, window, "30-mcp-prompts-in-slash-list")

        # 2. a prompt's form, with the server's suggestions for what is typed
        QTest.keyClicks(edit, "thing:completable")
        QTest.keyClick(edit, Qt.Key.Key_Return)
        await until(lambda: tab.mcp.form is not None and tab.mcp.form.isVisible())
        form = tab.mcp.form
        field = form.form.field("department")
        field.setFocus()
        QTest.keyClicks(field, "S")
        await until(lambda: field.suggestions.stringList() == ["Sales", "Support"])
        await pause(300)
        await both(form, window, "31-mcp-prompt-form")
        # the suggestions list is a window of its own: the screen around the form shows it
        popup_list = field.completer().popup()
        await until(popup_list.isVisible)
        area = form.frameGeometry().united(popup_list.frameGeometry()).adjusted(-8, -8, 8, 8)
        shot = app.primaryScreen().grabWindow(0, area.x(), area.y(), area.width(), area.height())
        shot.save(str(out / "31-mcp-prompt-form-suggestions-light.png"))
        print(out / "31-mcp-prompt-form-suggestions-light.png")
        form.reject()
        tab.composer.set_text("")

        # 3. the resource browser, a template's variable being filled in
        browser = tab.mcp.open_browser()
        await until(lambda: browser.list.count() > 0)
        browser.select("architecture.md")
        browser.attach_button.click()
        browser.select("Dynamic Text Resource")
        variable = browser.variables.field("resourceId")
        variable.setFocus()
        QTest.keyClicks(variable, "7")
        await until(lambda: variable.suggestions.stringList() == ["7"])
        await pause(300)
        await both(browser, window, "32-mcp-resource-browser")
        browser.attach_button.click()
        browser.reject()

        # 4. the composer with the resources attached
        await until(lambda: len(tab.composer.attachments()) == 2 and not tab.composer.chips.reading_names())
        tab.composer.set_text(f"Summarise {STATIC_TEXT} and resource 7")
        await pause(300)
        await both(window, window, "33-mcp-resources-attached")
        window.hide()
        await engine.aclose()
    return 0


if __name__ == "__main__":
    sys.exit(run(shoot))
