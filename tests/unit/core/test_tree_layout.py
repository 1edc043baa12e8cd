"""The branch map's grid: rows are depths, the active path is column 0, branches go right, no overlaps."""

from __future__ import annotations

import pytest
from tests.support.branchy_trees import branchy_tree, small_tree

from threadline.core.tree_layout import (
    NO_PARENT,
    TreeLayout,
    checkpoint_names,
    layout_conversation,
    layout_tree,
)


def assert_well_formed(layout: TreeLayout) -> None:
    """Every rule the painter relies on, checked node by node."""
    cells: set[tuple[int, int]] = set()
    for node in range(len(layout)):
        cell = (layout.rows[node], layout.columns[node])
        assert cell not in cells, f"two nodes at {cell}"
        cells.add(cell)
        parent = layout.parents[node]
        if parent == NO_PARENT:
            assert layout.rows[node] == 0
            continue
        assert layout.rows[node] == layout.rows[parent] + 1
        if layout.primary_child[parent] == node:
            assert layout.columns[node] == layout.columns[parent], "a chain stays in its column"
        else:
            assert layout.columns[node] > layout.columns[parent], "a branch goes to the right"
    for row, nodes in enumerate(layout.by_row):
        assert all(layout.rows[n] == row for n in nodes)
        assert [layout.columns[n] for n in nodes] == sorted(layout.columns[n] for n in nodes)
    assert sum(len(r) for r in layout.by_row) == len(layout)


def no_node_above_branch_heads(layout: TreeLayout) -> None:
    for node in range(len(layout)):
        parent = layout.parents[node]
        if parent != NO_PARENT and layout.primary_child[parent] != node:
            assert layout.node_at(layout.rows[node] - 1, layout.columns[node]) == NO_PARENT


def test_a_straight_conversation_is_one_column() -> None:
    pairs = [("a", None), ("b", "a"), ("c", "b"), ("d", "c")]
    layout = layout_tree(pairs, "d")
    assert layout.rows == [0, 1, 2, 3]
    assert layout.columns == [0, 0, 0, 0]
    assert all(layout.on_active_path)
    assert layout.column_count == 1
    assert layout.active_leaf == layout.index_of["d"]


def test_the_active_path_is_column_0_even_when_it_is_the_oldest_version() -> None:
    # b1 and b2 are versions under a; the older one (b1) is shown.
    pairs = [("a", None), ("b1", "a"), ("c1", "b1"), ("b2", "a"), ("c2", "b2")]
    layout = layout_tree(pairs, "c1")
    col = {mid: layout.columns[i] for i, mid in enumerate(layout.ids)}
    assert col["a"] == col["b1"] == col["c1"] == 0
    assert col["b2"] == col["c2"] == 1
    assert [layout.on_active_path[layout.index_of[m]] for m in ("a", "b1", "c1", "b2", "c2")] == [
        True,
        True,
        True,
        False,
        False,
    ]
    assert_well_formed(layout)


def test_below_an_inner_active_leaf_the_newest_branch_continues_the_column() -> None:
    # A restored checkpoint: the active leaf is b, which has two replies below it.
    pairs = [("a", None), ("b", "a"), ("c1", "b"), ("c2", "b")]
    layout = layout_tree(pairs, "b")
    assert layout.columns[layout.index_of["c2"]] == 0
    assert layout.columns[layout.index_of["c1"]] == 1
    assert not layout.on_active_path[layout.index_of["c2"]]


def test_branches_that_do_not_overlap_share_a_column() -> None:
    # Two short branches far apart along the main line both fit in column 1.
    pairs = [(f"m{i}", f"m{i - 1}" if i else None) for i in range(10)]
    pairs += [("x", "m1"), ("y", "m6")]
    layout = layout_tree(pairs, "m9")
    assert layout.columns[layout.index_of["x"]] == 1
    assert layout.columns[layout.index_of["y"]] == 1
    assert layout.column_count == 2
    assert_well_formed(layout)


def test_a_branch_never_starts_right_under_the_end_of_another_in_its_column() -> None:
    # x ends at row 2 in column 1; y starts at row 3: sharing column 1 would read as one line.
    pairs = [(f"m{i}", f"m{i - 1}" if i else None) for i in range(6)]
    pairs += [("x", "m1"), ("y", "m2")]
    layout = layout_tree(pairs, "m5")
    assert layout.columns[layout.index_of["x"]] == 1
    assert layout.columns[layout.index_of["y"]] == 2
    no_node_above_branch_heads(layout)


def test_branches_of_branches_go_further_right() -> None:
    pairs = [("a", None), ("b", "a"), ("c", "b"), ("d", "c"), ("x1", "a"), ("x2", "x1"), ("y", "x1")]
    layout = layout_tree(pairs, "d")
    assert layout.columns[layout.index_of["x1"]] == 1
    # y is x1's newest reply, so it continues x1's column; the older x2 branches off to the right.
    assert layout.columns[layout.index_of["y"]] == 1
    assert layout.columns[layout.index_of["x2"]] > layout.columns[layout.index_of["x1"]]
    assert_well_formed(layout)


def test_several_roots_and_an_empty_tree() -> None:
    layout = layout_tree([("r1", None), ("a", "r1"), ("r2", None), ("b", "r2")], "b")
    assert layout.columns[layout.index_of["r2"]] == 0
    assert layout.columns[layout.index_of["r1"]] == 1
    assert_well_formed(layout)
    empty = layout_tree([], None)
    assert len(empty) == 0 and empty.row_count == 0 and empty.column_count == 0
    assert empty.active_leaf == NO_PARENT


def test_without_an_active_leaf_the_newest_branch_is_primary() -> None:
    layout = layout_tree([("a", None), ("b1", "a"), ("b2", "a")], None)
    assert layout.active_leaf == layout.index_of["b2"]
    assert layout.columns[layout.index_of["b2"]] == 0


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="not before"):
        layout_tree([("b", "a"), ("a", None)], None)
    with pytest.raises(ValueError, match="twice"):
        layout_tree([("a", None), ("a", None)], None)
    with pytest.raises(ValueError, match="active leaf"):
        layout_tree([("a", None)], "zz")


def test_tangent_marks_its_whole_branch() -> None:
    pairs = [("a", None), ("b", "a"), ("t", "a"), ("t1", "t"), ("t2", "t1")]
    layout = layout_tree(pairs, "b", tangent_heads=["t", "unknown"])
    assert [layout.tangent[layout.index_of[m]] for m in ("a", "b", "t", "t1", "t2")] == [
        False,
        False,
        True,
        True,
        True,
    ]


def test_the_small_chat_with_versions_a_tangent_and_checkpoints() -> None:
    tree, ids = small_tree()
    layout = layout_conversation(tree)
    assert_well_formed(layout)
    at = layout.index_of
    assert layout.columns[at[ids["main_end"]]] == 0
    assert layout.columns[at[ids["old_reply"]]] > 0
    assert layout.columns[at[ids["edited"]]] > 0
    assert layout.tangent[at[ids["tangent"]]] and layout.tangent[at[ids["tangent_end"]]]
    assert not layout.tangent[at[ids["main_end"]]]
    assert checkpoint_names(tree) == {"draft-1": ids["first"], "before tangent": ids["middle"]}
    tree.start_tangent()  # the internal return point is not a checkpoint a person named
    assert "__tangent_return__" not in checkpoint_names(tree)


def test_10000_messages_with_many_branches() -> None:
    tree = branchy_tree(10_000)
    layout = layout_conversation(tree)
    assert len(layout) == len(tree) == 10_000
    assert_well_formed(layout)
    no_node_above_branch_heads(layout)
    path = tree.path()
    assert all(layout.columns[layout.index_of[m.id]] == 0 for m in path)
    assert sum(layout.on_active_path) == len(path)
    branches = sum(1 for n in range(len(layout)) if layout.parents[n] != NO_PARENT and layout.columns[n] > 0)
    assert branches > 1000
    assert any(layout.tangent)
    # Reusing columns keeps the map narrow although there are hundreds of branches.
    assert layout.column_count <= 8
    assert layout.row_count == max(layout.rows) + 1


def test_a_bush_of_versions_gets_one_column_each() -> None:
    pairs = [("a", None)] + [(f"v{i}", "a") for i in range(3000)]
    layout = layout_tree(pairs, "v10")
    assert layout.columns[layout.index_of["v10"]] == 0
    assert layout.column_count == 3000
    assert_well_formed(layout)
