"""Screenshots of installing an MCP extension, for review: ``python .ci/screenshots_extensions.py [OUT]``.

Runs under Xvfb (started here when there is no display) with a temporary data folder and a
``.mcpb`` built from a manifest (``tests/support/mcp_bundles.py``). Saves PNGs of: the install
dialog (what the bundle is, the command it runs, its settings form; light and dark), the
dialog updating an installed version (light), and the dialog refusing a bundle that holds a
symbolic link (light and dark).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from screenshot_run import run  # .ci/: the display, the app and its loop


async def shoot(app: Any, out: Path) -> int:
    from tests.support.mcp_bundles import hello_manifest, symlink_member, write_bundle

    from threadline.engine.engine import Engine
    from threadline.ui.common.theme import ThemeChoice, ThemeManager
    from threadline.ui.settings.extension_install_dialog import ExtensionInstallDialog
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

    theme = ThemeManager(app)
    theme.set_choice(ThemeChoice.LIGHT)
    theme.apply()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        engine = await Engine.open(data)
        window = MainWindow(theme, data)
        window.resize(1200, 780)
        window.show()
        await window.attach_engine(engine)

        def dialog() -> Any:
            return next((d for d in window.findChildren(ExtensionInstallDialog) if d.isVisible()), None)

        async def opened(path: Path, ready: Any) -> Any:
            window.extension_actions.install(path)
            await until(lambda: dialog() is not None and ready(dialog()))
            await pause(300)
            return dialog()

        first = write_bundle(Path(tmp) / "hello.mcpb")
        shown = await opened(first, lambda d: d.preview is not None)
        shown.form.set_value("api_key", "hk-0123456789")
        shown.form.set_value("notes", str(Path.home() / "notes"))
        await both(shown, window, "30-install-extension")
        shown.reject()

        await engine.extensions.install(first, {"api_key": "hk-0123456789", "greeting": "Ahoy"})
        newer = write_bundle(Path(tmp) / "hello-1.1.mcpb", hello_manifest(version="1.1.0"))
        shown = await opened(newer, lambda d: d.preview is not None)
        save(shown, "31-update-extension-light")
        shown.reject()

        bad = write_bundle(Path(tmp) / "linked.mcpb", extra=[symlink_member("server/link", "/etc/passwd")])
        shown = await opened(bad, lambda d: d.message.isVisible())
        await both(shown, window, "32-install-extension-refused")
        shown.reject()
        window.hide()
        await engine.aclose()
    return 0


if __name__ == "__main__":
    sys.exit(run(shoot))
