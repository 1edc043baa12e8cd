"""``threadline --self-test`` fails, with one line, on a damaged database and passes on a healthy one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.unit.store.test_store_integrity import damage_a_messages_page, write_database

REPO = Path(__file__).resolve().parents[3]


def self_test(data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "desktop"), "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run(
        [sys.executable, "-m", "threadline", "--self-test", "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


@pytest.mark.asyncio
async def test_self_test_fails_on_a_damaged_page_and_passes_when_healthy(tmp_path: Path) -> None:
    healthy, damaged = tmp_path / "healthy", tmp_path / "damaged"
    await write_database(healthy / "threadline.db")
    await write_database(damaged / "threadline.db")
    damage_a_messages_page(damaged / "threadline.db")

    good = self_test(healthy)
    assert good.returncode == 0, good.stderr
    assert "self-test OK" in good.stdout

    bad = self_test(damaged)
    assert bad.returncode != 0
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1, bad.stderr
    assert lines[0].startswith("threadline self-test FAILED while checking the database:")
    assert "damaged" in lines[0]
