"""Reasoning in provider streams: ``reasoning_content`` / ``reasoning`` deltas, ``<think>`` tags
at the start of the content (split anywhere), Anthropic thinking and redacted thinking blocks.

Recorded streams are fed to the pure accumulators; the tag splitter is also fed every way of
cutting a reply into two pieces, so no split point leaks a tag into the text.
"""

from __future__ import annotations

import pytest
from tests.support import sse_streams as s
from tests.unit.llm.test_accumulate import anthropic_events, feed_all, openai_chunks, text_of

from threadline.core.reasoning import SOURCE_ANTHROPIC, SOURCE_OPENAI, SOURCE_THINK_TAG, Reasoning, grow
from threadline.llm.accumulate import AnthropicAccumulator, OpenAIAccumulator
from threadline.llm.events import ReasoningDelta, StreamEvent, StreamFinished, TextDelta
from threadline.llm.think_tags import ThinkTagSplitter


def blocks_of(events: list[StreamEvent]) -> tuple[Reasoning, ...]:
    """The reasoning blocks the engine would build from these events."""
    blocks: tuple[Reasoning, ...] = ()
    for e in events:
        if isinstance(e, ReasoningDelta):
            blocks = grow(
                blocks,
                text=e.text,
                signature=e.signature,
                redacted_data=e.redacted_data,
                new_block=e.new_block,
                source=e.source,
            )
    return blocks


def openai_events(fixture: str) -> list[StreamEvent]:
    accumulator = OpenAIAccumulator(provider="llama.cpp", model="m")
    events: list[StreamEvent] = []
    for chunk in openai_chunks(s.load_sse_fixture(fixture)):
        events.extend(accumulator.feed(chunk))
    events.extend(accumulator.held_back())
    events.append(accumulator.finish(done=True))
    return events


def test_reasoning_content_deltas_are_reasoning_not_text() -> None:
    events = openai_events("openai_reasoning_content.sse")
    assert text_of(events) == "17 × 23 = **391**."
    (block,) = blocks_of(events)
    assert block.text == "The user asks for 17 × 23. 17 × 20 = 340, 17 × 3 = 51, so 391."
    assert block.source == SOURCE_OPENAI and not block.signed
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert all(isinstance(e, ReasoningDelta) for e in events[:first_text])
    assert isinstance(events[-1], StreamFinished) and events[-1].stop_reason == "end"


def test_openrouter_reasoning_field() -> None:
    events = openai_events("openrouter_reasoning.sse")
    assert text_of(events) == "Paris."
    assert blocks_of(events)[0].text == "Paris is the capital."


def test_think_tags_split_across_chunks() -> None:
    events = openai_events("ollama_think_tags.sse")
    (block,) = blocks_of(events)
    assert block.source == SOURCE_THINK_TAG
    assert block.text == "\nOkay, the user wants  a haiku about rain.\nFive, seven, five."
    assert text_of(events) == "Soft rain on the roof\nlistening, the kettle hums\nthe day slows to drops"
    assert "<" not in text_of(events)


REPLY = "<think>\nweigh it up </thin> still thinking</think>\n\nThe answer."


@pytest.mark.parametrize("cut", range(len(REPLY) + 1))
def test_think_tags_any_split_point(cut: int) -> None:
    splitter = ThinkTagSplitter()
    events = splitter.feed(REPLY[:cut]) + splitter.feed(REPLY[cut:]) + splitter.finish()
    thought = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert thought == "\nweigh it up </thin> still thinking"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "The answer."
    assert next(e.new_block for e in events if isinstance(e, ReasoningDelta)) is True


def test_think_tag_never_closed_is_all_reasoning() -> None:
    splitter = ThinkTagSplitter()
    events = splitter.feed("  <think>hmm, let me") + splitter.feed(" see </thi") + splitter.finish()
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "hmm, let me see </thi"
    assert not [e for e in events if isinstance(e, TextDelta)]


@pytest.mark.parametrize(
    ("pieces", "text"),
    [
        (["Hello <think>not a thought</think>"], "Hello <think>not a thought</think>"),
        (["<thi", "s is text"], "<this is text"),
        (["<th"], "<th"),  # the reply ended while the tag was undecided: it was text
        (["\n", "Plain."], "\nPlain."),
    ],
)
def test_text_that_only_looks_like_a_tag(pieces: list[str], text: str) -> None:
    splitter = ThinkTagSplitter()
    events = [e for p in pieces for e in splitter.feed(p)] + splitter.finish()
    assert all(isinstance(e, TextDelta) for e in events)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == text


def test_reasoning_only_counts_as_output() -> None:
    """A stream cut after reasoning was cut mid-reply (not 'no answer at all')."""
    accumulator = OpenAIAccumulator(provider="p", model="m")
    accumulator.feed({"choices": [{"index": 0, "delta": {"reasoning_content": "hm"}}]})
    assert accumulator.has_output


def test_anthropic_thinking_signature_redacted_and_tool_use() -> None:
    accumulator = AnthropicAccumulator(provider="Anthropic", model="claude")
    events = feed_all(accumulator, anthropic_events(s.load_sse_fixture("anthropic_thinking_tool_use.sse")))
    thinking, redacted = blocks_of(events)
    assert thinking.text == (
        "The user asks for the weather in Oslo. I should call get_weather with the city."
    )
    assert thinking.signature.startswith("EqQBCgIYAhIM1gbcDa9GJwZA2b3h")
    assert thinking.signature.endswith("xQ=")
    assert redacted.redacted_data.startswith("EmwKAhgBEgy3va3pzix") and not redacted.text
    assert {thinking.source, redacted.source} == {SOURCE_ANTHROPIC}
    assert text_of(events) == "Let me check the weather in Oslo."
    finished = events[-1]
    assert isinstance(finished, StreamFinished)
    assert finished.stop_reason == "tool_calls"
    assert finished.tool_calls[0].name == "get_weather"
    assert finished.tool_calls[0].parsed_arguments() == {"city": "Oslo"}
