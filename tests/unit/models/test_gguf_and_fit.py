"""GGUF headers read with ``gguf`` (a tiny llama made here), files that are not GGUF refused by
name, and the fit estimate's arithmetic and verdicts."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from tests.support.tiny_gguf import CHAT_TEMPLATE, make_tiny_gguf

from threadline.models.errors import NotGgufError
from threadline.models.fit import RUNTIME_MARGIN, Verdict, estimate, human_size, quant_of
from threadline.models.gguf_info import read_info
from threadline.models.machine import Gpu, Machine, _meminfo

GB = 1_000_000_000


def test_the_header_gives_what_the_runtime_and_the_fit_need(tmp_path: Path) -> None:
    info = read_info(make_tiny_gguf(tmp_path / "tiny.gguf", context=2048))
    assert (info.version, info.architecture, info.name) == (3, "llama", "tiny-llama")
    assert info.context_length == 2048 and info.chat_template == CHAT_TEMPLATE
    assert (info.block_count, info.embedding_length, info.head_count, info.head_count_kv) == (2, 64, 4, 2)
    assert info.kv_bytes_per_token() == 2 * 2 * 2 * 16 * 2  # K and V, 2 layers, 2 KV heads of 16, f16


def test_files_that_are_not_gguf_are_refused_naming_them(tmp_path: Path) -> None:
    text = tmp_path / "notes.gguf"
    text.write_text("hello")
    with pytest.raises(NotGgufError, match=r"^notes.gguf is not a GGUF model file"):
        read_info(text)
    future = tmp_path / "future.gguf"
    future.write_bytes(b"GGUF" + struct.pack("<I", 9) + b"\0" * 32)
    with pytest.raises(NotGgufError, match=r"^future.gguf is GGUF version 9, which Threadline cannot read"):
        read_info(future)
    whole = make_tiny_gguf(tmp_path / "whole.gguf").read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(whole[:200])
    with pytest.raises(NotGgufError, match=r"^cut.gguf is damaged: its GGUF header could not be read"):
        read_info(cut)


def test_quantisation_names() -> None:
    assert quant_of("qwen2.5-7b-instruct-q4_k_m.gguf") == "Q4_K_M"
    assert quant_of("Llama-3.2-1B-Instruct-IQ3_XS.gguf") == "IQ3_XS"
    assert quant_of("model-f16.gguf") == "F16"
    assert quant_of("model.Q8_0.gguf") == "Q8_0"
    assert quant_of("model.gguf") is None


def test_the_fit_verdicts() -> None:
    small = Machine(total_ram=16 * GB, available_ram=12 * GB)
    fit = estimate(4 * GB, "m.Q4_K_M.gguf", 8192, small)
    # 4 GB at 4.8 bits is ~6.7 billion weights: ~107 KB per token of KV cache
    assert fit.estimated and fit.verdict is Verdict.RAM
    assert 4 * GB + RUNTIME_MARGIN < fit.need_bytes < 4 * GB + RUNTIME_MARGIN + 8192 * 120_000
    assert estimate(13 * GB, "m.Q8_0.gguf", 8192, small).verdict is Verdict.TIGHT
    assert estimate(20 * GB, "m.Q8_0.gguf", 8192, small).verdict is Verdict.TOO_BIG
    exact = estimate(4 * GB, "m.gguf", 1000, small, kv_per_token=100)
    assert not exact.estimated and exact.need_bytes == 4 * GB + 100_000 + RUNTIME_MARGIN
    with_gpu = Machine(16 * GB, 12 * GB, (Gpu("card", 8 * GB),))
    assert estimate(4 * GB, "m.Q4_K_M.gguf", 4096, with_gpu).verdict is Verdict.GPU
    assert estimate(4 * GB, "m.gguf", 4096, Machine(None, None)).verdict is Verdict.UNKNOWN
    assert human_size(560_096) == "560 KB" and human_size(4.1 * GB) == "4.1 GB"


def test_memory_is_read_from_meminfo(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       16314880 kB\nMemFree:  100 kB\nMemAvailable:   9000000 kB\n")
    assert _meminfo(meminfo) == (16314880 * 1024, 9000000 * 1024)
    assert _meminfo(tmp_path / "absent") == (None, None)
