"""Fuzzing the import with mutated exports: it never raises, and never stores part of a chat.

Each example takes one of the hand-written fixtures and replaces, deletes or
retypes values anywhere in it (ids, parents, content parts, timestamps, whole
mappings), then reads it — which must yield conversations and problems, never an
exception — and, for a share of the examples, imports it into a real SQLite file:
every stored chat must then hold exactly the messages its parse produced.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from threadline.engine.importer import import_file
from threadline.interchange.detect import read_file
from threadline.interchange.ids import resolve_session_id
from threadline.interchange.model import ImportedConversation, ImportProblem
from threadline.store.repository import Store

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "import"
DOCUMENTS = {path.name: json.loads(path.read_text()) for path in sorted(FIXTURES.glob("*.json"))}

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["m-0001", "user-1", "w-1", "asst-2", "00000000-0000-4000-8000-000000000000"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


def locations(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            found += locations(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += locations(child, (*path, index))
    return found


@st.composite
def mutated_documents(draw: st.DrawFn) -> Any:
    document = json.loads(json.dumps(DOCUMENTS[draw(st.sampled_from(sorted(DOCUMENTS)))]))
    for _ in range(draw(st.integers(1, 6))):
        places = locations(document)[1:]
        if not places:
            break
        where = draw(st.sampled_from(places))
        parent = document
        for step in where[:-1]:
            parent = parent[step]
        if isinstance(parent, dict) and draw(st.booleans()):
            del parent[where[-1]]
        else:
            parent[where[-1]] = draw(values)
    return document


def check_parse(document: Any, folder: Path) -> tuple[Path, list[ImportedConversation | ImportProblem]]:
    path = folder / "mutated.json"
    path.write_text(json.dumps(document))
    items = read_file(path)
    for item in items:
        assert isinstance(item, ImportedConversation | ImportProblem)
        if isinstance(item, ImportProblem):
            assert item.reason and item.title
    return path, items


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_documents())
def test_mutated_exports_never_raise(document: Any) -> None:
    with tempfile.TemporaryDirectory() as folder:
        check_parse(document, Path(folder))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_documents())
def test_mutated_exports_store_whole_chats_or_nothing(document: Any) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path, items = check_parse(document, Path(folder))
        parsed = [i for i in items if isinstance(i, ImportedConversation)]

        async def run() -> None:
            store = await Store.open(Store.sqlite_url(Path(folder) / "db.sqlite3"), keep_daily_backups=0)
            try:
                report = await import_file(store, path)
                stored = await store.list_sessions(limit=1000) + await store.list_sessions(
                    archived=True, limit=1000
                )
                counts = {info.id: await store.message_count(info.id) for info in stored}
                assert report.imported == len(counts)
                expected: dict[str, list[int]] = {}
                for conversation in parsed:
                    expected.setdefault(resolve_session_id(conversation), []).append(
                        len(conversation.messages)
                    )
                for session_id, count in counts.items():
                    if len(expected.get(session_id, [])) == 1:  # (a chat given twice is merged)
                        assert expected[session_id] == [count]  # whole, or not there at all
                    else:
                        assert session_id in expected
                assert len(report.failed) >= sum(isinstance(i, ImportProblem) for i in items)
            finally:
                await store.close()

        asyncio.run(run())
