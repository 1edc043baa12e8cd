"""The shared vocabulary of file changes: per-file totals, the header's words, turns."""

from __future__ import annotations

from threadline.core.file_changes import (
    ABSENT,
    ChangeKind,
    ChangeSet,
    ChangeSource,
    FileChange,
    FileState,
    change_summary,
    file_totals,
    turns_with_changes,
)
from threadline.core.messages import Message, MessageStatus, ToolCall

A = FileState(digest="a" * 64, size=3, kept=True)
B = FileState(digest="b" * 64, size=4, kept=True)


def _set(message_id: str, *changes: FileChange, source: ChangeSource = ChangeSource.TOOL) -> ChangeSet:
    return ChangeSet(
        id=f"set-{message_id}-{len(changes)}",
        session_id="s",
        source=source,
        created_at=0.0,
        machine="m",
        changes=changes,
        message_id=message_id,
    )


def test_summary_counts_lines_and_files_with_a_true_minus_sign() -> None:
    assert change_summary(12, 3, 2) == "+12 \u22123 in 2 files"
    assert change_summary(1, 0, 1) == "+1 \u22120 in 1 file"


def test_totals_follow_a_file_through_a_rename_and_net_its_kind() -> None:
    created = FileChange("/w/a.txt", ChangeKind.CREATED, ABSENT, A, added=3)
    moved = FileChange("/w/b.txt", ChangeKind.RENAMED, A, B, renamed_from="/w/a.txt", added=1, removed=1)
    other = FileChange("/w/c.txt", ChangeKind.MODIFIED, A, B, added=2, removed=2)
    gone = FileChange("/w/c.txt", ChangeKind.DELETED, B, ABSENT, removed=4)
    totals = file_totals([_set("r1", created, other), _set("r2", moved, gone)])
    assert [(t.path, t.added, t.removed, t.changes, t.kind) for t in totals] == [
        ("/w/c.txt", 2, 6, 2, ChangeKind.DELETED),
        ("/w/b.txt", 4, 1, 2, ChangeKind.CREATED),
    ]


def test_unknown_and_unkept_states_are_not_restorable() -> None:
    assert ABSENT.restorable and not ABSENT.exists
    assert A.restorable
    assert not FileState(digest="c" * 64, size=10**9, not_kept="larger than 2 MB").restorable
    assert not FileState(unknown=True).restorable


def test_turns_are_numbered_along_the_path_and_only_those_with_changes_listed() -> None:
    p1 = Message.prompt("one")
    r1 = Message.reply(parent_id=p1.id, text="ok", status=MessageStatus.COMPLETE)
    p2 = Message.prompt("two", parent_id=r1.id)
    call = ToolCall(id="c1", name="write_file", arguments="{}")
    r2 = Message.reply(parent_id=p2.id, tool_calls=(call,), status=MessageStatus.COMPLETE)
    r3 = Message.reply(parent_id=r2.id, text="done", status=MessageStatus.COMPLETE)
    change = FileChange("/w/a.txt", ChangeKind.CREATED, ABSENT, A, added=3)
    elsewhere = _set("not-on-path", change)
    restore = _set("", change, source=ChangeSource.RESTORE)
    turns = turns_with_changes([p1, r1, p2, r2, r3], [_set(r2.id, change), elsewhere, restore])
    assert len(turns) == 1
    turn = turns[0]
    assert (turn.number, turn.prompt_id, turn.reply_id) == (2, p2.id, r3.id)
    assert turn.summary == "+3 \u22120 in 1 file"


def test_a_file_back_as_it_began_is_not_counted() -> None:
    edited = FileChange("/w/a.txt", ChangeKind.MODIFIED, A, B, added=9, removed=4)
    undone = FileChange("/w/a.txt", ChangeKind.MODIFIED, B, A, added=4, removed=9)
    scratch = FileChange("/w/tmp.txt", ChangeKind.CREATED, ABSENT, B, added=4)
    scratch_gone = FileChange("/w/tmp.txt", ChangeKind.DELETED, B, ABSENT, removed=4)
    kept = FileChange("/w/c.txt", ChangeKind.MODIFIED, A, B, added=1, removed=1)
    restore = _set("", undone, source=ChangeSource.RESTORE)
    totals = file_totals([_set("r1", edited, scratch, kept), _set("r2", scratch_gone), restore])
    assert [t.path for t in totals] == ["/w/c.txt"]
    unknown_start = FileChange("/w/u.txt", ChangeKind.MODIFIED, FileState(unknown=True), A, added=1)
    assert [t.path for t in file_totals([_set("r3", unknown_start)])] == ["/w/u.txt"]
