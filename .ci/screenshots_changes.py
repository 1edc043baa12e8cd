"""Screenshots of what the tools changed on disk, for review: ``python .ci/screenshots_changes.py [OUT]``.

Runs under Xvfb (started here when there is no display; needs the ``xvfb`` package). Saves
PNGs, light and dark, of: a reply header with its "+12 −3 in 2 files" (and hovered), the
turn's changes dialog on a modified Python file, on a binary file and on a rename, the
restore preview with conflicts (one ticked), and the status line's session totals with
their popup. The widgets are fed the sample changes of ``tests/support/file_change_samples``
(real difflib diffs). Then the real window after a real turn (the replay server as the model,
``write_file`` and ``shell`` writing in a temporary folder): the reply with its counts,
hovered, and the changes dialog with the engine's diff, light and dark (``c10``–``c12``);
the undo's preview and the bar saying what the restore did, with "Undo restore" (``c13``,
``c14``, light).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from screenshot_run import run  # .ci/: the display, the app and its loop


def settle(ms: int = 250) -> None:
    from PySide6.QtWidgets import QApplication

    end = time.monotonic() + ms / 1000
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.01)


async def shoot_all(app: Any, out: Path) -> int:
    """The parts on their own in each theme, then the real window after a real turn (the
    replay server as the model, ``write_file`` and ``shell`` writing in a folder): the reply
    header's counts, hovered, the changes dialog with the engine's diff, and the status bar's
    totals, light and dark."""
    from threadline.ui.common.theme import ThemeChoice, ThemeManager

    theme = ThemeManager(app)
    for choice in (ThemeChoice.LIGHT, ThemeChoice.DARK, ThemeChoice.HIGH_CONTRAST):
        theme.set_choice(choice)
        theme.apply()
        shoot(app, theme.colors, out, choice.value)
    await window_scene(theme, out)
    return 0


WINDOW_SOURCE = (
    "class Cache:\n    def __init__(self, size):\n        self.size = size\n        self.data = {}\n\n"
    "    def get(self, key):\n        return self.data.get(key)\n"
)
WINDOW_EDIT = (
    "from collections import OrderedDict\n\n\nclass Cache:\n    def __init__(self, size: int) -> None:\n"
    "        self.size = size\n        self.data: OrderedDict[str, bytes] = OrderedDict()\n\n"
    "    def get(self, key: str) -> bytes | None:\n        if key in self.data:\n"
    "            self.data.move_to_end(key)\n        return self.data.get(key)\n"
)


async def window_scene(theme: Any, out: Path) -> None:
    import asyncio
    import tempfile

    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest
    from tests.support.sse_server import (
        ReplayServer,
        openai_text_stream,
        openai_tool_call_stream,
        sse_response,
    )

    from threadline.core.config import AgentConfig, Approval, ApprovalRule, ProviderConfig, ProviderKind
    from threadline.engine.engine import Engine
    from threadline.ui.chat.changes.header_counts import CHANGES_ACTION
    from threadline.ui.common.theme import ThemeChoice
    from threadline.ui.window.main_window import MainWindow

    async def until(condition: Any) -> None:
        for _ in range(600):
            if condition():
                return
            await asyncio.sleep(0.05)
        raise TimeoutError("the window did not get there")

    def save(widget: Any, name: str) -> None:
        path = out / f"{name}.png"
        widget.grab().save(str(path))
        print(path)

    theme.set_choice(ThemeChoice.LIGHT)
    theme.apply()
    with tempfile.TemporaryDirectory() as tmp, ReplayServer() as server:
        data, work = Path(tmp) / "data", Path(tmp) / "project"
        work.mkdir()
        (work / "cache.py").write_text(WINDOW_SOURCE)
        (work / "old_notes.txt").write_text("to be removed\n")
        engine = await Engine.open(data)
        replay = ProviderConfig(
            "replay", ProviderKind.OPENAI, base_url=server.openai_base_url, default_model="gpt-4o-mini"
        )
        await engine.providers.save_provider(replay, "sk-test")
        await engine.agents.save_agent(
            AgentConfig(
                "default",
                "Default",
                enabled_tools=("write_file", "shell"),
                allowed_folders=(str(work),),
                approval_rules=(
                    ApprovalRule("write_file", Approval.ALLOW),
                    ApprovalRule("shell", Approval.ALLOW),
                ),
            )
        )
        server.enqueue(
            sse_response(
                openai_tool_call_stream(
                    [
                        ("c1", "write_file", {"path": "cache.py", "content": WINDOW_EDIT}),
                        ("c2", "shell", {"command": "rm old_notes.txt && printf '# Cache\\n' > README.md"}),
                    ],
                    text_pieces=["I'll make the cache an LRU cache."],
                )
            ),
            sse_response(openai_text_stream(["Done: `Cache` now evicts the least recently used entry."])),
        )
        window = MainWindow(theme, data)
        window.resize(1200, 780)
        window.show()
        await window.attach_engine(engine)
        info = await engine.sessions.new_session()
        tab = await window.session_tabs.open(info.id, focus=True)
        tab.composer.set_text("Make the cache an LRU cache and drop the old notes")
        tab.composer.submit()
        await until(lambda: tab.live.conversation.ready_for_input and len(tab.live.conversation.path()) >= 4)
        reply = tab.live.conversation.path()[-1].id
        await until(lambda: reply in tab.view.change_counts)
        await asyncio.sleep(0.4)
        for choice in (ThemeChoice.LIGHT, ThemeChoice.DARK):
            window.set_theme(choice)
            await asyncio.sleep(0.4)
            save(window, f"c10-window-reply-changes-{choice.value}")
            rect = tab.view.action_rect(reply, CHANGES_ACTION)
            QTest.mouseMove(tab.view.viewport(), rect.center())
            await asyncio.sleep(0.3)
            save(window, f"c11-window-counts-hovered-{choice.value}")
            QTest.mouseClick(tab.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
            await until(lambda: tab.file_changes.dialog is not None and tab.file_changes.dialog.isVisible())
            dialog = tab.file_changes.dialog
            await until(lambda d=dialog: d.pane.stack.currentWidget() is d.pane.view)
            await asyncio.sleep(0.3)
            save(dialog, f"c12-window-changes-dialog-{choice.value}")
            dialog.accept()
            tab.file_changes.dialog = None
            QTest.mouseMove(tab.view.viewport(), rect.center() + QPoint(0, 200))
            await asyncio.sleep(0.2)
        window.set_theme(ThemeChoice.LIGHT)
        await asyncio.sleep(0.3)
        await undo_scene(window, tab, reply, work, save, until)
        window.hide()
        await engine.aclose()


async def undo_scene(window: Any, tab: Any, reply: str, work: Path, save: Any, until: Any) -> None:
    """Undo the turn's changes from its dialog: the preview, then the bar with "Undo restore"."""
    import asyncio

    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    wiring = tab.file_changes
    wiring.open_turn(reply)
    await until(lambda: wiring.dialog is not None and wiring.dialog.isVisible())
    QTest.mouseClick(wiring.dialog.undo_button, Qt.MouseButton.LeftButton)
    await until(lambda: wiring.preview is not None and wiring.preview.isVisible())
    await asyncio.sleep(0.3)
    save(wiring.preview, "c13-window-undo-preview-light")
    QTest.mouseClick(wiring.preview.restore_button, Qt.MouseButton.LeftButton)
    await until(lambda: wiring.notice.isVisible())
    await asyncio.sleep(0.3)
    save(window, "c14-window-restored-notice-light")
    assert not (work / "README.md").exists()


class ReplyHeader:
    """A reply's header as the chat view paints it, with the counts after the time."""

    @staticmethod
    def make(colors: Any, counts: Any, hovered: bool) -> Any:
        from PySide6.QtCore import QRect, Qt
        from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter
        from PySide6.QtWidgets import QWidget

        from threadline.ui.chat.changes.header_counts import paint_counts

        class Header(QWidget):
            def paintEvent(self, _event: object) -> None:
                c = colors
                p = QPainter(self)
                p.fillRect(self.rect(), QColor(c.base))
                small = QFont(self.font())
                small.setPointSizeF(self.font().pointSizeF() * 0.88)
                bold = QFont(small)
                bold.setWeight(QFont.Weight.DemiBold)
                fm_bold, fm_small = QFontMetrics(bold), QFontMetrics(small)
                h = fm_bold.height() + 2
                x, y = 24, 16
                p.setFont(bold)
                p.setPen(QColor(c.text))
                p.drawText(QRect(x, y, 200, h), Qt.AlignmentFlag.AlignVCenter, "Assistant")
                x += fm_bold.horizontalAdvance("Assistant") + 10
                p.setFont(small)
                p.setPen(QColor(c.muted))
                p.drawText(QRect(x, y, 200, h), Qt.AlignmentFlag.AlignVCenter, "14:02")
                x += fm_small.horizontalAdvance("14:02") + 10
                rect = paint_counts(p, fm_small, c, x, y, h, counts, hovered=hovered)
                x = int(rect.right()) + 10
                p.setPen(QColor(c.muted))
                p.drawText(
                    QRect(x, y, 400, h), Qt.AlignmentFlag.AlignVCenter, "gpt-4o-mini · 1.2k tokens · $0.002"
                )
                p.setFont(self.font())
                p.setPen(QColor(c.text))
                p.drawText(
                    QRect(24, y + h + 8, self.width() - 48, 60),
                    Qt.TextFlag.TextWordWrap,
                    "I turned the cache into an LRU cache, added type hints, exported it from a new "
                    "package and updated the README.",
                )
                p.end()

        return Header()


def shoot(app: Any, colors: Any, out: Path, theme: str) -> None:
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QLabel, QMainWindow, QWidget
    from tests.support.file_change_samples import ROOT as PROJECT
    from tests.support.file_change_samples import sample_diff, sample_plan, sample_totals, sample_turn

    from threadline.ui.chat.changes.changes_dialog import TurnChangesDialog
    from threadline.ui.chat.changes.header_counts import header_counts
    from threadline.ui.chat.changes.restore_dialog import RestorePreviewDialog
    from threadline.ui.chat.changes.session_totals import SessionTotalsButton

    def save(widget: Any, name: str) -> None:
        path = out / f"{name}-{theme}.png"
        widget.grab().save(str(path))
        print(path)

    def save_screen(widget: Any, extra: Any, name: str) -> None:
        """A window and its popup as the screen shows them (a grab leaves popups out)."""
        top_left = widget.mapToGlobal(QPoint(0, 0))
        top = min(top_left.y(), extra.mapToGlobal(QPoint(0, 0)).y())
        height = top_left.y() + widget.height() - top
        screen = QGuiApplication.primaryScreen()
        shot = screen.grabWindow(0, top_left.x(), top, widget.width(), height)
        path = out / f"{name}-{theme}.png"
        shot.save(str(path))
        print(path)

    turn = sample_turn()
    counts = header_counts(turn, PROJECT)
    for hovered in (False, True):
        header = ReplyHeader.make(colors, counts, hovered)
        header.resize(720, 90)
        header.show()
        settle()
        save(header, "c01-header-counts-hover" if hovered else "c01-header-counts")
        header.close()

    dialog = TurnChangesDialog(turn, colors, root=PROJECT)
    dialog.diffRequested.connect(lambda change: dialog.show_diff(sample_diff(change)))
    dialog.show()
    settle(400)
    save(dialog, "c02-changes-dialog")
    for row, name in ((5, "c03-changes-binary"), (4, "c04-changes-rename"), (6, "c05-changes-odd-name")):
        dialog.files.setCurrentRow(row)
        settle()
        save(dialog, name)
    dialog.close()

    preview = RestorePreviewDialog(sample_plan(), colors, root=PROJECT)
    preview.show()
    settle(300)
    save(preview, "c06-restore-preview")
    next(iter(preview.checks.values())).setChecked(True)
    settle()
    save(preview, "c07-restore-preview-ticked")
    preview.close()

    window = QMainWindow()
    window.setCentralWidget(QWidget())
    window.resize(820, 360)
    status = QLabel("gpt-4o-mini (replay)")
    window.statusBar().addWidget(status, 1)
    window.statusBar().setSizeGripEnabled(False)
    totals = SessionTotalsButton(colors, PROJECT)
    window.statusBar().addPermanentWidget(totals)
    totals.set_totals(sample_totals())
    window.show()
    settle(300)
    save(window, "c08-status-totals")
    totals.show_popup()
    settle(400)
    save_screen(window, totals.popup, "c09-status-totals-popup")
    totals.popup.close()
    window.close()


if __name__ == "__main__":
    sys.exit(run(shoot_all))
