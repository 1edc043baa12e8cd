"""Zip bombs and other files that inflate or pad to gigabytes: refused on the stream, in small memory.

Each file is a few megabytes (or a sparse file) that would fill gigabytes if read whole;
the reader must refuse it after looking at a few megabytes. Time is not asserted (the
machine may be busy); the peak of Python memory is, and printed for the record.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from tests.support.peak_memory import MB, traced_peak
from tests.support.zip_bombs import write_zip_bomb

from threadline.interchange.detect import read_file
from threadline.interchange.limits import ImportLimits
from threadline.interchange.model import ImportedConversation, ImportProblem

GB = 1024 * MB
SMALL = 64 * MB
"""Peak memory a refusal may take; the old reader kept hundreds of megabytes."""


def conversation(title: str, text: str = "hi") -> dict[str, object]:
    return {
        "title": title,
        "create_time": 1700000000,
        "update_time": 1700000000,
        "current_node": "a",
        "mapping": {
            "u": {"id": "u", "parent": None, "children": ["a"], "message": None},
            "a": {
                "id": "a",
                "parent": "u",
                "children": [],
                "message": {"id": "a", "author": {"role": "user"}, "content": {"parts": [text]}},
            },
        },
    }


def titles(items: list[ImportedConversation | ImportProblem]) -> list[str]:
    return [i.title for i in items if isinstance(i, ImportedConversation)]


def reasons(items: list[ImportedConversation | ImportProblem]) -> list[str]:
    return [i.reason for i in items if isinstance(i, ImportProblem)]


def test_a_zip_of_zeros_is_refused_at_its_first_byte(tmp_path: Path) -> None:
    bomb = write_zip_bomb(tmp_path / "zeros.zip", inflated=2 * GB)
    assert bomb.stat().st_size < 3 * MB
    items, peak = traced_peak(lambda: read_file(bomb))
    print(f"peak {peak / MB:.1f} MB")
    assert reasons(items) == [
        "It is not an export Threadline can import (ChatGPT, Claude or Open WebUI exports, "
        "or Threadline's own JSON)."
    ]
    assert peak < SMALL


def test_a_bomb_that_starts_as_json_is_refused_by_its_ratio_as_it_inflates(tmp_path: Path) -> None:
    bomb = write_zip_bomb(tmp_path / "bomb.zip", inflated=2 * GB, prefix=b'[{"title": "')
    items, peak = traced_peak(lambda: read_file(bomb))
    print(f"peak {peak / MB:.1f} MB")
    assert any("inflates more than 200 times its packed size (a zip bomb?)" in r for r in reasons(items))
    assert peak < SMALL


def test_a_member_that_outgrows_its_declared_size_is_refused(tmp_path: Path) -> None:
    bomb = write_zip_bomb(tmp_path / "liar.zip", inflated=64 * MB, prefix=b"[", fill=b" ", declared=4 * MB)
    items, peak = traced_peak(lambda: read_file(bomb, ImportLimits(max_compression_ratio=10**6)))
    print(f"peak {peak / MB:.1f} MB")
    assert any("inflates beyond the size its archive declares" in r for r in reasons(items))
    assert peak < SMALL


def test_blanks_between_conversations_are_not_kept(tmp_path: Path) -> None:
    first = ("[" + json.dumps(conversation("Before the blanks")) + ",").encode()
    padded = write_zip_bomb(tmp_path / "blank.zip", inflated=256 * MB, prefix=first, fill=b" ")
    items, peak = traced_peak(lambda: read_file(padded, ImportLimits(max_compression_ratio=10**6)))
    print(f"peak {peak / MB:.1f} MB")
    assert titles(items) == ["Before the blanks"]
    assert reasons(items) == ["The JSON is cut off or damaged after conversation 1."]
    assert peak < SMALL


def test_a_plain_file_that_does_not_start_as_json_is_refused_at_once(tmp_path: Path) -> None:
    sparse = tmp_path / "conversations.json"
    with sparse.open("wb") as handle:
        handle.truncate(GB)  # a gigabyte of zeros that takes no disk
    items, peak = traced_peak(lambda: read_file(sparse))
    print(f"peak {peak / MB:.1f} MB")
    assert reasons(items) == ["It is not JSON, or the JSON is damaged."]
    assert peak < SMALL


def test_a_real_export_still_reads_from_a_zip(tmp_path: Path) -> None:
    words = random.Random(7).choices(["tea", "kettle", "river", "stone", "lamp", "north", "seven"], k=600_000)
    text = json.dumps([conversation(f"Chat {n}", " ".join(words[n::3])) for n in range(3)]).encode()
    assert len(text) > 3 * MB  # judged by its ratio, which real text never trips
    export = write_zip_bomb(tmp_path / "real.zip", inflated=0, prefix=text)
    assert titles(read_file(export)) == ["Chat 0", "Chat 1", "Chat 2"]
