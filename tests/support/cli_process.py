"""The ``threadline`` command run as a process of its own, as a script or a person runs it.

Tests that exercise the CLI end to end (argument parsing, the engine, the store, exit codes)
run ``python -m threadline`` with the ``fail`` keychain, as on a headless Linux without a
Secret Service, and read its output once it has finished.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ENV = {
    **os.environ,
    "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    "PYTHONUNBUFFERED": "1",
}


def threadline(
    data_dir: Path,
    *args: str,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``threadline --data-dir DATA_DIR ARGS…`` to its end; ``env`` adds to (or overrides) ``ENV``."""
    return subprocess.run(
        [sys.executable, "-m", "threadline", "--data-dir", str(data_dir), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**ENV, **(env or {})},
        timeout=timeout,
    )
