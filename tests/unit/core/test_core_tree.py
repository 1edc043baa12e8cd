"""The conversation tree: versions, the active leaf, checkpoints, tangents and forks."""

from __future__ import annotations

import pytest

from threadline.core.conversation import Conversation
from threadline.core.messages import Message, MessageKind
from threadline.core.tree import TANGENT_CHECKPOINT, ConversationTree, TreeError, Version


def turn(conversation: Conversation, text: str, answer: str) -> tuple[Message, Message]:
    prompt = conversation.stage(text)
    reply = conversation.begin_reply()
    conversation.append_text(answer)
    conversation.finish_reply()
    return prompt, reply


def texts(conversation: Conversation) -> list[str]:
    return [m.text for m in conversation.path()]


def test_edit_adds_a_sibling_and_versions_count_in_order() -> None:
    c = Conversation("s")
    p1, _ = turn(c, "hello", "hi")
    q1, _ = turn(c, "v1", "a1")
    q2, _ = (c.edit(q1.id, "v2"), None)
    c.begin_reply()
    c.finish_reply()
    q3 = c.edit(q1.id, "v3")
    c.cancel()
    assert q1.parent_id == q2.parent_id == q3.parent_id
    assert [m.id for m in c.tree.siblings(q1.id)] == [q1.id, q2.id, q3.id]
    assert [c.tree.version(q.id) for q in (q1, q2, q3)] == [Version(1, 3), Version(2, 3), Version(3, 3)]
    assert c.tree.version(p1.id) == Version(1, 1)
    # The original is untouched; the edit is on the path.
    assert q1.text == "v1"
    assert texts(c) == ["hello", "hi", "v3"]


def test_edit_keeps_attachments_unless_replaced() -> None:
    from threadline.core.messages import ContextFile

    c = Conversation("s")
    ctx = (ContextFile("a.txt", "A"),)
    p = c.stage("with file", context=ctx)
    c.cancel()
    e1 = c.edit(p.id, "again")
    c.cancel()
    e2 = c.edit(p.id, "without", context=())
    c.cancel()
    assert e1.context == ctx and e2.context == ()


def test_edit_of_a_non_prompt_is_refused() -> None:
    c = Conversation("s")
    _, reply = turn(c, "q", "a")
    with pytest.raises(TreeError):
        c.edit(reply.id, "x")


def test_edit_of_the_first_prompt_adds_a_root_sibling() -> None:
    c = Conversation("s")
    p, _ = turn(c, "first", "a")
    e = c.edit(p.id, "first, better")
    assert e.parent_id is None
    assert c.tree.version(e.id) == Version(2, 2)
    assert texts(c) == ["first, better"]


def test_regenerate_adds_a_sibling_reply() -> None:
    c = Conversation("s")
    prompt, r1 = turn(c, "q", "answer one")
    staged = c.regenerate(r1.id)
    assert staged.id == prompt.id and c.staged == prompt.id
    r2 = c.begin_reply()
    c.append_text("answer two")
    c.finish_reply()
    assert r2.parent_id == r1.parent_id == prompt.id
    assert c.tree.version(r2.id) == Version(2, 2)
    assert texts(c) == ["q", "answer two"]
    assert r1.text == "answer one"


def test_regenerate_of_a_prompt_is_refused() -> None:
    c = Conversation("s")
    prompt, _ = turn(c, "q", "a")
    with pytest.raises(TreeError):
        c.regenerate(prompt.id)


def test_switch_version_follows_the_newest_branch() -> None:
    c = Conversation("s")
    turn(c, "root", "r")
    q1, _ = turn(c, "v1", "a1")
    turn(c, "v1 follow-up", "old")
    follow = c.path()[-2]
    c.edit(follow.id, "v1 follow-up edited")  # a newer branch under v1
    c.begin_reply()
    c.append_text("new")
    c.finish_reply()
    newest_under_v1 = c.tree.active_leaf
    c.edit(q1.id, "v2")
    c.begin_reply()
    c.finish_reply()
    assert texts(c)[2] == "v2"
    leaf = c.switch_version(c.path()[2].id, -1)
    assert leaf == newest_under_v1
    assert texts(c) == ["root", "r", "v1", "a1", "v1 follow-up edited", "new"]
    # Offsets wrap around: one step back from version 1 of 2 is version 2.
    c.switch_version(q1.id, -1)
    assert texts(c)[2] == "v2"
    c.switch_version(q1.id, +1)
    assert texts(c)[2] == "v2"
    c.switch_version(q1.id, 0)
    assert texts(c)[2] == "v1"


def test_switching_is_refused_while_a_turn_runs() -> None:
    c = Conversation("s")
    p, _ = turn(c, "a", "b")
    c.stage("c")
    with pytest.raises(TreeError):
        c.switch_version(p.id, 1)
    with pytest.raises(TreeError):
        c.set_active_leaf(p.id)


def test_set_active_leaf_moves_the_path() -> None:
    c = Conversation("s")
    p, _r = turn(c, "a", "b")
    turn(c, "c", "d")
    c.set_active_leaf(p.id)
    assert texts(c) == ["a"]
    c.set_active_leaf(None)
    assert c.path() == []
    with pytest.raises(TreeError):
        c.set_active_leaf("nope")


def test_checkpoints() -> None:
    tree = ConversationTree()
    with pytest.raises(TreeError):
        tree.set_checkpoint("empty")
    a = tree.add(Message.prompt("a"))
    b = tree.add(Message.reply(parent_id=a.id, text="b"))
    assert tree.set_checkpoint("first", a.id) == a.id
    assert tree.set_checkpoint("here") == b.id
    tree.restore_checkpoint("first")
    assert tree.active_leaf == a.id
    tree.restore_checkpoint("here")
    assert tree.active_leaf == b.id
    with pytest.raises(TreeError):
        tree.restore_checkpoint("missing")
    with pytest.raises(TreeError):
        tree.set_checkpoint("bad", "nope")


def test_tangent_start_and_end() -> None:
    c = Conversation("s")
    turn(c, "main", "line")
    start = c.tree.active_leaf
    with pytest.raises(TreeError):
        c.tree.end_tangent()
    c.tree.start_tangent()
    assert c.tree.in_tangent
    with pytest.raises(TreeError):
        c.tree.start_tangent()
    side_prompt, side_reply = turn(c, "side question", "side answer")
    assert texts(c)[-2:] == ["side question", "side answer"]
    assert c.tree.end_tangent() == start
    assert not c.tree.in_tangent and TANGENT_CHECKPOINT not in c.tree.checkpoints
    assert texts(c) == ["main", "line"]
    assert side_prompt.id in c.tree and side_reply.id in c.tree
    # The main line continues from where the tangent started.
    p, _ = turn(c, "back", "ok")
    assert p.parent_id == start


def test_tangent_needs_a_message() -> None:
    with pytest.raises(TreeError):
        ConversationTree().start_tangent()


def test_fork_path_relinks_ids() -> None:
    c = Conversation("s")
    turn(c, "q1", "a1")
    turn(c, "q2", "a2")
    c.add_summary("summary", summarised_through=c.path()[1].id)
    turn(c, "q3", "a3")
    original = c.path()
    before = [(m.id, m.parent_id) for m in c.tree]
    copies = c.tree.fork_path()
    assert [m.text for m in copies] == [m.text for m in original]
    assert [m.kind for m in copies] == [m.kind for m in original]
    assert not {m.id for m in copies} & {m.id for m in original}
    assert copies[0].parent_id is None
    assert all(copies[i].parent_id == copies[i - 1].id for i in range(1, len(copies)))
    summary = next(m for m in copies if m.kind is MessageKind.SUMMARY)
    assert summary.summarised_through == copies[1].id
    # A new session's tree accepts the copies and shows the same conversation.
    forked = ConversationTree(copies)
    assert [m.text for m in forked.path()] == [m.text for m in original]
    assert [(m.id, m.parent_id) for m in c.tree] == before


def test_fork_path_of_an_earlier_leaf() -> None:
    c = Conversation("s")
    _p1, r1 = turn(c, "q1", "a1")
    turn(c, "q2", "a2")
    assert [m.text for m in c.tree.fork_path(r1.id)] == ["q1", "a1"]


def test_tree_construction_rules() -> None:
    a = Message.prompt("a")
    b = Message.reply(parent_id=a.id, text="b")
    c = Message.prompt("c")  # a second root, newer
    tree = ConversationTree([a, b, c])
    assert tree.active_leaf == c.id
    assert ConversationTree([a, b]).active_leaf == b.id
    assert ConversationTree([a, b], active_leaf=a.id).active_leaf == a.id
    assert ConversationTree().active_leaf is None and ConversationTree().path() == []
    with pytest.raises(TreeError):
        ConversationTree([a], active_leaf="nope")
    with pytest.raises(TreeError):
        tree.add(a)
    with pytest.raises(TreeError):
        tree.add(Message.prompt("orphan", parent_id="missing"))
    with pytest.raises(TreeError):
        tree.get("missing")
    assert len(tree) == 3 and a.id in tree and list(tree) == [a, b, c]
    assert tree.children(None) == [a, c] and tree.children(a.id) == [b]
    assert tree.newest_leaf_under(a.id) == b.id


def test_tree_loads_messages_in_any_order() -> None:
    # A store may return rows ordered by time or ordinal; a parent may not come first.
    a = Message.prompt("a")
    b = Message.reply(parent_id=a.id, text="b")
    c = Message.prompt("c", parent_id=b.id)
    tree = ConversationTree([c, b, a])
    assert [m.text for m in tree.path()] == ["a", "b", "c"]


def test_conversation_keeps_the_tree_it_is_given_even_when_empty() -> None:
    tree = ConversationTree()
    c = Conversation("s", tree)
    assert c.tree is tree
    c.stage("x")
    assert len(tree) == 1


def test_a_path_that_goes_round_a_cycle_is_refused() -> None:
    """Parents are added before children, so only a changed ``parent_id`` can make a cycle;
    the path stops once it is longer than the tree rather than walking round for ever."""
    c = Conversation("s")
    first, _ = turn(c, "one", "a")
    _, last = turn(c, "two", "b")
    first.parent_id = last.id
    with pytest.raises(TreeError, match="cycle"):
        c.path()
    first.parent_id = None
    assert texts(c) == ["one", "a", "two", "b"]
