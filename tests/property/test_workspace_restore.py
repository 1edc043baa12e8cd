"""Any sequence of tool writes, creates, deletes and renames, then a restore to any earlier
point, gives back byte-exact files (names and contents that are not UTF-8 included); undoing
that restore gives back the last state."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.workspaces import Desk

from threadline.workspace.restore import plan_restore, run_restore

NAMES = [b"a.txt", b"caf\xe9.txt", b"\xff\xfe.bin", b"sub/deep.txt", b"sub/\xe9t\xe9"]
contents = st.binary(max_size=40) | st.sampled_from([b"", b"line\n", b"\xe9\xff\x00\n", b"same\n"])
operations = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.sampled_from(NAMES), contents),
        st.tuples(st.just("delete"), st.sampled_from(NAMES), st.just(b"")),
        st.tuples(st.just("rename"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
    ),
    min_size=1,
    max_size=8,
)


def _apply(folder: bytes, operation: tuple[str, bytes, bytes]) -> list[str]:
    """Do the operation; the paths it touched."""
    kind, name, other = operation
    path = os.path.join(folder, name)
    if kind == "write":
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as out:
            out.write(other)
        return [os.fsdecode(path)]
    if not os.path.exists(path):
        return []
    if kind == "delete":
        os.unlink(path)
        return [os.fsdecode(path)]
    target = os.path.join(folder, other)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    os.replace(path, target)
    return [os.fsdecode(path), os.fsdecode(target)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations, st.data())
def test_restore_to_any_earlier_point_is_byte_exact(
    ops: list[tuple[str, bytes, bytes]], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        desk = Desk(Path(temporary) / "data", Path(temporary) / "work")
        folder = os.fsencode(desk.root)
        states = [desk.bytes_on_disk()]
        for index, operation in enumerate(ops):
            declared = index % 2 == 1  # alternate: a built-in tool's declared paths, a shell scan

            def work(operation: tuple[str, bytes, bytes] = operation) -> None:
                _apply(folder, operation)

            if declared:
                kind, name, other = operation
                paths = [os.fsdecode(os.path.join(folder, name))]
                if kind == "rename":
                    paths.append(os.fsdecode(os.path.join(folder, other)))
                desk.record(work, paths, message_id=f"m{index}")
            else:
                desk.record(work, message_id=f"m{index}")
            states.append(desk.bytes_on_disk())
        point = data.draw(st.integers(0, len(ops)), label="restore to the state after this many operations")
        undo = [s for s in desk.history if int(s.message_id[1:]) >= point]
        plan = plan_restore("s1", "back", undo, desk.history, desk.store, desk.machine, [desk.root])
        assert not plan.conflicts and not plan.blocked
        restore = run_restore(plan, desk.store, desk.machine)
        assert not restore.skipped
        assert desk.bytes_on_disk() == states[point]
        desk.history.append(restore)
        again = plan_restore("s1", "undo", [restore], desk.history, desk.store, desk.machine, [desk.root])
        run_restore(again, desk.store, desk.machine)
        assert desk.bytes_on_disk() == states[-1]
