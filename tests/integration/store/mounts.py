"""A small tmpfs for tests that need a full or read-only disk (root and ``mount`` required)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def small_tmpfs(where: Path, size: str = "4m") -> Iterator[Path]:
    """Mount a ``size`` tmpfs at ``where`` for the block, or skip the test saying why it cannot."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount = shutil.which("mount")
    if mount is None:
        pytest.skip("the mount command is not available")
    where.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [mount, "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip() or result.returncode}")
    try:
        yield where
    finally:
        subprocess.run([mount, "-o", "remount,rw", str(where)], capture_output=True, check=False)
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def remount(where: Path, mode: str) -> None:
    """Remount the tmpfs at ``where`` ``ro`` or ``rw``."""
    subprocess.run(["mount", "-o", f"remount,{mode}", str(where)], capture_output=True, check=True)


def fill(disk: Path) -> Path:
    """Write zeros into ``disk`` until it is full; returns the filler file (delete it to free space)."""
    filler = disk / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (65536, 4096, 512, 1):  # big chunks, then smaller ones into the last gap
            chunk = b"\0" * size
            try:
                while True:
                    os.write(descriptor, chunk)
            except OSError:
                continue
    finally:
        os.close(descriptor)
    return filler
