"""A model with a small context window, as a llama.cpp server started with ``--n_ctx 512``
serves one: a request whose text (system, messages, tool definitions) is over the window is
answered with HTTP 200 and an empty body (or, with ``says_overflow``, a 400 naming the context
length, as other servers do); any other gets a reply. Its window is counted with the same
four-characters-a-token rule Threadline estimates with, so "fits" means the same on both sides.

A summary request (Threadline's summary instructions as the system text) is answered with a
short summary naming the questions it was shown (``Q1``, ``Q2``…, continued parts too) and the
summaries it builds on, so a test can tell what ended up summarised; any other request with a
reply naming the last question. Every request is kept with whether it fit.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from tests.support.sse_server import RecordedRequest, ScriptedResponse, openai_text_stream, sse_response
from tests.support.sse_streams import openai_context_length_error

from threadline.core.compaction import SUMMARY_SYSTEM

EMPTY_200 = ScriptedResponse(status=200, headers={"Content-Type": "text/event-stream"}, chunks=[])
"""What llama-cpp-python's server sent for a streamed request over its window."""

_QUESTION = re.compile(r"\bQ\d+\b")


@dataclass
class SmallWindowModel:
    window: int
    """Tokens a request may hold (its text at four characters a token)."""
    says_overflow: bool = False
    summary_padding: int = 0
    """Characters of detail every summary adds (a summary of the summary adds none), so that
    summaries grow until one has to be condensed."""
    seen: list[tuple[int, bool]] = field(default_factory=list)
    """(tokens, fit) of every chat request, in order."""
    answered: list[dict[str, object]] = field(default_factory=list)
    """The body of every chat request that fit (and got a reply), in order."""

    def __call__(self, request: RecordedRequest) -> ScriptedResponse | None:
        body = request.body
        if not isinstance(body, dict) or "messages" not in body:
            return None
        tokens = request_tokens(body)
        fits = tokens <= self.window
        self.seen.append((tokens, fits))
        if not fits:
            return openai_context_length_error(self.window, tokens) if self.says_overflow else EMPTY_200
        self.answered.append(body)
        messages = body["messages"]
        system = next((str(m["content"]) for m in messages if m["role"] == "system"), "")
        asked = str(messages[-1]["content"])
        if system == SUMMARY_SYSTEM and asked.startswith("Summary so far") and "Shorten" in asked:
            return sse_response(openai_text_stream(["Summary(S, condensed)."]))
        if system == SUMMARY_SYSTEM:
            earlier = "S" if "Summary so far" in asked else ""
            named = sorted(set(_QUESTION.findall(asked)), key=lambda q: int(q[1:]))
            text = f"Summary({earlier}{'+' if earlier and named else ''}{','.join(named)})."
            text += " detail" * (self.summary_padding // 7)
        else:
            questions = _QUESTION.findall(asked)
            text = f"Answer to {questions[-1] if questions else 'that'}."
        return sse_response(openai_text_stream([text]))

    @property
    def refused(self) -> int:
        return sum(1 for _, fit in self.seen if not fit)


def request_tokens(body: dict[str, object]) -> int:
    """The request's text at four characters a token: every message's content and the tools."""
    chars = 0
    for message in body["messages"]:  # type: ignore[attr-defined]
        content = message.get("content")
        chars += len(content) if isinstance(content, str) else len(json.dumps(content or ""))
        chars += len(json.dumps(message.get("tool_calls") or ""))
    chars += len(json.dumps(body.get("tools") or ""))
    return -(-chars // 4)
