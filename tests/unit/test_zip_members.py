"""``MemberReader``: a zip member inflated step by step, each step checked before it is handed on."""

from __future__ import annotations

import random
import zipfile
from pathlib import Path

import pytest
from tests.support.zip_bombs import write_zip_bomb

from threadline.files.zip_members import (
    RATIO_FROM,
    MemberDamaged,
    MemberOversized,
    MemberReader,
    MemberTooCompressed,
    MemberUnsupported,
)

MB = 1024 * 1024


def only_member(path: Path) -> zipfile.ZipInfo:
    with zipfile.ZipFile(path) as archive:
        return archive.infolist()[-1]


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_an_honest_member_reads_whole_in_any_pieces(tmp_path: Path, method: int) -> None:
    data = random.Random(3).randbytes(5 * MB)
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w", method) as archive:
        archive.writestr("a.bin", data)
    with MemberReader(path, only_member(path), max_ratio=200) as reader:
        pieces = [reader.read(1000), reader.read(300_000), reader.read()]
        assert reader.read(10) == b""
    assert b"".join(pieces) == data and len(pieces[0]) == 1000


def test_a_bomb_is_refused_just_past_the_ratio_floor(tmp_path: Path) -> None:
    bomb = write_zip_bomb(tmp_path / "bomb.zip", inflated=1024 * MB)
    with MemberReader(bomb, only_member(bomb), max_ratio=200) as reader, pytest.raises(MemberTooCompressed):
        reader.drain()
    assert RATIO_FROM < reader.inflated <= RATIO_FROM + 64 * 1024


def test_a_member_past_its_declared_size_or_the_cap_is_refused(tmp_path: Path) -> None:
    liar = write_zip_bomb(tmp_path / "liar.zip", inflated=16 * MB, declared=MB)
    with (
        MemberReader(liar, only_member(liar), max_ratio=None) as reader,
        pytest.raises(MemberOversized) as past,
    ):
        reader.drain()
    assert past.value.declared and reader.inflated <= MB + 64 * 1024
    honest = write_zip_bomb(tmp_path / "honest.zip", inflated=16 * MB)
    capped_reader = MemberReader(honest, only_member(honest), max_ratio=None, cap=2 * MB)
    with capped_reader as reader, pytest.raises(MemberOversized) as capped:
        reader.read()
    assert not capped.value.declared


def test_a_cut_or_altered_member_is_damaged(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a.txt", "some text that will be altered " * 1000)
    info = only_member(path)
    whole = path.read_bytes()
    start = info.header_offset + 30 + len(info.filename)
    altered = tmp_path / "altered.zip"
    altered.write_bytes(
        whole[: start + 40] + bytes(b ^ 0x55 for b in whole[start + 40 : start + 60]) + whole[start + 60 :]
    )
    with MemberReader(altered, info, max_ratio=None) as reader, pytest.raises(MemberDamaged):
        reader.drain()
    cut = tmp_path / "cut.zip"
    cut.write_bytes(whole[: start + 20])
    with pytest.raises(MemberDamaged), MemberReader(cut, info, max_ratio=None) as reader:
        reader.drain()


def test_encrypted_and_other_methods_are_unsupported(tmp_path: Path) -> None:
    path = tmp_path / "b.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_BZIP2) as archive:
        archive.writestr("a.txt", "text")
    with pytest.raises(MemberUnsupported):
        MemberReader(path, only_member(path), max_ratio=None)
    encrypted = only_member(path)
    encrypted.compress_type = zipfile.ZIP_DEFLATED
    encrypted.flag_bits |= 0x1
    with pytest.raises(MemberUnsupported):
        MemberReader(path, encrypted, max_ratio=None)
