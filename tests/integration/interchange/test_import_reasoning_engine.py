"""Imported reasoning is stored as the reply's reasoning (content JSON), read back unchanged, and
left out of the reply's text: Claude's signed thinking and ChatGPT's thoughts, through the engine
into a real SQLite file."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from threadline.core.reasoning import SOURCE_ANTHROPIC, SOURCE_OPENAI
from threadline.engine.engine import Engine
from threadline.interchange.detect import read_file
from threadline.interchange.model import ImportedConversation

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "import"
REASONING = FIXTURES / "reasoning"
"""Exports with reasoning, apart from the format fixtures (tests that import every file there count them)."""


@pytest_asyncio.fixture
async def engine(tmp_path: Path) -> AsyncIterator[Engine]:
    opened = await Engine.open(tmp_path / "data")
    yield opened
    await opened.aclose()


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("fixture", "source", "words"),
    [
        ("claude_thinking.json", SOURCE_ANTHROPIC, "340 + 51"),
        ("chatgpt_thoughts.json", SOURCE_OPENAI, "7 × 13 = 91"),
    ],
)
async def test_imported_reasoning_is_stored_apart_from_the_text(
    engine: Engine, fixture: str, source: str, words: str
) -> None:
    report = await engine.library.import_file(REASONING / fixture)
    assert report.imported == 1 and not report.failed
    (parsed,) = [c for c in read_file(REASONING / fixture) if isinstance(c, ImportedConversation)]
    tree = await engine.store.load_tree(parsed.session_id)
    thinking = [m for m in tree if m.reasoning]
    assert thinking, "some reply has reasoning"
    assert {m.id: m.reasoning for m in thinking} == {
        m.id: m.reasoning for m in parsed.messages if m.reasoning
    }
    assert all(b.source == source for m in thinking for b in m.reasoning)
    assert any(words in b.text for m in thinking for b in m.reasoning)
    assert all(words not in m.text for m in tree)
    again = await engine.library.import_file(REASONING / fixture)
    assert (again.imported, again.updated) == (0, 0), "a second import finds it unchanged"
