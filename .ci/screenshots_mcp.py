"""Screenshots of an MCP server talking to the person, for review: ``python .ci/screenshots_mcp.py [OUT]``.

Runs under Xvfb (started here when there is no display) with a temporary data folder,
the replay server asking for tools of the real ``@modelcontextprotocol/server-everything``
(npm, installed by ``.ci/setup --dev``) and the OAuth-protected test server
(tests/integration/tools/servers/oauth_server.py). Saves PNGs (light and dark) of: the
elicitation form in the chat, the URL consent, a long call's progress with Stop, and
Settings → MCP with the reference server running (details, instructions, log) and with
the remote server that needs a sign in; and a turn asking for that sign in in the chat.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from screenshot_run import ROOT, run  # .ci/: the display, the app and its loop


async def shoot_with_oauth(app: Any, out: Path) -> int:
    """``shoot`` with the OAuth server of the tests on a free loopback port, stopped after."""
    port = free_port()
    oauth = subprocess.Popen(  # noqa: ASYNC220  (started before the loop has other work)
        [sys.executable, str(ROOT / "tests/integration/tools/servers/oauth_server.py"), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        return await shoot(app, out, port)
    finally:
        oauth.terminate()
        oauth.wait(10)


async def shoot(app: Any, out: Path, port: int) -> int:
    from tests.support.everything_server import everything_config
    from tests.support.sse_server import ReplayServer, openai_tool_call_stream, sse_response

    from threadline.core.config import AgentConfig, Approval, ApprovalRule, ProviderConfig, ProviderKind
    from threadline.engine.engine import Engine
    from threadline.tools.mcp.config import McpServerConfig, Transport
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

    def call(call_id: str, tool: str, arguments: dict[str, Any]) -> Any:
        return sse_response(
            openai_tool_call_stream([(call_id, tool, arguments)], text_pieces=["One moment."])
        )

    theme = ThemeManager(app)
    theme.set_choice(ThemeChoice.LIGHT)
    theme.apply()
    if True:
        with tempfile.TemporaryDirectory() as tmp, ReplayServer() as server:
            data = Path(tmp) / "data"
            engine = await Engine.open(data)
            await engine.providers.save_provider(
                ProviderConfig(
                    "replay",
                    ProviderKind.OPENAI,
                    base_url=server.openai_base_url,
                    default_model="gpt-4o-mini",
                ),
                "sk-test",
            )
            await engine.agents.save_agent(
                AgentConfig(
                    "default",
                    "Default",
                    enabled_tools=("everything/*",),
                    approval_rules=(ApprovalRule("everything/*", Approval.ALLOW),),
                )
            )
            await engine.tool_servers.save_server(everything_config())
            await engine.tool_servers.save_server(
                McpServerConfig("linear", transport=Transport.HTTP, url=f"http://127.0.0.1:{port}/mcp")
            )
            window = MainWindow(theme, data)
            window.resize(1200, 820)
            window.show()
            await window.attach_engine(engine)

            # 1. the elicitation form, partly filled in
            server.enqueue(call("e1", "everything__trigger-elicitation-request", {}))
            info = await engine.sessions.new_session("Sign-up form")
            tab = await window.session_tabs.open(info.id, focus=True)
            tab.composer.set_text("Register me for the workshop")
            tab.composer.submit()
            await until(lambda: window.mcp_person.wiring(tab).asking)
            bar = window.mcp_person.wiring(tab).bar
            assert bar.form is not None
            bar.form.field_widget("name").setText("Ada Lovelace")
            bar.form.field_widget("email").setText("ada@example.com")
            await pause(300)
            await both(window, window, "40-mcp-elicitation-form")
            bar.decline_button.click()
            await until(lambda: not tab.busy)

            # 2. the URL consent
            page = "https://pay.example.com/checkout?order=1042"
            server.enqueue(
                call(
                    "u1", "everything__trigger-url-elicitation", {"url": page, "message": "Pay the deposit."}
                )
            )
            info = await engine.sessions.new_session("Deposit")
            tab2 = await window.session_tabs.open(info.id, focus=True)
            tab2.composer.set_text("Pay the workshop deposit")
            tab2.composer.submit()
            await until(lambda: window.mcp_person.wiring(tab2).asking)
            await pause(300)
            await both(window, window, "41-mcp-url-consent")
            window.mcp_person.wiring(tab2).bar.cancel_button.click()
            await until(lambda: not tab2.busy)

            # 3. a long call with progress, and Stop
            server.enqueue(
                call("l1", "everything__trigger-long-running-operation", {"duration": 60, "steps": 20})
            )
            info = await engine.sessions.new_session("Long job")
            tab3 = await window.session_tabs.open(info.id, focus=True)
            tab3.composer.set_text("Run the long job")
            tab3.composer.submit()
            await until(
                lambda: (
                    window.mcp_person.wiring(tab3).built is not None
                    and "of 20" in window.mcp_person.wiring(tab3).bar.running_message.text()
                )
            )
            await until(lambda: "3 of 20" in window.mcp_person.wiring(tab3).bar.running_message.text())
            await both(window, window, "42-mcp-progress")
            tab3.stop()
            await until(lambda: not tab3.busy)

            # 4. Settings → MCP: the reference server running, with its log; the remote one
            server.enqueue(call("g1", "everything__toggle-simulated-logging", {}))
            info = await engine.sessions.new_session("Logging")
            tab4 = await window.session_tabs.open(info.id, focus=True)
            tab4.composer.set_text("Turn on logging")
            tab4.composer.submit()
            await until(lambda: not tab4.busy)
            await engine.tool_servers.start_selected(["linear/*"])  # in the background: it needs a sign in
            window.open_settings("mcp")
            dialog = window._settings_dialog
            await dialog.loaded
            dialog.resize(980, 760)
            dialog.mcp._fill_list(select="everything")
            details = dialog.mcp.server_details
            await until(lambda: "protocol" in details.facts.text() and "-level" in details.log.toPlainText())
            await pause(300)
            await both(dialog, window, "43-settings-mcp-details")
            dialog.mcp._fill_list(select="linear")
            await until(lambda: details.sign_row.isVisible())
            await pause(300)
            await both(dialog, window, "44-settings-mcp-sign-in")
            dialog.reject()

            # 5. a turn whose server needs a sign in: asked in the chat first
            await engine.agents.save_agent(
                AgentConfig(
                    "default",
                    "Default",
                    enabled_tools=("linear/*",),
                    approval_rules=(ApprovalRule("linear/*", Approval.ALLOW),),
                )
            )
            server.enqueue(call("w1", "linear__whoami", {}))
            info = await engine.sessions.new_session("Issues")
            tab5 = await window.session_tabs.open(info.id, focus=True)
            tab5.composer.set_text("What is assigned to me?")
            tab5.composer.submit()
            await until(lambda: window.mcp_person.wiring(tab5).asking)
            await pause(300)
            await both(window, window, "45-mcp-sign-in-in-chat")
            tab5.stop()
            await until(lambda: not tab5.busy)
            window.hide()
            await engine.aclose()
    return 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


if __name__ == "__main__":
    sys.exit(run(shoot_with_oauth))
