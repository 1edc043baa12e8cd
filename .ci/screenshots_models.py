"""Screenshots of the Models page, for review: ``python .ci/screenshots_models.py [OUT_DIR]``.

Runs under Xvfb (started here when there is no display) with a temporary data folder and a
fake Hub on 127.0.0.1 (``tests/support/fake_hub.py``) holding a tiny GGUF model. Saves PNGs
(by default to ``build/screenshots``) of the Models page as it first opens (light and dark),
its runtime log, a search that found nothing, then with a search, a model's files with their
fit, a paused download and a downloaded model (light and dark), and of a download that the
disk being full paused (its message).
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
    from tests.support.fake_hub import FILE, REPO, point_at, running_hub
    from tests.support.tiny_gguf import make_tiny_gguf

    from threadline.engine.engine import Engine
    from threadline.models.download import State
    from threadline.models.fit import human_size
    from threadline.ui.common.theme import ThemeChoice, ThemeManager
    from threadline.ui.window.main_window import MainWindow

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
        window.set_theme(ThemeChoice.LIGHT)
        await asyncio.sleep(0.3)
        save(widget, f"{name}-light")
        window.set_theme(ThemeChoice.DARK)
        await asyncio.sleep(0.3)
        save(widget, f"{name}-dark")
        window.set_theme(ThemeChoice.LIGHT)

    theme = ThemeManager(app)
    theme.set_choice(ThemeChoice.LIGHT)
    theme.apply()
    with tempfile.TemporaryDirectory() as tmp, running_hub() as hub:
        model = make_tiny_gguf(Path(tmp) / FILE).read_bytes()
        hub.add(REPO, FILE, model, downloads=48_210)
        hub.add(REPO, "tiny-llama.Q4_K_M.gguf", model[:-3] + b"abc", downloads=48_210)
        hub.add(REPO, "tiny-llama.F16.gguf", model[:-3] + b"xyz", downloads=48_210)
        hub.add("tiny/Tiny-Coder-GGUF", "tiny-coder.Q5_K_M.gguf", model, downloads=1_204)
        data = Path(tmp) / "data"
        point_at(data, hub)
        engine = await Engine.open(data)
        await engine.models.import_file(make_tiny_gguf(Path(tmp) / "my-own-model.Q4_0.gguf", seed=2))
        window = MainWindow(theme, data)
        window.resize(1200, 800)
        window.show()
        await window.attach_engine(engine)
        window.menus.build()
        window.menus.act_models.trigger()
        page = window.models_page
        page.resize(1100, 820)
        await until(lambda: page.installed.loaded >= 1)
        await both(page, window, "models-page-first-open")
        page.runtime.open_log()
        await asyncio.sleep(0.2)
        save(page.runtime.log_dialog, "models-runtime-log-light")
        page.runtime.log_dialog.close()
        page.search.box.setText("nothing-like-this")
        page.search.search()
        await until(lambda: page.search.button.isEnabled())
        save(page, "models-page-no-match-light")
        page.search.box.setText("tiny")
        page.search.search()
        await until(lambda: page.search.results.count() == 2)
        page.search.results.setCurrentRow(0)
        await until(lambda: page.quants.tree.topLevelItemCount() == 3)
        hub.hold_after = 180_000
        page.quants.tree.setCurrentItem(page.quants.tree.topLevelItem(2))
        page.quants.download.click()
        await until(lambda: any(j.done > 150_000 for j in engine.models.downloads()))
        (job,) = engine.models.downloads()
        engine.models.pause(job.id)
        await until(lambda: job.state is State.PAUSED)
        page.quants.tree.setCurrentItem(page.quants.tree.topLevelItem(0))
        page.setFocus(Qt.FocusReason.OtherFocusReason)
        await both(page, window, "models-page")
        job.message = (  # the words of models/queue.py for a full disk, on the paused job
            f"The disk is full: the download of {FILE} is paused, {human_size(job.done)} kept. "
            "Free some space, then press Resume."
        )
        page._job_changed(job)
        await asyncio.sleep(0.2)
        save(page, "models-page-disk-full-light")
        engine.models.cancel(job.id)
        page.close()
        window.hide()
        await engine.aclose()
    return 0


if __name__ == "__main__":
    sys.exit(run(shoot))
