"""Removing a subtree and putting it back (a user's delete and its undo)."""

from __future__ import annotations

import pytest

from threadline.core.messages import Message
from threadline.core.tree import ConversationTree, TreeError


def build() -> tuple[ConversationTree, dict[str, Message]]:
    """root → (a1 → a1x → a1y, a2 → a2x, a3); a2x active, checkpoint on a1y."""
    tree = ConversationTree()
    m: dict[str, Message] = {}
    m["root"] = tree.add(Message.prompt("root"))
    for name in ("a1", "a2", "a3"):
        m[name] = tree.add(Message.prompt(name, parent_id=m["root"].id))
    m["a1x"] = tree.add(Message.prompt("a1x", parent_id=m["a1"].id))
    m["a1y"] = tree.add(Message.prompt("a1y", parent_id=m["a1x"].id))
    m["a2x"] = tree.add(Message.prompt("a2x", parent_id=m["a2"].id))
    tree.set_checkpoint("mark", m["a1y"].id)
    return tree, m


def snapshot(tree: ConversationTree) -> tuple[object, ...]:
    return (
        tuple(sorted((m.id, tuple(c.id for c in tree.children(m.id))) for m in tree)),
        tuple(c.id for c in tree.children(None)),
        tree.active_leaf,
        dict(tree.checkpoints),
    )


def test_removing_the_active_branch_moves_to_the_parents_newest_remaining_branch() -> None:
    tree, m = build()
    before = snapshot(tree)
    branch = tree.remove_subtree(m["a2"].id)
    assert {x.id for x in branch.messages} == {m["a2"].id, m["a2x"].id}
    assert branch.position == 1
    assert m["a2x"].id not in tree and len(tree) == 5
    assert tree.active_leaf == m["a3"].id
    assert [c.text for c in tree.children(m["root"].id)] == ["a1", "a3"]
    tree.restore_subtree(branch)
    assert snapshot(tree) == before
    assert tree.version(m["a2"].id).index == 2


def test_removing_a_deep_branch_drops_its_checkpoints_and_keeps_an_outside_leaf() -> None:
    tree, m = build()
    before = snapshot(tree)
    branch = tree.remove_subtree(m["a1"].id)
    assert [x.text for x in branch.messages] == ["a1", "a1x", "a1y"]
    assert tree.checkpoints == {} and branch.checkpoints == {"mark": m["a1y"].id}
    assert tree.active_leaf == m["a2x"].id  # the active path was elsewhere: untouched
    tree.restore_subtree(branch)
    assert snapshot(tree) == before


def test_removing_the_only_child_leaves_the_parent_active_and_the_root_empties_the_tree() -> None:
    tree, m = build()
    tree.set_active_leaf(m["a1y"].id)
    tree.remove_subtree(m["a1y"].id)
    assert tree.active_leaf == m["a1x"].id
    tree.remove_subtree(m["root"].id)
    assert len(tree) == 0 and tree.active_leaf is None


def test_restore_without_activating_keeps_the_current_leaf_and_refuses_a_missing_parent() -> None:
    tree, m = build()
    inner = tree.remove_subtree(m["a1x"].id)
    outer = tree.remove_subtree(m["a1"].id)
    with pytest.raises(TreeError):
        tree.restore_subtree(inner)  # its parent is itself deleted
    tree.restore_subtree(outer)
    tree.set_active_leaf(m["a3"].id)
    tree.restore_subtree(inner, activate=False)
    assert tree.active_leaf == m["a3"].id
    assert m["a1y"].id in tree
    with pytest.raises(TreeError):
        tree.restore_subtree(inner)  # already back
