"""The pure parts of the changes UI: a unified diff read into rows with their line numbers,
a turn's changes merged per file, and paths made printable for display."""

from __future__ import annotations

import difflib
import os

from tests.support.file_change_samples import state

from threadline.core.file_changes import ABSENT, ChangeKind, ChangeSet, ChangeSource, FileChange, FileState
from threadline.core.sizes import readable_size
from threadline.ui.chat.changes.diff_lines import LineKind, changed_words, diff_lines
from threadline.ui.chat.changes.diff_pane import sizes_of
from threadline.ui.chat.changes.shown_paths import printable, relative, shown_path
from threadline.ui.chat.changes.turn_files import merged_changes


def unified(before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), "a/f", "b/f", n=1))


def test_rows_count_lines_from_each_hunk_and_a_removed_dashes_line_stays_removed() -> None:
    before = "".join(f"line {i}\n" for i in range(1, 21)).replace("line 3\n", "-- three\n")
    after = before.replace("-- three\n", "--- x\n").replace("line 17\n", "line 17\nnew\n")
    rows = diff_lines(unified(before, after))
    assert [(r.kind, r.text, r.old, r.new) for r in rows] == [
        (LineKind.HUNK, "@@ -2,3 +2,3 @@", None, None),
        (LineKind.CONTEXT, " line 2", 2, 2),
        (LineKind.REMOVED, "--- three", 3, None),
        (LineKind.ADDED, "+--- x", None, 3),
        (LineKind.CONTEXT, " line 4", 4, 4),
        (LineKind.HUNK, "@@ -17,2 +17,3 @@", None, None),
        (LineKind.CONTEXT, " line 17", 17, 17),
        (LineKind.ADDED, "+new", None, 18),
        (LineKind.CONTEXT, " line 18", 18, 19),
    ]


def test_a_second_file_and_a_no_newline_note() -> None:
    text = (
        "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n"
        "diff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -5,2 +5,2 @@\n c\n-d\n+e\n"
    )
    rows = diff_lines(text)
    assert [(r.kind.value, r.text, r.old, r.new) for r in rows] == [
        ("hunk", "@@ -1 +1 @@", None, None),
        ("removed", "-a", 1, None),
        ("note", "\\ No newline at end of file", None, None),
        ("added", "+b", None, 1),
        ("hunk", "@@ -5,2 +5,2 @@", None, None),
        ("context", " c", 5, 5),
        ("removed", "-d", 6, None),
        ("added", "+e", None, 6),
    ]


def test_a_turn_lists_each_file_once_following_its_moves() -> None:
    a, b, c = state("one\n"), state("two\n"), state("three\n")
    first = ChangeSet(
        "1",
        "s",
        ChangeSource.TOOL,
        0,
        "m",
        (
            FileChange("/r/a.py", ChangeKind.MODIFIED, a, b, added=1, removed=1),
            FileChange("/r/new.txt", ChangeKind.CREATED, ABSENT, a, added=1),
        ),
    )
    second = ChangeSet(
        "2",
        "s",
        ChangeSource.TOOL,
        0,
        "m",
        (
            FileChange("/r/b.py", ChangeKind.RENAMED, b, c, "/r/a.py", added=2, removed=1),
            FileChange("/r/new.txt", ChangeKind.MODIFIED, a, b, added=1, removed=1),
        ),
    )
    merged = {m.path: m for m in merged_changes([first, second])}
    assert set(merged) == {"/r/b.py", "/r/new.txt"}
    moved = merged["/r/b.py"]
    assert (moved.kind, moved.renamed_from, moved.before, moved.after) == (
        ChangeKind.RENAMED,
        "/r/a.py",
        a,
        c,
    )
    assert (moved.added, moved.removed) == (3, 2)
    created = merged["/r/new.txt"]
    assert (created.kind, created.before, created.after, created.added) == (ChangeKind.CREATED, ABSENT, b, 2)


def test_paths_are_shown_inside_the_root_and_printable() -> None:
    odd = os.fsdecode(b"/p/caf\xe9/\xff\xfe.txt")
    assert shown_path(odd, "/p") == "caf\ufffd/\ufffd\ufffd.txt"
    assert shown_path("/p/a\nb.txt", "/p/") == "a\u240ab.txt"
    assert printable("\ud800x") == "?x"
    assert relative("/p/x", "/q") == "/p/x"
    assert relative("/pp/x", "/p") == "/pp/x"
    assert relative("C:\\work\\x.py", "C:\\work") == "x.py"


def test_an_edited_line_marks_the_characters_that_changed() -> None:
    rows = diff_lines(
        "@@ -1,3 +1,3 @@\n-    return x + 1\n-old line\n+    return x * 1\n+completely different\n c\n"
    )
    marks = changed_words(rows)
    assert marks[1] == [(13, 1)]  # "+" in the removed line
    assert marks[3] == [(13, 1)]  # "*" in the added one
    assert 2 not in marks and 4 not in marks  # too different: the whole line is the change
    unpaired = diff_lines("@@ -1 +1,2 @@\n-a = 1\n+a = 2\n+b = 3\n")
    assert changed_words(unpaired) == {}


def test_sizes_read_as_a_file_manager_shows_them() -> None:
    assert [readable_size(n) for n in (1, 740, 1536, 14_203, 3_565_158)] == [
        "1 byte",
        "740 bytes",
        "1.5 KB",
        "14 KB",
        "3.4 MB",
    ]
    gone = FileChange("/r/x", ChangeKind.DELETED, FileState("a", 2048, kept=True), ABSENT)
    assert sizes_of(gone) == "was 2.0 KB"
