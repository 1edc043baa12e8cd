"""The scanner: every file of the allowed folders, links not followed, odd names kept, bounded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from threadline.workspace.blobs import SnapshotStore, digest_of
from threadline.workspace.changes import diff_manifests
from threadline.workspace.limits import DEFAULT_LIMITS, Budget, Limits
from threadline.workspace.scan import ScanCache, Scanner


def _scanner(tmp_path: Path, limits: Limits = DEFAULT_LIMITS, cache: ScanCache | None = None) -> Scanner:
    return Scanner(SnapshotStore.in_data_dir(tmp_path / "data"), limits, cache)


def test_files_are_listed_with_their_digest_and_content_kept(tmp_path: Path) -> None:
    folder = tmp_path / "work"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_bytes(b"alpha\n")
    (folder / "sub" / "b.bin").write_bytes(b"\0\1\2")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_bytes(b"ref")
    scanner = _scanner(tmp_path)
    manifest = scanner.scan([str(folder)])
    root = os.path.realpath(folder)
    assert sorted(manifest.entries) == [f"{root}/a.txt", f"{root}/sub/b.bin"]
    entry = manifest.entries[f"{root}/sub/b.bin"]
    assert entry.digest == digest_of(b"\0\1\2") and entry.binary and entry.kept
    assert scanner.store.get(entry.digest) == b"\0\1\2"


def test_symbolic_links_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b"not yours")
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "link.txt").symlink_to(outside / "secret.txt")
    (folder / "linked-folder").symlink_to(outside)
    scanner = _scanner(tmp_path)
    manifest = scanner.scan([str(folder)])
    assert manifest.entries == {}
    assert not scanner.store.has(digest_of(b"not yours"))


def test_names_that_are_not_utf8_keep_their_bytes(tmp_path: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    raw_name = b"caf\xe9-\xff.txt"
    with open(os.path.join(os.fsencode(folder), raw_name), "wb") as out:
        out.write(b"\xe9t\xe9\n")
    manifest = _scanner(tmp_path).scan([str(folder)])
    (path,) = manifest.entries
    assert os.fsencode(path) == os.path.join(os.fsencode(os.path.realpath(folder)), raw_name)


def test_a_repeated_scan_of_an_unchanged_file_only_stats(tmp_path: Path) -> None:
    """Proof by a content change that keeps size, mtime and inode: the cache answers, unread."""
    folder = tmp_path / "work"
    folder.mkdir()
    target = folder / "same-size.txt"
    target.write_bytes(b"aaaa")
    scanner = _scanner(tmp_path)
    first = scanner.scan([str(folder)])
    times = os.stat(target)
    with open(target, "r+b") as handle:  # same inode
        handle.write(b"bbbb")
    os.utime(target, ns=(times.st_atime_ns, times.st_mtime_ns))
    second = scanner.scan([str(folder)])
    assert second.entries == first.entries
    fresh = _scanner(tmp_path).scan([str(folder)])  # a new cache reads it
    assert next(iter(fresh.entries.values())).digest == digest_of(b"bbbb")


def test_the_file_count_bound_names_what_was_not_looked_at(tmp_path: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    for index in range(10):
        (folder / f"f{index}.txt").write_text(str(index))
    scanner = _scanner(tmp_path, Limits(max_files=4))
    before = scanner.scan([str(folder)])
    assert len(before.entries) == 4
    assert "over the limit of 4 files" in before.notes[0]
    (folder / "f9.txt").write_text("changed beyond the bound")
    (folder / "f0.txt").write_text("changed within the bound")
    after = scanner.scan([str(folder)])
    changed = [os.path.basename(c.path) for c in diff_manifests(before, after, scanner.store)]
    assert changed == ["f0.txt"]


def test_over_the_size_limit_a_change_is_seen_but_its_content_not_kept(tmp_path: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "big.bin").write_bytes(b"x" * 5000)
    (folder / "small.txt").write_bytes(b"y" * 10)
    (folder / "third.txt").write_bytes(b"z" * 10)
    scanner = _scanner(tmp_path, Limits(max_file_bytes=1000))
    manifest = scanner.scan([str(folder)], Budget(15))
    big, small, third = (manifest.entries[p] for p in sorted(manifest.entries))
    assert not big.kept and big.not_kept == "larger than 1000 bytes"
    assert small.kept
    assert not third.kept and "this turn's limit" in third.not_kept


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="modes do not stop root")
def test_an_unreadable_file_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    locked = folder / "locked.txt"
    locked.write_text("x")
    locked.chmod(0)
    manifest = _scanner(tmp_path).scan([str(folder)])
    assert manifest.skipped == {os.path.realpath(locked): "not readable (permission denied)"}
