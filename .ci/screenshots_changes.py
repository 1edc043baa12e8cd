"""Screenshots of what the tools changed on disk, for review: ``python .ci/screenshots_changes.py [OUT]``.

Runs under Xvfb (started here when there is no display; needs the ``xvfb`` package). Saves
PNGs, light and dark, of: a reply header with its "+12 −3 in 2 files" (and hovered), the
turn's changes dialog on a modified Python file, on a binary file and on a rename, the
restore preview with conflicts (one ticked), and the status line's session totals with
their popup. The widgets are fed the sample changes of ``tests/support/file_change_samples``
(real difflib diffs), as the engine's workspace facet will feed them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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


def settle(ms: int = 250) -> None:
    from PySide6.QtWidgets import QApplication

    end = time.monotonic() + ms / 1000
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.01)


def main() -> int:
    ensure_display()
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build" / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    from PySide6.QtWidgets import QApplication

    import threadline.ui  # noqa: F401  (first, as the app: tames PySide6's import hook)

    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    from threadline.ui.common.theme import ThemeChoice, ThemeManager

    theme = ThemeManager(app)
    for choice in (ThemeChoice.LIGHT, ThemeChoice.DARK, ThemeChoice.HIGH_CONTRAST):
        theme.set_choice(choice)
        theme.apply()
        shoot(app, theme.colors, out, choice.value)
    return 0


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
    sys.exit(main())
