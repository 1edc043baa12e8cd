"""Reasoning in foreign exports becomes ``Message.reasoning``, never the reply's text: Claude's
``thinking`` blocks (signature, timestamps, ``redacted_thinking`` kept as they came) and ChatGPT's
hidden ``thoughts`` nodes (timed from the ``reasoning_recap`` after them)."""

from __future__ import annotations

from pathlib import Path

from threadline.core.messages import Message, MessageKind
from threadline.core.reasoning import SOURCE_ANTHROPIC, SOURCE_OPENAI, Reasoning
from threadline.core.request import check_well_formed, sendable_messages
from threadline.core.tree import ConversationTree
from threadline.interchange import claude
from threadline.interchange.common import ParseContext
from threadline.interchange.detect import read_file
from threadline.interchange.limits import DEFAULT_LIMITS
from threadline.interchange.model import ImportedConversation
from threadline.interchange.reasoning_import import chatgpt_thoughts, claude_block

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "import"
REASONING = FIXTURES / "reasoning"
"""Exports with reasoning, apart from the format fixtures (tests that import every file there count them)."""


def conversations(name: str) -> dict[str, ImportedConversation]:
    path = REASONING / name if (REASONING / name).exists() else FIXTURES / name
    return {c.title: c for c in read_file(path) if isinstance(c, ImportedConversation)}


def path_of(conversation: ImportedConversation) -> list[Message]:
    return ConversationTree(conversation.messages, active_leaf=conversation.active_leaf).path()


def test_claude_thinking_of_the_old_fixture_goes_on_the_final_reply_not_its_text() -> None:
    chat = conversations("claude_conversations.json")["Weather tool and a regenerated answer"]
    tree = ConversationTree(chat.messages, active_leaf=chat.active_leaf)
    prompt = tree.children(None)[0]
    calls = tree.children(prompt.id)[0]
    final = tree.children(tree.children(calls.id)[0].id)[0]
    assert calls.reasoning == (), "the thinking came after the tool result, so it is the answer's"
    assert final.reasoning == (
        Reasoning(text="It is raining; mention the umbrella.", source=SOURCE_ANTHROPIC),
    )
    assert "raining; mention" not in final.text and "raining; mention" not in calls.text


def test_claude_signed_and_redacted_thinking_kept_byte_for_byte_and_timed() -> None:
    chat = conversations("claude_thinking.json")["Signed thinking"]
    prompt, reply = path_of(chat)
    assert reply.text == "17 × 23 = 391."
    signed, redacted = reply.reasoning
    assert signed.text == "17 × 23 = 17 × 20 + 17 × 3 = 340 + 51 = 391."
    assert signed.signature == "EqQBCkgIARABGAIiQKx+sig=="
    assert signed.duration_ms == 4500.0 and signed.source == SOURCE_ANTHROPIC
    assert redacted.redacted and redacted.redacted_data.startswith("EmwKAhgBEgy3va3pzix")
    follow_up = Message.prompt("and 17 × 24?", parent_id=reply.id)
    sent = sendable_messages([prompt, reply, follow_up])
    assert check_well_formed(sent) == []


def test_claude_thinking_alone_still_makes_a_reply_that_holds_it() -> None:
    raw = {
        "uuid": "c1",
        "name": "Only thought",
        "chat_messages": [
            {"uuid": "h", "sender": "human", "content": [{"type": "text", "text": "hm?"}]},
            {
                "uuid": "a",
                "sender": "assistant",
                "parent_message_uuid": "h",
                "content": [{"type": "thinking", "thinking": "Nothing to say yet."}],
            },
        ],
    }
    chat = claude.parse(raw, ParseContext())
    reply = path_of(chat)[-1]
    assert reply.kind is MessageKind.RESPONSE and reply.text == ""
    assert [r.text for r in reply.reasoning] == ["Nothing to say yet."]


def test_empty_claude_thinking_blocks_are_dropped() -> None:
    assert claude_block({"type": "thinking", "thinking": ""}, DEFAULT_LIMITS) is None
    assert claude_block({"type": "redacted_thinking"}, DEFAULT_LIMITS) is None
    bad_times = {"type": "thinking", "thinking": "x", "start_timestamp": "later", "stop_timestamp": 5}
    assert claude_block(bad_times, DEFAULT_LIMITS) == Reasoning(text="x", source=SOURCE_ANTHROPIC)


def test_chatgpt_thoughts_become_the_next_shown_messages_reasoning() -> None:
    chat = conversations("chatgpt_thoughts.json")["Primes with o3"]
    path = path_of(chat)
    assert [m.kind for m in path] == [
        MessageKind.PROMPT,
        MessageKind.RESPONSE,
        MessageKind.PROMPT,
        MessageKind.TOOL_CALLS,
        MessageKind.TOOL_RESULTS,
        MessageKind.RESPONSE,
    ]
    answer = path[1]
    assert answer.text == "No: 91 = 7 × 13."
    (block,) = answer.reasoning
    assert block.text == (
        "Checking small divisors\n91 is odd, digit sum 10, so not divisible by 2 or 3. Try 7: 7 × 13 = 91."
        "\n\nConcluding\nSo 91 is composite."
    )
    assert block.source == SOURCE_OPENAI and block.duration_ms == 9000.0, "from 'Thought for 9 seconds'"
    assert "Thought for" not in answer.text and "divisors" not in answer.text
    call = path[3]
    assert [r.text for r in call.reasoning] == ["Running code\nA quick python call gives the exact value."]
    assert call.reasoning[0].duration_ms == 65_000.0, "finished_duration_sec wins over the words"
    assert path[5].reasoning == (), "thoughts belong to the first message shown after them only"
    follow_up = Message.prompt("thanks", parent_id=path[-1].id)
    assert check_well_formed(sendable_messages([*path, follow_up])) == []


def test_chatgpt_recap_words_in_minutes_and_seconds() -> None:
    thoughts = {"content": {"content_type": "thoughts", "thoughts": [{"summary": "S", "content": "C"}]}}
    recap = {"content": {"content_type": "reasoning_recap", "content": "Thought for 2m 3s"}}
    block = chatgpt_thoughts(thoughts, recap, DEFAULT_LIMITS)
    assert block is not None and block.text == "S\nC" and block.duration_ms == 123_000.0
    assert chatgpt_thoughts(thoughts, None, DEFAULT_LIMITS) == Reasoning(text="S\nC", source=SOURCE_OPENAI)
    assert chatgpt_thoughts({"content": {"thoughts": []}}, recap, DEFAULT_LIMITS) is None


def test_chatgpt_fixture_without_thoughts_has_no_reasoning() -> None:
    for chat in conversations("chatgpt_conversations.json").values():
        assert all(m.reasoning == () for m in chat.messages)
