"""Parsing the three foreign export formats from hand-written fixtures (tests/fixtures/import).

The fixtures follow each format as its app writes it: ChatGPT's ``mapping`` with a
hidden system root, an edited prompt (a branch), code run by the python tool and a
multimodal prompt; Claude's ``chat_messages`` with ``parent_message_uuid``, a
regenerated answer, tool blocks and attachments, and an older export without parent
links; Open WebUI's ``history`` tree with ``currentId``, an embedded image and a failed
reply. Each also holds broken conversations that must come back as problems.
"""

from __future__ import annotations

from pathlib import Path

from threadline.core.messages import Message, MessageKind, MessageStatus
from threadline.core.request import check_well_formed, sendable_messages
from threadline.core.tree import ConversationTree
from threadline.interchange.detect import read_file
from threadline.interchange.ids import message_id_for, session_id_for
from threadline.interchange.model import ImportedConversation, ImportProblem, ImportSource

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "import"


def split(path: Path) -> tuple[dict[str, ImportedConversation], dict[str, str]]:
    conversations: dict[str, ImportedConversation] = {}
    problems: dict[str, str] = {}
    for item in read_file(path):
        if isinstance(item, ImportProblem):
            problems[item.title] = item.reason
        else:
            conversations[item.title] = item
    return conversations, problems


def tree_of(conversation: ImportedConversation) -> ConversationTree:
    return ConversationTree(conversation.messages, active_leaf=conversation.active_leaf)


def assert_sendable(conversation: ImportedConversation) -> None:
    """Every path of the tree, with a next prompt, makes a well-formed request (roles alternate,
    results answer the calls right before them)."""
    tree = tree_of(conversation)
    for leaf in (m for m in tree if not tree.children(m.id)):
        follow_up = Message.prompt("and then?", parent_id=leaf.id)
        assert check_well_formed(sendable_messages([*tree.path(leaf.id), follow_up])) == []


def test_chatgpt_branches_code_output_and_hidden_nodes() -> None:
    conversations, problems = split(FIXTURES / "chatgpt_conversations.json")
    chat = conversations["Sum in Python"]
    assert chat.source is ImportSource.CHATGPT
    assert chat.session_id == session_id_for(ImportSource.CHATGPT, "67a1c0de-0000-4000-8000-000000000001")
    tree = tree_of(chat)
    path = tree.path()
    assert [m.kind for m in path] == [
        MessageKind.PROMPT,
        MessageKind.RESPONSE,
        MessageKind.TOOL_CALLS,
        MessageKind.TOOL_RESULTS,
        MessageKind.RESPONSE,
    ]
    call = path[2].tool_calls[0]
    assert call.name == "python" and call.parsed_arguments()["code"] == "print(2 + 2)"
    result = path[3].tool_results[0]
    assert (result.call_id, result.text, result.tool_name) == (call.id, "4\n", "python")
    assert path[-1].metadata is not None and path[-1].metadata.model == "gpt-4o"
    assert path[-1].id == message_id_for(ImportSource.CHATGPT, chat.source_id, "asst-2") == chat.active_leaf
    # the hidden system node is gone, and the edited prompt is a second version of the first
    roots = tree.children(None)
    assert [m.text for m in roots] == ["What is 2+2? Use python.", "What is 3+3? No tools, please."]
    assert tree.children(roots[1].id)[0].metadata.model == "gpt-4o-mini"  # type: ignore[union-attr]
    assert chat.source_message_ids[path[0].id] == "user-1"
    assert_sendable(chat)
    assert problems["Looping mapping"] == "Its messages' parent links form a loop."
    assert "not a ChatGPT conversation" in problems["Wrong types"]


def test_chatgpt_null_title_images_attachments_archived_and_orphans() -> None:
    conversations, _ = split(FIXTURES / "chatgpt_conversations.json")
    untitled = conversations["Describe this cat picture."]  # the null title falls back to the prompt
    assert untitled.archived
    prompt = untitled.messages[0]
    assert "[image: file-Cat123 — not included in the export]" in prompt.text
    assert "[attachment: notes.pdf — not included in the export]" in prompt.text
    assert "user_profile" not in prompt.text and "I like cats" not in prompt.text  # hidden context
    orphan = conversations["Orphan parent"]
    assert orphan.messages[0].parent_id is None  # its parent is missing: attached to the root
    assert orphan.messages[1].status is MessageStatus.INTERRUPTED  # "in_progress" in the export


def test_claude_tree_tools_attachments_and_linear_exports() -> None:
    conversations, problems = split(FIXTURES / "claude_conversations.json")
    chat = conversations["Weather tool and a regenerated answer"]
    tree = tree_of(chat)
    prompt = tree.children(None)[0]
    assert prompt.context[0].name == "notes.txt" and "umbrella" in prompt.context[0].text
    assert "[file: paris.jpg — not included in the export]" in prompt.text
    first, regenerated = tree.children(prompt.id)
    assert first.kind is MessageKind.TOOL_CALLS and first.text == "Let me check the forecast."
    assert first.tool_calls[0].parsed_arguments() == {"city": "Paris"}
    results = tree.children(first.id)[0]
    assert results.tool_results[0].call_id == "toolu_01"
    final = tree.children(results.id)[0]
    assert final.kind is MessageKind.RESPONSE and "umbrella" in final.text
    assert "raining; mention" not in final.text  # thinking is not imported
    assert regenerated.text == "Paris: 14 °C, rain."
    assert [m.text for m in tree.path()][-1] == "Thanks!"  # current_leaf_message_uuid
    assert_sendable(chat)
    linear = conversations["Write a haiku about autumn leaves"]  # empty name: the first prompt
    assert [m.parent_id for m in linear.messages] == [None, linear.messages[0].id]
    assert problems == {
        "Broken loop": "Its messages' parent links form a loop.",
        "Empty chat": "It holds no messages.",
    }


def test_open_webui_history_tree_images_failures_and_flat_chats() -> None:
    conversations, problems = split(FIXTURES / "openwebui_export.json")
    chat = conversations["Rust lifetimes"]
    assert chat.pinned and chat.model == "llama3.1:8b"
    tree = tree_of(chat)
    prompt = tree.children(None)[0]
    assert prompt.images[0].media_type == "image/png"  # embedded in the export: kept
    assert "[file: main.rs — not included in the export]" in prompt.text
    replies = tree.children(prompt.id)
    assert [r.metadata.model for r in replies] == ["llama3.1:8b", "qwen2.5:7b"]  # type: ignore[union-attr]
    leaf = tree.get(chat.active_leaf or "")
    assert leaf.status is MessageStatus.FAILED and leaf.metadata is not None
    assert "unexpectedly stopped" in leaf.metadata.error
    flat = conversations["Name three prime numbers"]  # "New Chat" is no title
    assert flat.archived and [m.kind for m in flat.messages] == [MessageKind.PROMPT, MessageKind.RESPONSE]
    assert flat.messages[1].status is MessageStatus.INTERRUPTED  # saved unfinished (done: false)
    assert problems == {"No id at all": "It has no id."}


def test_format_is_detected_from_content_not_name(tmp_path: Path) -> None:
    renamed = tmp_path / "export.txt"
    renamed.write_bytes((FIXTURES / "claude_conversations.json").read_bytes())
    sources = {i.source for i in read_file(renamed) if isinstance(i, ImportedConversation)}
    assert sources == {ImportSource.CLAUDE}
    other = tmp_path / "conversations.json"
    other.write_text('[{"name": "a list of something else"}]')
    assert read_file(other) == [
        ImportProblem("conversations.json", read_file(other)[0].reason),
    ]
    assert "not an export Threadline can import" in read_file(other)[0].reason


def test_threadline_json_goes_to_its_parser(tmp_path: Path) -> None:
    from threadline.core.session import SessionInfo
    from threadline.interchange.threadline_json import dumps

    prompt = Message.prompt("hello", id="p1")
    reply = Message.reply(parent_id="p1", text="hi", status=MessageStatus.COMPLETE, id="r1")
    path = tmp_path / "backup.json"
    path.write_text(dumps([(SessionInfo(id="s1", title="Greeting", active_leaf="r1"), [prompt, reply])]))
    [conversation] = read_file(path)
    assert isinstance(conversation, ImportedConversation)
    assert conversation.source is ImportSource.THREADLINE
    assert [m.id for m in conversation.messages] == ["p1", "r1"]


def test_same_file_gives_same_ids_every_time() -> None:
    first = [i for i in read_file(FIXTURES / "openwebui_export.json") if isinstance(i, ImportedConversation)]
    again = [i for i in read_file(FIXTURES / "openwebui_export.json") if isinstance(i, ImportedConversation)]
    assert [[m.id for m in c.messages] for c in first] == [[m.id for m in c.messages] for c in again]
