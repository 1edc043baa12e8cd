"""Indexing a real folder: every kind of document, bad files named, only changes read, the page found."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from tests.support.documents import truncated, write_encrypted_pdf
from tests.support.knowledge_folders import PDF_ANSWER, knowledge_folder

from threadline.knowledge import KnowledgeIndex, Progress, index_base, search


@pytest.fixture
def index(tmp_path: Path) -> KnowledgeIndex:
    opened = KnowledgeIndex(tmp_path / "index" / "knowledge.sqlite3")
    yield opened
    opened.close()


def test_a_folder_of_pdfs_docx_markdown_and_code_is_indexed_and_searched(tmp_path: Path, index) -> None:
    folder = knowledge_folder(tmp_path / "docs")
    report = index_base(index, "kb1", [folder])
    assert report.problems == []
    assert report.progress.files_total == report.progress.files_read == 5
    files, chunks, _chars = index.totals("kb1")
    assert files == 5 and chunks >= 7

    hit = search(index, "kb1", "How far must the albatross valve be torqued?").hits[0]
    assert hit.chunk.path == str(folder / "manual.pdf") and hit.chunk.page == 3
    assert PDF_ANSWER in hit.chunk.text

    (proxy,) = [h for h in search(index, "kb1", "kestrel proxy port").hits[:1]]
    assert proxy.chunk.heading == "Network" and proxy.chunk.path.endswith("setup.md")
    code = search(index, "kb1", "invoice_total").hits[0]
    assert code.chunk.path.endswith("billing.py") and code.chunk.heading == "invoice_total"
    assert search(index, "kb1", "PELICAN revenue").hits[0].chunk.path.endswith("report.docx")


def test_bases_do_not_see_each_other(tmp_path: Path, index) -> None:
    index_base(index, "a", [knowledge_folder(tmp_path / "a")])
    other = tmp_path / "b"
    other.mkdir()
    (other / "x.txt").write_text("nothing about valves here, just zebras", encoding="utf-8")
    index_base(index, "b", [other])
    assert {h.chunk.path for h in search(index, "b", "albatross valve zebras").hits} == {str(other / "x.txt")}


def test_a_second_run_reads_nothing_and_a_changed_file_alone_is_read_again(tmp_path: Path, index) -> None:
    folder = knowledge_folder(tmp_path / "docs")
    index_base(index, "kb", [folder])
    assert index_base(index, "kb", [folder]).progress.files_read == 0

    notes = folder / "notes" / "setup.md"
    notes.write_text("# Setup\n\nThe proxy moved to port 8080 for the OSPREY lab.\n", encoding="utf-8")
    os.utime(notes, ns=(notes.stat().st_atime_ns, notes.stat().st_mtime_ns + 5_000_000_000))
    again = index_base(index, "kb", [folder])
    assert again.progress.files_read == 1
    assert search(index, "kb", "osprey").hits[0].chunk.path == str(notes)
    assert search(index, "kb", "kestrel").hits == []

    touched = folder / "code" / "billing.py"
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 5_000_000_000))
    assert index_base(index, "kb", [folder]).progress.files_read == 0, "same bytes: not read again"


def test_a_reason_stored_with_the_file_name_is_shown_without_it(tmp_path: Path, index) -> None:
    """Problems recorded before the name was left out are listed as new ones are: once."""
    old, odd = str(tmp_path / "old.pdf"), str(tmp_path / "odd.pdf")
    index.mark_problem("kb", old, size=1, mtime_ns=1, reason="old.pdf could not be read: the PDF is damaged.")
    index.mark_problem("kb", odd, size=1, mtime_ns=1, reason="odd.pdf: it needs a password.")
    expected = [(odd, "it needs a password."), (old, "could not be read: the PDF is damaged.")]
    assert index.problems("kb") == expected


def test_a_deleted_file_leaves_the_index(tmp_path: Path, index) -> None:
    folder = knowledge_folder(tmp_path / "docs")
    index_base(index, "kb", [folder])
    (folder / "manual.pdf").unlink()
    report = index_base(index, "kb", [folder])
    assert report.removed == 1
    assert search(index, "kb", "albatross").hits == []
    assert index.totals("kb")[0] == 4


def test_bad_files_are_named_with_their_reason_and_the_rest_is_indexed(tmp_path: Path, index) -> None:
    folder = knowledge_folder(tmp_path / "docs")
    write_encrypted_pdf(tmp_path / "locked.pdf", "secret text")
    (tmp_path / "locked.pdf").rename(folder / "locked.pdf")
    truncated(folder / "manual.pdf", folder / "damaged.pdf", keep=0.3)
    (folder / "blob.bin").write_bytes(bytes(range(256)) * 64)
    with (folder / "huge.log").open("wb") as handle:
        handle.truncate(17 * 1024 * 1024)  # larger than a text file may be
    (folder / "loop").symlink_to(folder, target_is_directory=True)
    (folder / "dangling").symlink_to(folder / "nowhere")
    (folder / "empty.txt").write_text("", encoding="utf-8")
    bad_name = os.fsencode(str(folder)) + b"/caf\xe9.txt"
    with open(bad_name, "wb") as handle:
        handle.write(b"latin-1 named file")
    unreadable = folder / "private.txt"
    unreadable.write_text("cannot see me", encoding="utf-8")
    unreadable.chmod(0)

    report = index_base(index, "kb", [folder])
    reasons = {Path(p.path).name: p.reason for p in report.problems}
    assert set(reasons) >= {
        "locked.pdf",
        "damaged.pdf",
        "blob.bin",
        "huge.log",
        "loop",
        "dangling",
        "empty.txt",
    }
    assert any(name.startswith("caf") and "UTF-8" in reason for name, reason in reasons.items())
    if os.geteuid() != 0:  # root reads any file
        assert "cannot be read" in reasons["private.txt"]
    assert "loop" in reasons["loop"] and "loop" in reasons["dangling"]
    assert "password" in reasons["locked.pdf"].lower() or "encrypt" in reasons["locked.pdf"].lower()
    assert reasons["damaged.pdf"] == "could not be read: the PDF is damaged or incomplete."
    assert reasons["empty.txt"] == "is empty."
    assert reasons["huge.log"] == "is larger than the 16 MB a knowledge base reads; it was skipped"
    doubled = {name: reason for name, reason in reasons.items() if reason.startswith(name)}
    assert not doubled, "the report names each file beside its reason"
    assert index.totals("kb")[0] == 5 + (1 if os.geteuid() == 0 else 0)
    assert search(index, "kb", "albatross").hits[0].chunk.path.endswith("manual.pdf")
    assert not any(
        h.chunk.path.endswith(("locked.pdf", "damaged.pdf")) for h in search(index, "kb", "chapter").hits
    )


def test_stopping_half_way_leaves_whole_files_and_the_next_run_finishes(tmp_path: Path, index) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(30):
        (folder / f"f{i:02}.md").write_text(f"# File {i}\n\n" + f"token{i} " * 400, encoding="utf-8")
    cancel = threading.Event()
    seen: list[int] = []

    def progress(state: Progress) -> None:
        seen.append(state.files_done)
        if state.files_done == 10:
            cancel.set()

    report = index_base(index, "kb", [folder], cancel=cancel, on_progress=progress)
    assert report.cancelled and index.totals("kb")[0] == 10
    for i in range(10):
        assert len(search(index, "kb", f"token{i}").hits) >= 1
    resumed = index_base(index, "kb", [folder])
    assert resumed.progress.files_read == 20 and not resumed.cancelled
    assert index.totals("kb")[0] == 30


def test_dropping_a_base_empties_it_and_it_can_be_rebuilt(tmp_path: Path, index) -> None:
    folder = knowledge_folder(tmp_path / "docs")
    index_base(index, "kb", [folder])
    index.drop_base("kb")
    assert index.totals("kb") == (0, 0, 0)
    assert index_base(index, "kb", [folder]).progress.files_read == 5


def test_common_words_do_not_crowd_out_a_rare_one_and_a_common_only_query_still_finds(
    tmp_path: Path, index: KnowledgeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    from threadline.knowledge import index as index_module

    monkeypatch.setattr(index_module, "COMMON_MATCHES", 5)  # "report" is in 30 files: common
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(30):
        (folder / f"r{i:02}.txt").write_text(f"report report report number {i}", encoding="utf-8")
    (folder / "special.txt").write_text("the report on the OSPREY incident", encoding="utf-8")
    index_base(index, "kb", [folder])
    assert search(index, "kb", "osprey report").hits[0].chunk.path.endswith("special.txt")
    common = search(index, "kb", "report", limit=3).hits
    assert len(common) == 3 and all("report" in hit.chunk.text for hit in common)


def test_only_the_rarest_words_are_ranked_while_their_matches_stay_under_the_bound(
    tmp_path: Path, index: KnowledgeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BM25's work is bounded by the matches of the words it ranks together, not per word."""
    from threadline.knowledge import index as index_module

    monkeypatch.setattr(index_module, "COMMON_MATCHES", 10)
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(8):
        (folder / f"a{i}.txt").write_text(f"amber note {i}", encoding="utf-8")
    for i in range(4):
        (folder / f"b{i}.txt").write_text(f"basalt note {i}", encoding="utf-8")
    (folder / "c.txt").write_text("cobalt basalt", encoding="utf-8")
    index_base(index, "kb", [folder])
    found = [Path(hit.chunk.path).name for hit in search(index, "kb", "amber basalt cobalt", limit=20).hits]
    assert found[0] == "c.txt"
    assert sorted(found) == ["b0.txt", "b1.txt", "b2.txt", "b3.txt", "c.txt"]  # amber (8) would pass 10


def test_a_common_only_query_is_ranked_while_its_words_lists_are_short_and_listed_past_that(
    tmp_path: Path, index: KnowledgeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    from threadline.knowledge import index as index_module

    monkeypatch.setattr(index_module, "COMMON_MATCHES", 5)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a_long.txt").write_text("a report among many other words " * 5, encoding="utf-8")
    (folder / "b_short.txt").write_text("report report", encoding="utf-8")
    for i in range(6):
        (folder / f"r{i}.txt").write_text(f"report {i} with more words than that", encoding="utf-8")
    index_base(index, "kb", [folder])
    assert Path(search(index, "kb", "report", limit=2).hits[0].chunk.path).name == "b_short.txt"  # BM25
    monkeypatch.setattr(index_module, "RANKABLE_MATCHES", 8)  # "report" is in 8 chunks: too many
    assert Path(search(index, "kb", "report", limit=2).hits[0].chunk.path).name == "a_long.txt"


def test_a_word_counted_common_is_counted_again_after_the_index_changes(
    tmp_path: Path, index: KnowledgeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counts are remembered between searches; a write here or by another connection forgets them.
    A common word's matches come in index order (past ``RANKABLE_MATCHES``), a rare one's by BM25,
    which shows the count used."""
    from threadline.knowledge import index as index_module

    monkeypatch.setattr(index_module, "COMMON_MATCHES", 5)
    monkeypatch.setattr(index_module, "RANKABLE_MATCHES", 5)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a_long.txt").write_text("a report among many other words " * 5, encoding="utf-8")
    (folder / "b_short.txt").write_text("report report", encoding="utf-8")
    for i in range(6):
        (folder / f"r{i}.txt").write_text(f"report {i} with more words than that", encoding="utf-8")
    index_base(index, "kb", [folder])

    def first() -> str:
        return Path(search(index, "kb", "report", limit=2).hits[0].chunk.path).name

    assert first() == "a_long.txt"  # common: index order
    for i in range(3):
        (folder / f"r{i}.txt").unlink()
    other = KnowledgeIndex(index.path)
    index_base(other, "kb", [folder])  # another connection: 5 chunks left, still common
    other.close()
    assert first() == "a_long.txt"
    (folder / "r3.txt").unlink()
    index_base(other := KnowledgeIndex(index.path), "kb", [folder])  # 4 left: rare now
    other.close()
    assert first() == "b_short.txt"  # ranked by BM25
    (folder / "b_short.txt").write_text("report report report", encoding="utf-8")
    for i in range(4, 6):
        (folder / f"r{i}.txt").unlink()
    for i in range(8):
        (folder / f"n{i}.txt").write_text(f"report {i} again with more words", encoding="utf-8")
    assert first() == "b_short.txt"
    index_base(index, "kb", [folder])  # this connection: 10 chunks, common again
    assert first() == "a_long.txt"


def test_a_file_that_keeps_changing_while_read_is_named_and_read_whole_once_still(
    tmp_path: Path, index
) -> None:
    import subprocess
    import sys
    import time

    from tests.support.waiting import WAIT

    folder = tmp_path / "docs"
    folder.mkdir()
    log = folder / "growing.txt"
    log.write_text("first line of the log\n" * 100_000, encoding="utf-8")  # 2.2 MB: reading takes a while
    writer = subprocess.Popen(  # another process rewrites its first word all the time
        [
            sys.executable,
            "-c",
            "import os, sys\n"
            "n = 0\n"
            "with open(sys.argv[1], 'r+b') as f:\n"
            "    while True:\n"
            "        n += 1\n"
            "        f.seek(0); f.write(b'FIRST' if n % 2 else b'first'); f.flush()\n"
            "        os.utime(sys.argv[1], ns=(n * 1000, n * 1000))  # a new time at every write\n",
            str(log),
        ]
    )
    try:
        deadline = time.monotonic() + WAIT
        while log.stat().st_mtime_ns > 10**12 and time.monotonic() < deadline:
            time.sleep(0.01)  # until the writer is under way (its times are tiny)
        for _attempt in range(10):  # a busy machine may pause the writer for both reads: try again
            seen = log.stat().st_mtime_ns
            while log.stat().st_mtime_ns == seen and time.monotonic() < deadline:
                time.sleep(0.001)  # the writer is running right now, not waiting for a core
            index.drop_base("kb")
            report = index_base(index, "kb", [folder])
            if report.problems:
                break
    finally:
        writer.kill()
        writer.wait()
    reasons = {Path(p.path).name: p.reason for p in report.problems}
    assert "kept changing while it was read" in reasons["growing.txt"]
    assert index.totals("kb") == (0, 0, 0), "no part of it was kept"
    again = index_base(index, "kb", [folder])
    assert again.problems == [] and index.totals("kb")[0] == 1
    assert search(index, "kb", "log").hits
