"""Run a script in a fresh Python interpreter: what a start or a first use loads is only
visible in a process that has imported nothing yet (a test's own process has imported
everything the suite touched)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_fresh(script: str, *args: str) -> str:
    """``script`` run by ``python -c`` with ``args``, offscreen, importing this checkout's
    package; its standard output. The test fails with the script's errors if it fails."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": f"{ROOT}:{ROOT / 'desktop'}"}
    result = subprocess.run(
        [sys.executable, "-c", script, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout
