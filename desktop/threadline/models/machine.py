"""What this computer has for a model: memory, and video memory where a GPU can be found.

Only what can be read without extra packages is claimed (docs/local-models.md, "Will it
fit"): RAM from ``/proc/meminfo`` or ``sysconf``; an NVIDIA card's memory from
``nvidia-smi`` when it is on the PATH; an AMD card's from the kernel's
``mem_info_vram_total``. Anything else is "no GPU found", said as such, never guessed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Gpu:
    name: str
    vram_bytes: int


@dataclass(frozen=True)
class Machine:
    total_ram: int | None
    available_ram: int | None
    gpus: tuple[Gpu, ...] = field(default_factory=tuple)

    @property
    def vram(self) -> int:
        """The largest card's memory (llama.cpp splits layers, but one card is the safe figure)."""
        return max((g.vram_bytes for g in self.gpus), default=0)


def _meminfo(path: Path = Path("/proc/meminfo")) -> tuple[int | None, int | None]:
    try:
        text = path.read_text()
    except OSError:
        return None, None
    found: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            found[key] = int(parts[0]) * 1024
    return found.get("MemTotal"), found.get("MemAvailable")


def _sysconf_ram() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def _nvidia() -> list[Gpu]:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    try:
        out = subprocess.run(
            [exe, "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    gpus = []
    for line in out.splitlines():
        name, _, mib = line.rpartition(",")
        if mib.strip().isdigit():
            gpus.append(Gpu(name.strip() or "NVIDIA GPU", int(mib.strip()) * 1024 * 1024))
    return gpus


def _amd(drm: Path = Path("/sys/class/drm")) -> list[Gpu]:
    gpus = []
    for total in sorted(drm.glob("card*/device/mem_info_vram_total")):
        try:
            size = int(total.read_text().strip())
        except (OSError, ValueError):
            continue
        if size > 0:
            gpus.append(Gpu(f"AMD GPU ({total.parent.parent.name})", size))
    return gpus


def detect() -> Machine:
    """This computer now (RAM available changes; call again before a decision)."""
    total, available = _meminfo()
    if total is None:
        total = _sysconf_ram()
    return Machine(total, available, tuple(_nvidia() or _amd()))
