"""Screenshots of installing an MCP extension, for review: ``python .ci/screenshots_extensions.py [OUT]``.

Runs under Xvfb (started here when there is no display) with a temporary data folder and a
``.mcpb`` built from a manifest (``tests/support/mcp_bundles.py``). Saves PNGs of: the install
dialog (what the bundle is, the command it runs, its settings form; light and dark), the
dialog updating an installed version (light), and the dialog refusing a bundle that holds a
symbolic link (light and dark).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "desktop"))


def ensure_display() -> None:
    if os.environ.get("DISPLAY") or os.environ.get("QT_QPA_PLATFORM") == "offscreen":
        return
    if shutil.which("xvfb-run") is None:
        print("no display and no xvfb-run: install xvfb, or set QT_QPA_PLATFORM=offscreen", file=sys.stderr)
        sys.exit(2)
    args = ["xvfb-run", "-a", "-s", "-screen 0 1400x900x24 -dpi 96", sys.executable, *sys.argv]
    sys.exit(subprocess.call(args))


def main() -> int:
    ensure_display()
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build" / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    import keyring
    from keyring.backend import KeyringBackend

    class MemoryKeyring(KeyringBackend):
        priority = 1  # type: ignore[assignment]
        store: ClassVar[dict[tuple[str, str], str]] = {}

        def get_password(self, s: str, u: str) -> str | None:
            return self.store.get((s, u))

        def set_password(self, s: str, u: str, p: str) -> None:
            self.store[(s, u)] = p

        def delete_password(self, s: str, u: str) -> None:
            self.store.pop((s, u), None)

    keyring.set_keyring(MemoryKeyring())
    import qasync

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        return int(loop.run_until_complete(shoot(app, out)))


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
    sys.exit(main())
