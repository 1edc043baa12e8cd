"""``threadline list`` in a real subprocess over a generated database (what a script sees)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.support.cli_process import threadline
from tests.ui.sessions.generated_sessions import Generated, generate, oldest_title

COUNT = 1200
"""More than the default 50 and than one page of ``--all`` (500)."""


def _list(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return threadline(data_dir, "list", *args, env={"PYTHONIOENCODING": "utf-8"})


def test_list_json_all_query_and_text(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    generate(data_dir, COUNT)

    recent = _list(data_dir, "--json")
    assert recent.returncode == 0, recent.stderr
    rows: list[dict[str, Any]] = json.loads(recent.stdout)
    assert [r["id"] for r in rows] == [Generated.session_id(i) for i in range(50)]
    assert set(rows[0]) == {"id", "title", "created", "updated", "provider", "model", "pinned", "archived"}

    everything = _list(data_dir, "--all", "--json")
    assert everything.returncode == 0, everything.stderr
    assert [r["id"] for r in json.loads(everything.stdout)] == [Generated.session_id(i) for i in range(COUNT)]

    found = _list(data_dir, "--query", "zeppelin voyage", "--json")
    assert found.returncode == 0, found.stderr
    assert [(r["id"], r["title"]) for r in json.loads(found.stdout)] == [
        (Generated.session_id(COUNT - 1), oldest_title(COUNT))
    ]

    assert json.loads(_list(data_dir, "--archived", "--json").stdout) == []
    text = _list(data_dir)
    assert text.returncode == 0 and text.stdout.splitlines()[0].startswith(Generated.session_id(0) + "  ")
    assert text.stdout.splitlines()[0].endswith(Generated.title(0))
