"""Recording a piece of file work, its diffs, and restoring (with conflicts and blocks)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.support.workspaces import Desk

from threadline.core.file_changes import ChangeKind, ChangeSource, RestoreAction
from threadline.workspace.changes import BINARY_NOTE, file_diff
from threadline.workspace.limits import DEFAULT_LIMITS, Limits
from threadline.workspace.restore import (
    CHANGED_LATER,
    CHANGED_ON_DISK,
    LINK_OUT,
    OTHER_MACHINE,
    plan_restore,
    run_restore,
)


def _desk(tmp_path: Path, limits: Limits = DEFAULT_LIMITS) -> Desk:
    return Desk(tmp_path / "data", tmp_path / "work", limits)


def test_a_shell_like_change_is_recorded_as_created_modified_deleted_and_renamed(tmp_path: Path) -> None:
    desk = _desk(tmp_path)
    work = desk.folder
    (work / "keep.txt").write_text("one\ntwo\nthree\n")
    (work / "gone.txt").write_text("bye\n")
    (work / "old-name.txt").write_text("moving\n")

    def edit() -> None:
        (work / "keep.txt").write_text("one\n2\nthree\nfour\n")
        (work / "gone.txt").unlink()
        (work / "old-name.txt").rename(work / "new-name.txt")
        (work / "made.bin").write_bytes(b"\0binary")

    change_set = desk.record(edit)
    assert change_set is not None and change_set.source is ChangeSource.TOOL
    by_name = {os.path.basename(c.path): c for c in change_set.changes}
    assert {n: c.kind for n, c in by_name.items()} == {
        "gone.txt": ChangeKind.DELETED,
        "keep.txt": ChangeKind.MODIFIED,
        "made.bin": ChangeKind.CREATED,
        "new-name.txt": ChangeKind.RENAMED,
    }
    keep = by_name["keep.txt"]
    assert (keep.added, keep.removed) == (2, 1)
    assert by_name["gone.txt"].removed == 1
    assert by_name["new-name.txt"].renamed_from.endswith("old-name.txt")
    diff = file_diff(keep, desk.store)
    assert diff.text.splitlines()[2:] == ["@@ -1,3 +1,4 @@", " one", "-two", "+2", " three", "+four"]
    assert file_diff(by_name["made.bin"], desk.store).note == BINARY_NOTE
    assert file_diff(by_name["new-name.txt"], desk.store).note.startswith("Renamed from ")


def test_nothing_changed_records_nothing(tmp_path: Path) -> None:
    desk = _desk(tmp_path)
    (desk.folder / "a.txt").write_text("a")
    assert desk.record(lambda: None) is None


def test_restore_gives_back_the_files_and_can_itself_be_undone(tmp_path: Path) -> None:
    desk = _desk(tmp_path)
    work = desk.folder
    (work / "a.txt").write_bytes(b"first\n")
    original = desk.bytes_on_disk()

    def edit() -> None:
        (work / "a.txt").write_bytes(b"second\n")
        (work / "b.txt").write_bytes(b"new\n")

    desk.record(edit)
    edited = desk.bytes_on_disk()
    plan = plan_restore("s1", "before turn 1", desk.history, desk.history, desk.store, desk.machine)
    assert {(os.path.basename(s.path), s.action) for s in plan.steps} == {
        ("a.txt", RestoreAction.CHANGE),
        ("b.txt", RestoreAction.DELETE),
    }
    assert not plan.conflicts and not plan.blocked
    restore = run_restore(plan, desk.store, desk.machine)
    assert desk.bytes_on_disk() == original
    assert restore.source is ChangeSource.RESTORE and len(restore.changes) == 2
    desk.history.append(restore)
    again = plan_restore("s1", "undo the restore", [restore], desk.history, desk.store, desk.machine)
    run_restore(again, desk.store, desk.machine)
    assert desk.bytes_on_disk() == edited


def test_a_file_changed_after_the_tool_is_a_conflict_left_alone_unless_forced(tmp_path: Path) -> None:
    desk = _desk(tmp_path)
    target = desk.folder / "notes.txt"
    target.write_text("tool's before\n")
    desk.record(lambda: target.write_text("tool wrote\n"))
    target.write_text("the user's own edit\n")
    plan = plan_restore("s1", "undo", desk.history, desk.history, desk.store, desk.machine)
    (step,) = plan.conflicts
    assert step.conflict == CHANGED_ON_DISK
    result = run_restore(plan, desk.store, desk.machine)
    assert target.read_text() == "the user's own edit\n"
    assert not result.changes and "notes.txt" in result.skipped[0]
    forced = run_restore(plan, desk.store, desk.machine, forced={step.path})
    assert target.read_text() == "tool's before\n"
    assert forced.changes[0].before.kept  # the user's edit is kept: restoring again gives it back


def test_undoing_one_turn_that_a_later_turn_changed_again_is_a_conflict(tmp_path: Path) -> None:
    desk = _desk(tmp_path)
    target = desk.folder / "a.txt"
    target.write_text("0")
    desk.record(lambda: target.write_text("1"), message_id="turn1")
    desk.record(lambda: target.write_text("2"), message_id="turn2")
    plan = plan_restore("s1", "undo turn 1", desk.history[:1], desk.history, desk.store, desk.machine)
    assert [s.conflict for s in plan.steps] == [CHANGED_LATER]


def test_content_not_kept_blocks_the_file_and_says_why(tmp_path: Path) -> None:
    desk = _desk(tmp_path, Limits(max_file_bytes=10))
    target = desk.folder / "big.txt"
    target.write_text("x" * 100)
    desk.record(lambda: target.write_text("small"))
    plan = plan_restore("s1", "undo", desk.history, desk.history, desk.store, desk.machine)
    (step,) = plan.blocked
    assert step.blocked == "its content was not kept: larger than 10 bytes"
    assert file_diff(desk.history[0].changes[0], desk.store).note == "Content not kept: larger than 10 bytes"


def test_another_machines_change_sets_are_listed_but_blocked(tmp_path: Path) -> None:
    desk = _desk(tmp_path)
    target = desk.folder / "a.txt"
    target.write_text("0")
    desk.record(lambda: target.write_text("1"))
    plan = plan_restore("s1", "undo", desk.history, desk.history, desk.store, "another-machine")
    assert [s.blocked for s in plan.steps] == [OTHER_MACHINE]


def test_a_symbolic_link_leading_out_is_never_restored_through(tmp_path: Path) -> None:
    desk = _desk(tmp_path)
    sub = desk.folder / "sub"
    sub.mkdir()
    (sub / "a.txt").write_text("0")
    desk.record(lambda: shutil.rmtree(sub))
    outside = tmp_path / "outside"
    outside.mkdir()
    sub.symlink_to(outside)  # someone put a link where the folder was
    plan = plan_restore(
        "s1", "undo", desk.history, desk.history, desk.store, desk.machine, [str(desk.folder)]
    )
    assert [s.blocked for s in plan.steps] == [LINK_OUT]
    run_restore(plan, desk.store, desk.machine, forced={plan.steps[0].path})
    assert list(outside.iterdir()) == []


def test_a_call_cut_off_from_its_record_is_reconciled_at_the_next_start(tmp_path: Path) -> None:
    from threadline.workspace.limits import Budget
    from threadline.workspace.recorder import CallInfo, Recorder
    from threadline.workspace.scan import ScanCache

    desk = _desk(tmp_path)
    target = desk.folder / "a.txt"
    target.write_text("before")
    call = CallInfo("s1", "m1", "c1", "shell")
    desk.recorder.begin(call, [str(desk.folder)], None, ScanCache(), Budget(10**6))
    target.write_text("after")  # ...and Threadline stops here
    restarted = Recorder(desk.data_dir, desk.store, desk.machine)
    ((recording_id, change_set),) = restarted.unfinished()
    assert change_set is not None and change_set.call_id == "c1" and change_set.note
    (change,) = change_set.changes
    assert change.kind is ChangeKind.MODIFIED and change.before.kept
    restarted.forget(recording_id)
    assert restarted.unfinished() == []


def test_a_pending_record_without_its_manifest_names_the_declared_files_as_unknown_before(
    tmp_path: Path,
) -> None:
    from threadline.workspace.limits import Budget
    from threadline.workspace.recorder import CallInfo
    from threadline.workspace.scan import ScanCache

    desk = _desk(tmp_path)
    target = os.path.join(desk.root, "a.txt")
    desk.recorder.begin(
        CallInfo("s1", "m1", "c1", "write_file"), [desk.root], [target], ScanCache(), Budget(10**6)
    )
    Path(target).write_text("written")
    desk.store.collect(())  # the manifest is gone too
    ((_, change_set),) = desk.recorder.unfinished()
    assert change_set is not None
    (change,) = change_set.changes
    assert change.before.unknown and change.after.digest
    plan = plan_restore("s1", "undo", [change_set], [change_set], desk.store, desk.machine)
    assert "not known" in plan.blocked[0].blocked
