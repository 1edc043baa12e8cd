"""A separate writer process for the concurrency tests: appends rounds of prompt + streamed reply.

Run as ``python store_writer.py URL SESSION_ID TAG ROUNDS GO_FILE``; it waits for
``GO_FILE`` to exist (so both writers start together), then writes every round
the way a turn does (prompt, streaming reply, text updates, final update) and
exits 0, or prints the error and exits 1.
"""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import replace
from pathlib import Path

from threadline.core.messages import Message, MessageStatus
from threadline.store.repository import Store

UPDATES_PER_REPLY = 5


async def write(url: str, session_id: str, tag: str, rounds: int) -> None:
    store = await Store.open(url)
    try:
        parent: str | None = None
        for i in range(rounds):
            prompt = Message.prompt(f"{tag} prompt {i}", parent_id=parent)
            await store.append_message(session_id, prompt)
            reply = Message.reply(parent_id=prompt.id)
            await store.append_message(session_id, reply)
            text = ""
            for j in range(UPDATES_PER_REPLY):
                text += f"{tag} reply {i} part {j}. "
                await store.update_message_text(reply.id, text)
            await store.update_message(replace(reply, text=text, status=MessageStatus.COMPLETE))
            parent = reply.id
    finally:
        await store.close()


def main() -> int:
    url, session_id, tag, rounds, go = sys.argv[1:6]
    deadline = time.monotonic() + 120
    while not Path(go).exists():
        if time.monotonic() > deadline:
            print("the start signal never came", file=sys.stderr)
            return 2
        time.sleep(0.01)
    try:
        asyncio.run(write(url, session_id, tag, int(rounds)))
    except Exception as error:
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
