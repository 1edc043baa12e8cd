"""The snapshot store: content-addressed, compressed, private, collected when unreferenced."""

from __future__ import annotations

import os
import stat
import zlib
from pathlib import Path

import pytest

from threadline.workspace.blobs import MissingSnapshot, SnapshotStore, digest_of
from threadline.workspace.machine import machine_id


def test_a_content_is_kept_once_compressed_and_private(tmp_path: Path) -> None:
    store = SnapshotStore.in_data_dir(tmp_path)
    data = b"hello\n" * 1000
    digest = store.put(data)
    assert digest == digest_of(data)
    assert store.put(data) == digest
    blob = tmp_path / "snapshots" / "blobs" / digest[:2] / digest[2:]
    assert zlib.decompress(blob.read_bytes()) == data
    assert blob.stat().st_size < len(data) // 10
    assert stat.S_IMODE(blob.stat().st_mode) == 0o600
    assert stat.S_IMODE(blob.parent.stat().st_mode) == 0o700
    assert SnapshotStore.in_data_dir(tmp_path).get(digest) == data  # another process reads it back
    assert store.space_used().blobs == 1


def test_a_missing_or_damaged_blob_is_said_not_kept(tmp_path: Path) -> None:
    store = SnapshotStore.in_data_dir(tmp_path)
    with pytest.raises(MissingSnapshot):
        store.get("0" * 64)
    digest = store.put(b"original")
    path = tmp_path / "snapshots" / "blobs" / digest[:2] / digest[2:]
    path.write_bytes(zlib.compress(b"tampered"))
    with pytest.raises(MissingSnapshot):
        store.get(digest)


def test_collect_removes_what_nothing_refers_to(tmp_path: Path) -> None:
    store = SnapshotStore.in_data_dir(tmp_path)
    keep, drop = store.put(b"keep"), store.put(b"drop")
    assert store.collect({keep}, older_than=0) == 0  # both written after the cut-off
    assert store.collect({keep}) == 1
    assert store.get(keep) == b"keep"
    assert not store.has(drop)
    with pytest.raises(MissingSnapshot):
        store.get(drop)


def test_the_machine_id_is_made_once_and_kept(tmp_path: Path) -> None:
    first = machine_id(tmp_path)
    assert first and machine_id(tmp_path) == first
    assert stat.S_IMODE(os.stat(tmp_path / "machine-id").st_mode) == 0o600
