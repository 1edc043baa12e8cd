"""`threadline export --include-thinking` as a separate process: Markdown shows each reply's
reasoning as a quote block only when asked; JSON always carries it."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

from tests.integration.cli.test_cli_export import threadline
from tests.support.chat_trees import Chat, store_chat

from threadline.core.messages import Message, MessageStatus
from threadline.core.reasoning import SOURCE_ANTHROPIC, Reasoning
from threadline.core.session import SessionInfo
from threadline.engine.engine import DATABASE_FILENAME
from threadline.store.repository import Store

REASONING = "Two plus two: count on from two, three, four."


async def fill(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    store = await Store.open(Store.sqlite_url(data_dir / DATABASE_FILENAME))
    try:
        prompt = Message.prompt("2+2?", id="p1")
        reply = Message.reply(parent_id="p1", text="It is 4.", status=MessageStatus.COMPLETE, id="a1")
        block = Reasoning(text=REASONING, signature="sig-abc", source=SOURCE_ANTHROPIC, duration_ms=3_000)
        reply = replace(reply, reasoning=(block,))
        await store_chat(store, Chat(SessionInfo(id="s1", title="Sums"), [prompt, reply]))
    finally:
        await store.close()


def test_include_thinking_puts_the_reasoning_in_markdown_only_when_asked(tmp_path: Path) -> None:
    data = tmp_path / "data"
    asyncio.run(fill(data))

    plain = threadline(data, "export", "--session", "s1", "--format", "md")
    assert plain.returncode == 0, plain.stderr
    assert "It is 4." in plain.stdout and REASONING not in plain.stdout

    out = tmp_path / "with.md"
    thinking = threadline(
        data, "export", "--session", "s1", "--format", "md", "--include-thinking", "-o", str(out)
    )
    assert thinking.returncode == 0, thinking.stderr
    text = out.read_text(encoding="utf-8")
    assert "> **Thought for 3 s**" in text and f"> {REASONING}" in text
    assert text.index(REASONING) < text.index("It is 4.")

    to_stdout = threadline(data, "export", "--all", "--format", "md", "--include-thinking")
    assert f"> {REASONING}" in to_stdout.stdout

    as_json = threadline(data, "export", "--session", "s1", "--format", "json")
    reply = next(m for m in json.loads(as_json.stdout)["sessions"][0]["messages"] if m["id"] == "a1")
    assert REASONING in json.dumps(reply) and "sig-abc" in json.dumps(reply), "JSON always has it, signed"
