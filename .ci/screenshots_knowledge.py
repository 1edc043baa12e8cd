"""Screenshots of Settings → Knowledge, for review: ``python .ci/screenshots_knowledge.py [OUT_DIR]``.

Runs under Xvfb (started here when there is no display) with a temporary data folder and a
folder of generated Markdown and text files (and two files that cannot be read). Saves PNGs
(by default to ``build/screenshots``) of the empty page, the Add dialog, a base while it is
indexed (with the status bar), and after (its totals and problems), light and dark.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from screenshot_run import run  # .ci/: the display, the app and its loop


def folder(root: Path, files: int) -> Path:
    root.mkdir(parents=True)
    for n in range(files):
        (root / f"chapter-{n:04}.md").write_text(
            f"# Chapter {n}\n\n" + "A paragraph of the handbook about pumps and valves. " * 60,
            encoding="utf-8",
        )
    (root / "scanned-invoice.pdf").write_bytes(b"%PDF-1.7\n not a PDF \x00\x01")
    (root / "empty-notes.txt").write_text("", encoding="utf-8")
    return root


async def shoot(app: Any, out: Path) -> int:
    from threadline.core.config import ProviderConfig, ProviderKind
    from threadline.core.knowledge import AttachScope
    from threadline.core.project import Project
    from threadline.engine.engine import Engine
    from threadline.ui.common.theme import ThemeChoice, ThemeManager
    from threadline.ui.window.main_window import MainWindow

    async def until(check: Any, seconds: float = 60) -> None:
        for _ in range(int(seconds * 50)):
            if check():
                return
            await asyncio.sleep(0.02)
        raise TimeoutError("screenshot state not reached")

    def save(widget: Any, name: str) -> None:
        path = out / f"{name}.png"
        widget.grab().save(str(path))
        print(path)

    async def both(widget: Any, window: Any, name: str) -> None:
        for choice in (ThemeChoice.LIGHT, ThemeChoice.DARK):
            window.set_theme(choice)
            await asyncio.sleep(0.3)
            save(widget, f"{name}-{choice.value}")
        window.set_theme(ThemeChoice.LIGHT)

    theme = ThemeManager(app)
    theme.set_choice(ThemeChoice.LIGHT)
    theme.apply()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        engine = await Engine.open(data)
        await engine.providers.save_provider(
            ProviderConfig("ollama", ProviderKind.OPENAI, base_url="http://127.0.0.1:9/v1")
        )
        window = MainWindow(theme, data)
        window.resize(1200, 800)
        window.show()
        await window.attach_engine(engine)
        window.open_settings("knowledge")
        dialog = window._settings_dialog
        await dialog.loaded
        page = dialog.knowledge
        await both(dialog, window, "knowledge-empty")

        small = folder(Path(tmp) / "Handbook", 40)
        big = folder(Path(tmp) / "Archive", 3000)
        await engine.projects.save_project(Project.create("Pump repairs"))
        await engine.knowledge.add("handbook", [small, Path(tmp) / "Archive" / "chapter-0001.md"])
        await engine.knowledge.add("archive", [big], embed_provider="ollama", embed_model="nomic-embed-text")
        project = (await engine.projects.list_projects())[0]
        await engine.knowledge.attach("handbook", AttachScope.PROJECT, project.id)
        await engine.knowledge.attach("handbook", AttachScope.SESSION, "some-chat")
        await page.load("handbook")
        page.add_base()
        editor = page.editor
        await editor.loaded
        editor.name.setText("handbook")
        editor.paths.addItems([str(small)])
        editor._update_save()
        await both(editor, window, "knowledge-add")
        editor.reject()

        page.index_now()
        await until(lambda: not page.jobs.running("handbook"))
        await asyncio.sleep(0.3)
        await both(dialog, window, "knowledge-indexed")

        await page.load("archive")
        page.index_now()
        await until(lambda: (p := page.jobs.progress("archive")) is not None and p.files_done > 300)
        save(dialog, "knowledge-indexing-light")
        save(window, "knowledge-status-bar-light")
        page.jobs.pause("archive")
        await until(lambda: not page.jobs.running("archive"))
        await asyncio.sleep(0.2)
        save(dialog, "knowledge-paused-light")
        dialog.close()
        window.hide()
        await engine.aclose()
    return 0


if __name__ == "__main__":
    sys.exit(run(shoot))
