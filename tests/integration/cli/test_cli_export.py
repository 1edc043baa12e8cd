"""`threadline export` as a separate process, on a database a test filled through the store."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.support.chat_trees import Chat, store_chat
from tests.support.cli_process import threadline

from threadline.core.messages import Message, MessageStatus
from threadline.core.session import SessionInfo
from threadline.engine.engine import DATABASE_FILENAME
from threadline.store.repository import Store


async def fill(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    store = await Store.open(Store.sqlite_url(data_dir / DATABASE_FILENAME))
    try:
        for n in (1, 2, 3):
            prompt = Message.prompt(f"question {n}", id=f"p{n}")
            first = Message.reply(
                parent_id=f"p{n}", text=f"answer {n}", status=MessageStatus.COMPLETE, id=f"a{n}"
            )
            other = Message.reply(
                parent_id=f"p{n}", text=f"another {n}", status=MessageStatus.COMPLETE, id=f"b{n}"
            )
            info = SessionInfo(id=f"s{n}", title=f"Chat {n}", archived=n == 3, active_leaf=f"a{n}")
            await store_chat(store, Chat(info, [prompt, first, other]))
    finally:
        await store.close()


def test_export_markdown_to_stdout_and_json_to_a_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    asyncio.run(fill(data))

    markdown = threadline(data, "export", "--session", "s2", "s1", "--format", "md")
    assert markdown.returncode == 0, markdown.stderr
    text = markdown.stdout
    assert text.index("# Chat 2") < text.index("# Chat 1")
    assert "answer 2" in text and "another 2" not in text and "Chat 3" not in text

    branches = threadline(data, "export", "--session", "s1", "--format", "md", "--all-branches")
    assert "answer 1" in branches.stdout and "another 1" in branches.stdout

    out = tmp_path / "all.json"
    everything = threadline(data, "export", "--all", "--format", "json", "-o", str(out))
    assert everything.returncode == 0, everything.stderr
    assert everything.stdout == ""
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["format"] == "threadline" and document["version"] == 1
    ids = [s["id"] for s in document["sessions"]]
    assert sorted(ids[:2]) == ["s1", "s2"] and ids[2] == "s3", "archived chats come last"
    assert {len(s["messages"]) for s in document["sessions"]} == {3}


def test_export_says_what_went_wrong_in_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    asyncio.run(fill(data))
    missing = threadline(data, "export", "--session", "nope", "--format", "json")
    assert missing.returncode == 1
    assert missing.stderr.startswith("threadline: There is no chat with the id 'nope'")
    assert missing.stderr.count("\n") == 1

    unwritable = threadline(data, "export", "--all", "--format", "md", "-o", str(tmp_path / "none" / "x.md"))
    assert unwritable.returncode == 1 and "Choose another place" in unwritable.stderr

    usage = threadline(data, "export", "--format", "md")
    assert usage.returncode == 2 and "--session" in usage.stderr
