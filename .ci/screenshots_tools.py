"""Screenshots of tool approval and tool settings, for review: ``python .ci/screenshots_tools.py [OUT]``.

Runs under Xvfb (started here when there is no display) with a temporary data
folder and the replay server asking for tools. Saves PNGs of: the approval bar
for a shell command and for a ``write_file`` diff (light and dark), a round of
several calls with another tab waiting in the background, that round stopped as the
chat shows it (light and dark), Settings → Tools and
Settings → MCP servers with the real ``mcp-server-time`` running (light and dark).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from screenshot_run import run  # .ci/: the display, the app and its loop

OLD_NOTES = """# Release checklist

- bump the version
- run the test suite
- tag the release
"""
NEW_NOTES = """# Release checklist

- bump the version in pyproject.toml
- run the test suite (unit, ui, integration)
- build the packages
- tag the release
"""


async def shoot(app: Any, out: Path) -> int:
    from tests.support.sse_server import ReplayServer, openai_tool_call_stream, sse_response

    from threadline.core.config import AgentConfig, Approval, ApprovalRule, ProviderConfig, ProviderKind
    from threadline.engine.engine import Engine
    from threadline.tools.mcp.config import McpServerConfig
    from threadline.ui.common.theme import ThemeChoice, ThemeManager
    from threadline.ui.window.main_window import MainWindow

    async def pause(ms: int) -> None:
        await asyncio.sleep(ms / 1000)

    async def until(check: Any, seconds: float = 15) -> None:
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

    def calls(*items: tuple[str, str, dict[str, Any]]) -> Any:
        return sse_response(openai_tool_call_stream(list(items), text_pieces=["Let me check that for you."]))

    theme = ThemeManager(app)
    theme.set_choice(ThemeChoice.LIGHT)
    theme.apply()
    with tempfile.TemporaryDirectory() as tmp, ReplayServer() as server:
        data = Path(tmp) / "data"
        work = Path(tmp) / "project"
        work.mkdir()
        (work / "RELEASE.md").write_text(OLD_NOTES)
        engine = await Engine.open(data)
        await engine.providers.save_provider(
            ProviderConfig(
                "replay", ProviderKind.OPENAI, base_url=server.openai_base_url, default_model="gpt-4o-mini"
            ),
            "sk-test",
        )
        await engine.agents.save_agent(
            AgentConfig(
                "default",
                "Default",
                enabled_tools=("read_file", "list_directory", "shell", "write_file", "time/*"),
                allowed_folders=(str(work), str(Path.home() / "notes")),
                approval_rules=(
                    ApprovalRule("shell", Approval.ALLOW, "git status"),
                    ApprovalRule("list_directory", Approval.ALLOW),
                    ApprovalRule("git/*", Approval.DENY),
                ),
            )
        )
        await engine.tool_servers.save_server(
            McpServerConfig("time", command=sys.executable, args=("-m", "mcp_server_time"))
        )
        await engine.tool_servers.save_server(
            McpServerConfig("github", command="/opt/missing/github-mcp", args=("--stdio",), startup_timeout=5)
        )
        window = MainWindow(theme, data)
        window.resize(1200, 780)
        window.show()
        await window.attach_engine(engine)

        # 1. a shell command
        server.enqueue(
            calls(
                ("s1", "shell", {"command": "git log --oneline -5 && git diff --stat HEAD~1", "timeout": 20})
            )
        )
        info = await engine.sessions.new_session("Release prep")
        tab = await window.session_tabs.open(info.id, focus=True)
        tab.composer.set_text("What changed since the last release?")
        tab.composer.submit()
        await until(lambda: tab.approval.isVisible())
        await pause(300)
        await both(window, window, "10-approval-shell")

        # 2. a write_file diff
        server.enqueue(calls(("w1", "write_file", {"path": "RELEASE.md", "content": NEW_NOTES})))
        info = await engine.sessions.new_session("Release checklist")
        tab2 = await window.session_tabs.open(info.id, focus=True)
        tab2.composer.set_text("Update the release checklist with the packaging step")
        tab2.composer.submit()
        await until(lambda: tab2.approval.isVisible())
        await pause(300)
        await both(window, window, "11-approval-write-diff")

        # 3. several calls, and the other tabs still waiting in the background
        server.enqueue(
            calls(
                ("a", "read_file", {"path": "RELEASE.md"}),
                ("b", "shell", {"command": "pytest -q tests/unit"}),
                ("c", "time__get_current_time", {"timezone": "Europe/Lisbon"}),
            )
        )
        info = await engine.sessions.new_session("Several tools")
        tab3 = await window.session_tabs.open(info.id, focus=True)
        tab3.composer.set_text("Check the notes, run the unit tests and tell me the time in Lisbon")
        tab3.composer.submit()
        await until(lambda: tab3.approval.isVisible() and len(tab3.approval.rows) == 3, seconds=30)
        await pause(300)
        save(window, "12-approval-several-light")
        for t in (tab, tab2, tab3):
            t.stop()
        await pause(500)
        # the stopped round in the chat: tool calls under the names the user knows, cancelled results
        await until(lambda: not tab3.busy)
        await pause(200)
        await both(window, window, "12-tool-calls-stopped")

        # 4. settings: tools, MCP servers
        window.open_settings("tools")
        dialog = window._settings_dialog
        await dialog.loaded
        await pause(300)
        await both(dialog, window, "13-settings-tools")
        dialog.pages.setCurrentWidget(dialog.mcp)
        await engine.tool_servers.start("time")
        await engine.tool_servers.start("github")
        dialog.mcp._fill_list(select="time")
        await pause(300)
        await both(dialog, window, "14-settings-mcp-ready")
        dialog.mcp._fill_list(select="github")
        await pause(200)
        save(dialog, "15-settings-mcp-failed-light")
        dialog.mcp.add_server()
        await pause(300)
        save(dialog.mcp.editor, "16-mcp-server-editor-light")
        dialog.mcp.editor.reject()
        dialog.reject()
        window.hide()
        await engine.aclose()
    return 0


if __name__ == "__main__":
    sys.exit(run(shoot))
