"""Threadline's file types: the shared-mime-info XML builds, and a desktop finds the types by it.

``update-mime-database`` builds a database from ``resources/threadline-mime.xml`` in a
temporary folder; Qt's ``QMimeDatabase`` (which reads the same database a file manager does)
then names a Threadline export (``*.threadline.json``) and a bundle by their suffixes, in a fresh
process whose ``XDG_DATA_DIRS`` starts with that folder. The desktop entry lists them and the
``threadline`` scheme (docs/desktop.md, "Files and links").
"""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MIME_XML = ROOT / "resources" / "threadline-mime.xml"
DESKTOP = ROOT / "resources" / "threadline.desktop"

WHICH = """
import sys
from PySide6.QtCore import QMimeDatabase
db = QMimeDatabase()
for path in sys.argv[1:]:
    print(db.mimeTypeForFile(path).name())
"""


def test_the_entry_opens_links_and_files_with_their_words() -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(DESKTOP, encoding="utf-8")
    entry = parser["Desktop Entry"]
    assert entry["Exec"] == "threadline %U"
    types = entry["MimeType"].rstrip(";").split(";")
    assert {
        "x-scheme-handler/threadline",
        "application/x-threadline-chats+json",
        "application/x-mcpb",
    } <= set(types)
    assert parser["Desktop Action quick-ask"]["Exec"] == "threadline --quick-ask"


@pytest.mark.skipif(shutil.which("update-mime-database") is None, reason="shared-mime-info not installed")
def test_a_desktop_names_an_export_and_a_bundle_by_the_xml(tmp_path: Path) -> None:
    mime = tmp_path / "share" / "mime"
    (mime / "packages").mkdir(parents=True)
    shutil.copy2(MIME_XML, mime / "packages" / "threadline.xml")
    subprocess.run(["update-mime-database", str(mime)], check=True, capture_output=True, timeout=60)
    export = tmp_path / "chats.threadline.json"
    export.write_text('{"format": "threadline", "version": 1, "sessions": []}', encoding="utf-8")
    other = tmp_path / "other.json"
    other.write_text('{"format": "someone else"}', encoding="utf-8")
    bundle = tmp_path / "notes.mcpb"
    bundle.write_bytes(b"PK\x05\x06" + bytes(18))
    env = {
        **os.environ,
        "XDG_DATA_DIRS": f"{tmp_path / 'share'}:{os.environ.get('XDG_DATA_DIRS', '/usr/share')}",
    }
    env["XDG_DATA_HOME"] = str(tmp_path / "home-share")
    done = subprocess.run(
        [sys.executable, "-c", WHICH, str(export), str(other), str(bundle)],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    assert done.stdout.split() == [
        "application/x-threadline-chats+json",
        "application/json",
        "application/x-mcpb",
    ]
