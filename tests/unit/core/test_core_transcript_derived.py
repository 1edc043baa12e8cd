"""The Markdown transcript of a path, and state derived from history alone."""

from __future__ import annotations

import copy
import json

from core_paths import PathBuilder, call, err, ok

from threadline.core.conversation import Conversation
from threadline.core.derived import (
    latest_tool_arguments,
    latest_tool_result,
    latest_tool_value,
    tool_calls_by_id,
)
from threadline.core.messages import (
    ContextFile,
    ImageBlock,
    Message,
    MessageStatus,
    RequestMetadata,
    ToolResult,
)
from threadline.core.sources import Source, SourceKind, SourceLocator
from threadline.core.transcript import transcript_markdown
from threadline.core.tree import ConversationTree

# -- transcript ----------------------------------------------------------------------------------


def test_transcript_of_a_plain_conversation() -> None:
    p = PathBuilder().prompt("Hello?").reply("Hi!\nHow can I help?")
    p.last.metadata = RequestMetadata(model="gpt-x")
    text = transcript_markdown(p.build(), title="Greetings")
    assert text == "# Greetings\n\n## You\n\nHello?\n\n## Assistant (gpt-x)\n\nHi!\nHow can I help?\n"


def test_transcript_without_title_or_model() -> None:
    p = PathBuilder().prompt("q").reply("a")
    assert transcript_markdown(p.build()) == "## You\n\nq\n\n## Assistant\n\na\n"
    assert transcript_markdown([]) == "\n"


def test_transcript_lists_a_replys_sources_numbered_as_cited() -> None:
    p = PathBuilder().prompt("q").reply("It is 42 [1].")
    p.last.sources = (
        Source(SourceKind.KNOWLEDGE, "handbook", SourceLocator("/d/manual.pdf", page=3), "…"),
        Source(
            SourceKind.KNOWLEDGE,
            "handbook",
            SourceLocator("/d/a.md", heading="Setup", line_start=4, line_end=9),
            "…",
        ),
    )
    assert transcript_markdown(p.build()).endswith(
        "It is 42 [1].\n\n*Sources:*\n1. handbook: manual.pdf, page 3\n2. handbook: a.md › Setup, lines 4–9\n"
    )


def test_transcript_shows_attachments_tool_calls_and_results() -> None:
    p = PathBuilder().prompt(
        "look",
        context=(ContextFile("notes.md", "secret body"),),
        images=(ImageBlock("image/png", "AAAA", "shot.png"), ImageBlock("image/jpeg", "BBBB")),
    )
    p.reply("Reading.", call("c1", "read_file", '{"path": "a.txt"}'))
    p.results(ok("c1", "line one\n\nline three"), err("c2", "denied", "rm"))
    md = transcript_markdown(p.build())
    assert "*Attached: notes.md*" in md and "secret body" not in md
    assert "*Image: shot.png*" in md and "*Image: image/jpeg*" in md
    assert '> **Tool call** `read_file`\n>\n> ```json\n> {"path": "a.txt"}\n> ```' in md
    assert "> **Tool result** `read_file`\n>\n> line one\n>\n> line three" in md
    assert "> **Tool error** `rm`\n>\n> denied" in md


def test_transcript_marks_partial_replies_and_summaries() -> None:
    notes = {
        MessageStatus.CANCELLED: "*(stopped)*",
        MessageStatus.INTERRUPTED: "*(interrupted)*",
        MessageStatus.FAILED: "*(failed)*",
        MessageStatus.STREAMING: "*(still streaming)*",
    }
    for status, note in notes.items():
        md = transcript_markdown(PathBuilder().prompt("q").reply("par", status=status).build())
        assert md.endswith(f"par\n\n{note}\n")
    assert "*(" not in transcript_markdown(PathBuilder().prompt("q").reply("done").build())
    p = PathBuilder().prompt("q").reply("a")
    p.summary("They said hi.\nThen bye.", through=p.id_of(1))
    md = transcript_markdown(p.build())
    assert md.endswith("> **Summary of earlier messages**\n>\n> They said hi.\n> Then bye.\n")


def test_transcript_of_cancelled_tool_uses_and_empty_results() -> None:
    p = PathBuilder().prompt("q").reply("", call("c1", "grep"))
    p.cancelled(call("c1", "grep"), reason="not now")
    md = transcript_markdown(p.build())
    assert "> **Tool error** `grep`\n>\n> Tool use was cancelled by the user. Reason: not now" in md
    q = PathBuilder().prompt("q").reply("", call("c1")).results(ToolResult("c1", ""))
    assert "> **Tool result** `c1`\n>\n>" in transcript_markdown(q.build())


# -- derived state --------------------------------------------------------------------------------


def test_latest_tool_result_picks_the_newest_success() -> None:
    p = PathBuilder().prompt("q").reply("", call("c1", "plan"), call("c2", "other"))
    p.results(ok("c1", "v1", "plan"), ok("c2", "x", "other")).reply("", call("c3", "plan"))
    p.results(err("c3", "broke", "plan"))
    path = p.build()
    assert latest_tool_result(path, "plan") == ok("c1", "v1", "plan")
    assert latest_tool_result(path, "plan", include_errors=True) == err("c3", "broke", "plan")
    assert latest_tool_result(path, "missing") is None
    assert set(tool_calls_by_id(path)) == {"c1", "c2", "c3"}


def test_latest_tool_result_names_come_from_the_call() -> None:
    # The result's own tool_name may be empty or stale: the call it answers decides.
    p = PathBuilder().prompt("q").reply("", call("c1", "plan")).results(ToolResult("c1", "v", tool_name=""))
    assert latest_tool_result(p.build(), "plan") == ToolResult("c1", "v")
    # Without the call on the path (summarised away), the result's name is used.
    orphan = [Message.tool_results_message((ToolResult("c9", "w", tool_name="plan"),), parent_id=None)]
    assert latest_tool_result(orphan, "plan") == ToolResult("c9", "w", tool_name="plan")


def test_latest_tool_value_finds_the_newest_result_with_the_key() -> None:
    p = PathBuilder().prompt("q")
    p.reply("", call("c1", "tasks")).results(ok("c1", json.dumps({"task_id": "T-1", "x": 1}), "tasks"))
    p.reply("", call("c2", "tasks")).results(ok("c2", json.dumps({"x": 2}), "tasks"))
    p.reply("", call("c3", "tasks")).results(ok("c3", "not json", "tasks"))
    p.reply("", call("c4", "tasks")).results(err("c4", json.dumps({"task_id": "BAD"}), "tasks"))
    path = p.build()
    assert latest_tool_value(path, "tasks", "task_id") == "T-1"
    assert latest_tool_value(path, "tasks", "x") == 2
    assert latest_tool_value(path, "tasks", "missing") is None
    assert latest_tool_value(path, "other", "x") is None


def test_latest_tool_arguments() -> None:
    p = PathBuilder().prompt("q")
    p.reply("", call("c1", "save_note", '{"note": "first"}')).results(ok("c1", "saved", "save_note"))
    p.reply("", call("c2", "save_note", '{"note": "second"}'))
    p.cancelled(call("c2", "save_note"), reason="no")  # refused: nothing was recorded
    path = p.build()
    assert latest_tool_arguments(path, "save_note") == {"note": "first"}
    assert latest_tool_arguments(path, "missing") is None
    # The call running now (no result yet) counts; malformed arguments yield {}.
    p.reply("", call("c3", "save_note", '{"note": "third"}'))
    assert latest_tool_arguments(p.build(), "save_note") == {"note": "third"}
    p.results(ok("c3", "saved", "save_note")).reply("", call("c4", "save_note", "{not json"))
    assert latest_tool_arguments(p.build(), "save_note") == {}


def test_a_tool_reads_a_value_an_earlier_tool_produced_from_history_alone() -> None:
    """``create_task`` returns an id; later ``update_task`` finds it in the history it is
    handed, even after the app restarted (a fresh conversation from the stored tree)."""
    c = Conversation("s")
    c.stage("Create a task to water the plants")
    c.begin_reply()
    c.finish_reply(tool_calls=(call("c1", "create_task", '{"title": "water plants"}'),))
    c.decided()
    c.record_tool_results((ok("c1", json.dumps({"task_id": "T-42"}), "create_task"),))
    c.begin_reply()
    c.append_text("Created T-42.")
    c.finish_reply()

    # Restart: nothing survives but the stored history.
    reopened = Conversation("s", ConversationTree(copy.deepcopy(list(c.tree)), c.tree.active_leaf))
    reopened.stage("Mark it done")
    reopened.begin_reply()
    reopened.finish_reply(tool_calls=(call("c2", "update_task", '{"status": "done"}'),))
    reopened.decided()

    def update_task(history: list[Message]) -> ToolResult:
        task_id = latest_tool_value(history, "create_task", "task_id")
        title = (latest_tool_arguments(history, "create_task") or {}).get("title")
        return ok("c2", json.dumps({"task_id": task_id, "title": title, "status": "done"}), "update_task")

    result = update_task(reopened.path())
    assert result.json_value() == {"task_id": "T-42", "title": "water plants", "status": "done"}
    reopened.record_tool_results((result,))
    assert latest_tool_value(reopened.path(), "update_task", "status") == "done"
