"""A 2 MB zip bomb through the real import paths: the engine, and `threadline import` as a process.

The reader used to keep what it inflated until the ratio limit stopped it: such a file
cost hundreds of megabytes and over a minute. Time is not asserted (the machine may be
busy); peak memory is, and printed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from tests.support.peak_memory import MB, Finished, run_measured, traced_peak_async
from tests.support.zip_bombs import write_zip_bomb

from threadline.engine.engine import Engine

GB = 1024 * MB
SMALL = 64 * MB
"""Peak memory a refusal may take beyond a run that reads nothing."""
ENV = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}


@pytest.mark.asyncio
async def test_the_engine_refuses_a_bomb_in_small_memory(tmp_path: Path) -> None:
    bomb = write_zip_bomb(tmp_path / "bomb.zip", inflated=2 * GB, prefix=b'[{"title": "')
    engine = await Engine.open(tmp_path / "data")
    try:
        report, peak = await traced_peak_async(lambda: engine.library.import_file(bomb))
    finally:
        await engine.aclose()
    print(f"peak {peak / MB:.1f} MB")
    assert (report.imported, report.updated, report.skipped) == (0, 0, 0)
    assert any("zip bomb" in problem.reason for problem in report.failed), report.failed
    assert peak < SMALL


@pytest.mark.skipif(not hasattr(os, "wait4"), reason="a child's own peak memory needs os.wait4 (POSIX)")
@pytest.mark.parametrize("prefix", [b"", b'[{"title": "'], ids=["zeros", "json-then-zeros"])
def test_threadline_import_refuses_a_bomb_in_small_memory(tmp_path: Path, prefix: bytes) -> None:
    bomb = write_zip_bomb(tmp_path / "bomb.zip", inflated=2 * GB, prefix=prefix)
    notes = tmp_path / "notes.txt"
    notes.write_text("not an export")

    def threadline_import(name: str, path: Path) -> Finished:
        args = [sys.executable, "-m", "threadline", "--data-dir", str(tmp_path / name), "import", str(path)]
        return run_measured(args, tmp_path / f"{name}-output", env=ENV)

    baseline = threadline_import("baseline", notes)
    refused = threadline_import("bomb", bomb)
    print(f"peak resident {refused.max_rss / MB:.0f} MB; reading nothing {baseline.max_rss / MB:.0f} MB")
    assert baseline.returncode == 1 and "It is not JSON" in baseline.stdout, baseline.stderr
    assert refused.returncode == 1, refused.stderr
    assert refused.stdout.startswith("imported 0, updated 0, skipped 0 (unchanged), failed ")
    assert "failed: " in refused.stdout
    assert refused.max_rss - baseline.max_rss < SMALL
