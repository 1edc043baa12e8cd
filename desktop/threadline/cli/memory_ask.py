"""A memory the model proposes during ``threadline ask``, answered on the terminal (docs/memory.md).

On a terminal the proposal is asked: Enter or ``n`` declines, ``y`` saves it, ``e`` asks for
the text to save instead. Without one (a script, a pipe, a prompt read from standard input)
nobody can answer, so it is declined with one line on standard error saying how to save it
by hand. ``--yes`` does not accept proposals: it allows tools, while what is remembered stays
the user's own choice. Every other call goes to the handler underneath (``--yes``) or is
left unanswered (not run, as before).
"""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from collections.abc import Sequence
from typing import TextIO

from threadline.core.memory import DECLINED_REASON, EDITED_FLAG, PROPOSE_MEMORY
from threadline.core.messages import ToolCall
from threadline.engine.approval import ApprovalHandler, Decision

NOT_ASKED_REASON = "Nobody could be asked at the terminal, so the memory was not saved."


class TerminalMemoryAsk:
    def __init__(
        self,
        *,
        interactive: bool,
        others: ApprovalHandler | None = None,
        input: TextIO | None = None,
        out: TextIO | None = None,
    ) -> None:
        self.interactive = interactive
        self._others = others
        self._input = input or sys.stdin
        self._out = out or sys.stderr

    async def __call__(self, session_id: str, calls: tuple[ToolCall, ...]) -> Sequence[Decision]:
        decisions = [await self._ask(call) for call in calls if call.name == PROPOSE_MEMORY]
        others = tuple(call for call in calls if call.name != PROPOSE_MEMORY)
        if others and self._others is not None:
            decisions.extend(await self._others(session_id, others))
        return decisions

    def _say(self, text: str) -> None:
        print(text, file=self._out, flush=True)

    async def _read(self, prompt: str) -> str | None:
        self._out.write(prompt)
        self._out.flush()
        line = await asyncio.to_thread(self._input.readline)
        return None if line == "" else line.strip()

    async def _ask(self, call: ToolCall) -> Decision:
        arguments = call.parsed_arguments()
        text = str(arguments.get("text") or "").strip()
        if not self.interactive:
            self._say(
                f"threadline: the assistant proposed a memory (“{text}”); not saved, no terminal to "
                f"answer on. Save it yourself with: threadline memory add {shlex.quote(text)}"
            )
            return Decision(call.id, allow=False, reason=NOT_ASKED_REASON)
        self._say(f"The assistant suggests remembering: “{text}”")
        answer = (await self._read("  Save it? [y]es, [e]dit, [N]o: ") or "").lower()
        if answer in ("y", "yes"):
            return Decision(call.id, allow=True)
        if answer in ("e", "edit"):
            edited = " ".join((await self._read("  Text to save: ") or "").split())
            if edited:
                changed = {**arguments, "text": edited, EDITED_FLAG: True}
                return Decision(call.id, allow=True, arguments=json.dumps(changed, ensure_ascii=False))
        return Decision(call.id, allow=False, reason=DECLINED_REASON)
