"""Will a model file fit this computer at a chosen context length? An estimate, said as one.

Need = the file (weights are loaded whole) + the KV cache for the context + a fixed margin
for the runtime's buffers. The KV cache is exact when the GGUF header is known (a
downloaded or imported file); for a file still on the Hub it is estimated from its size and
the bits per weight its quantisation name implies (docs/local-models.md, "Will it fit").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from threadline.models.machine import Machine

RUNTIME_MARGIN = 512 * 1024 * 1024
KV_BYTES_PER_TOKEN_PER_BILLION = 16 * 1024
"""K and V at 16 bits per token per billion parameters, typical of grouped-query models."""

_BITS = [
    (r"IQ1", 1.8),
    (r"IQ2|Q2_K", 2.8),
    (r"IQ3|Q3_K", 3.7),
    (r"IQ4|Q4", 4.8),
    (r"Q5", 5.6),
    (r"Q6", 6.6),
    (r"Q8", 8.5),
    (r"BF16|F16", 16.0),
    (r"F32", 32.0),
]


class Verdict(Enum):
    GPU = "fits in GPU memory"
    RAM = "fits in memory"
    TIGHT = "tight: close other apps"
    TOO_BIG = "too big for this computer"
    UNKNOWN = "memory unknown"


@dataclass(frozen=True)
class Fit:
    need_bytes: int
    verdict: Verdict
    estimated: bool
    """True when the KV cache was estimated from the file's size, not read from its header."""


def quant_of(filename: str) -> str | None:
    """The quantisation a file's name gives (``Q4_K_M``, ``IQ3_XS``, ``F16``…), if any."""
    m = re.search(r"(?i)(?<![A-Za-z0-9])(I?Q\d(?:_[A-Z0-9]+)*|B?F16|F32)(?![A-Za-z0-9])", filename)
    return m.group(1).upper() if m else None


def kv_per_token_estimate(size_bytes: int, filename: str) -> int:
    quant = quant_of(filename) or ""
    bits = next((b for pattern, b in _BITS if re.search(pattern, quant)), 4.8)
    billions = size_bytes * 8 / bits / 1e9
    return int(billions * KV_BYTES_PER_TOKEN_PER_BILLION)


def estimate(
    size_bytes: int,
    filename: str,
    context: int,
    machine: Machine,
    kv_per_token: int | None = None,
) -> Fit:
    """The memory a model needs at ``context`` tokens, and where it would fit."""
    estimated = kv_per_token is None
    per_token = kv_per_token if kv_per_token is not None else kv_per_token_estimate(size_bytes, filename)
    need = size_bytes + context * per_token + RUNTIME_MARGIN
    if machine.vram and need <= machine.vram:
        verdict = Verdict.GPU
    elif machine.total_ram is None:
        verdict = Verdict.UNKNOWN
    elif need <= (machine.available_ram or machine.total_ram):
        verdict = Verdict.RAM
    elif need <= machine.total_ram:
        verdict = Verdict.TIGHT
    else:
        verdict = Verdict.TOO_BIG
    return Fit(need, verdict, estimated)


def human_size(n: int | float) -> str:
    """Bytes as people read them: 812 KB, 4.1 GB (powers of 1000, as disks are sold)."""
    value = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{value:.0f} {unit}" if unit in ("B", "KB") else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} TB"
