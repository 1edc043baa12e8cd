"""``threadline --self-test`` passes on a fresh data dir, writes only there, and fails in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from threadline import __version__


def _run(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}
    env.pop("THREADLINE_DATA_DIR", None)
    env.pop("XDG_DATA_HOME", None)
    return subprocess.run(
        [sys.executable, "-m", "threadline", *args], capture_output=True, text=True, env=env, timeout=90
    )


def test_self_test_passes_and_writes_only_to_the_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "data"
    home = tmp_path / "home"
    home.mkdir()
    result = _run("--data-dir", str(data), "--self-test", home=home)
    assert result.returncode == 0, result.stderr
    line = result.stdout.strip().splitlines()[-1]
    assert line.startswith(f"threadline {__version__} self-test OK")
    assert str(data) in line
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert written and all(p.parts[0] == "data" for p in written), written


def test_self_test_failure_is_one_line_on_stderr(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the data dir should be")
    result = _run("--data-dir", str(blocker / "data"), "--self-test", home=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("threadline self-test FAILED while ")
