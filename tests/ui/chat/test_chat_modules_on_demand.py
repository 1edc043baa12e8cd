"""Opening a chat loads only what a chat shows; attachment readers, Qt's SVG module and the
slash commands load with the first attachment, formula or "/"; the file changes' dialogs
(and their diff highlighting) with the first one opened. Whatever a chat's opening
loads stays for the rest of the run (docs/performance.md, "Memory after a big chat is
opened and closed")."""

from __future__ import annotations

from pathlib import Path

from tests.support.fresh_python import run_fresh

CHECK = """
import sys
from pathlib import Path
from PySide6.QtWidgets import QApplication
app = QApplication([])
import threadline.ui.chat.chat_tab  # everything a chat tab is made of
rare = ("threadline.documents", "PySide6.QtSvg", "threadline.core.slash_commands",
        "threadline.engine.commands", "threadline.ui.chat.changes.changes_dialog",
        "threadline.ui.chat.changes.restore_dialog")
print("opened:", [m for m in rare if m in sys.modules])
from threadline.ui.chat.composer.attachment_tray import AttachmentTray
tray = AttachmentTray()
tray.add_paths([Path(sys.argv[1])])  # a small text file: read on the spot
print("attached:", [m for m in rare if m in sys.modules], [e.state.value for e in tray.entries()])
"""


def test_a_chat_loads_attachment_readers_svg_and_commands_only_when_asked(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nshort\n", encoding="utf-8")
    out = run_fresh(CHECK, str(notes))
    assert "opened: []" in out, out
    assert "attached: ['threadline.documents'] ['ready']" in out, out
