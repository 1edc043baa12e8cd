"""Screenshots of Settings → Providers with the built-in "On this computer" selected, for review:
``python .ci/screenshots_builtin_provider.py [OUT_DIR]``.

Runs under Xvfb (started here when there is no display) with a temporary data folder holding
a tiny GGUF model, so the built-in provider is listed beside a stored one. Saves PNGs (by
default to ``build/screenshots``), light and dark.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from screenshot_run import run  # .ci/: the display, the app and its loop


async def shoot(app: Any, out: Path) -> int:
    from tests.support.tiny_gguf import make_tiny_gguf

    from threadline.core.config import ProviderConfig, ProviderKind
    from threadline.engine.engine import Engine
    from threadline.ui.common.theme import ThemeChoice, ThemeManager
    from threadline.ui.window.main_window import MainWindow

    async def until(check: Any, seconds: float = 30) -> None:
        for _ in range(int(seconds * 20)):
            if check():
                return
            await asyncio.sleep(0.05)
        raise TimeoutError("screenshot state not reached")

    theme = ThemeManager(app)
    theme.set_choice(ThemeChoice.LIGHT)
    theme.apply()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        engine = await Engine.open(data)
        await engine.models.import_file(make_tiny_gguf(Path(tmp) / "tiny-llama.Q4_0.gguf"))
        await engine.providers.save_provider(
            ProviderConfig("ollama", ProviderKind.OPENAI, base_url="http://127.0.0.1:11434/v1")
        )
        window = MainWindow(theme, data)
        window.resize(1200, 800)
        window.show()
        await window.attach_engine(engine)
        for choice in (ThemeChoice.LIGHT, ThemeChoice.DARK):
            window.set_theme(choice)
            window.open_settings("On this computer")
            dialog = window._settings_dialog
            panel = dialog.providers.builtin
            await until(lambda panel=panel: panel.isVisible() and "loaded" in panel.state.text())
            await asyncio.sleep(0.3)
            path = out / f"settings-builtin-provider-{choice.value}.png"
            dialog.grab().save(str(path))
            print(path)
            dialog.reject()
        window.hide()
        await engine.aclose()
    return 0


if __name__ == "__main__":
    sys.exit(run(shoot))
