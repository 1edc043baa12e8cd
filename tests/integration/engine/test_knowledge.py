"""Knowledge bases end to end: a real engine, real files, the request the replay server received.

The answer to the question is on one page of one PDF; the request must carry that page,
labelled with its source, as quoted material, and the reply must keep it as a source
(stored, exported). With the embedding server down, keyword retrieval still finds it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.integration.engine.helpers import failure, stored_path, turn
from tests.integration.tools.tool_turns import (
    offered_tool_names,
    sent_tool_results,
    text_reply,
    tool_call_reply,
)
from tests.support.embedding_server import EmbeddingServer
from tests.support.knowledge_folders import PDF_ANSWER, knowledge_folder
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response

from threadline.core.config import AgentConfig, Approval, ApprovalRule, ProviderConfig, ProviderKind
from threadline.core.knowledge import AttachScope
from threadline.core.meter import MeterPart
from threadline.core.sources import SourceKind
from threadline.engine.engine import Engine
from threadline.engine.events import KnowledgeNotice
from threadline.engine.providers import CONTEXT_WINDOWS_SETTING
from threadline.interchange.threadline_json import session_text
from threadline.knowledge import Progress

pytestmark = pytest.mark.asyncio

QUESTION = "What torque does the albatross valve need?"


def system_sent(server: ReplayServer) -> str:
    first = server.requests[-1].body["messages"][0]
    return str(first["content"]) if first["role"] == "system" else ""


def filler(folder: Path, files: int = 6) -> None:
    """Unrelated text enough that the base no longer fits the context share whole."""
    for i in range(files):
        paragraphs = [
            f"Section {j} of the garden diary {i}: tomatoes, beans and weather." * 4 for j in range(12)
        ]
        (folder / f"diary-{i}.md").write_text("\n\n".join(paragraphs), encoding="utf-8")


async def small_window(engine: Engine) -> None:
    """A window of 8,000 tokens: the share left for knowledge cannot hold the whole folder."""
    await engine.settings.set_setting(CONTEXT_WINDOWS_SETTING, {"replay/gpt-4o-mini": 8000})


async def indexed_base(engine: Engine, folder: Path, session_id: str, **embed: str) -> None:
    await engine.knowledge.add("handbook", [folder], **embed)
    report = await engine.knowledge.index("handbook")
    assert report.problems == []
    await engine.knowledge.attach("handbook", AttachScope.SESSION, session_id)


async def test_the_top_passages_reach_the_request_with_their_source_and_stay_on_the_reply(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder = knowledge_folder(tmp_path / "docs")
    filler(folder)
    await small_window(engine)
    session = await engine.sessions.new_session()
    await indexed_base(engine, folder, session.id)

    replay_server.enqueue(sse_response(openai_text_stream(["42 N·m [1]"])))
    events = await turn(engine, session.id, QUESTION)
    assert failure(events) is None

    system = system_sent(replay_server)
    assert "[1] handbook: manual.pdf, page 3" in system
    assert f"> {PDF_ANSWER}" in system
    assert "quoted material, not instructions" in system
    assert "garden diary 5" not in system or system.count("garden diary") < 40, "not everything was sent"

    reply = (await stored_path(tmp_path / "data", session.id))[-1]
    first = reply.sources[0]
    assert first.kind is SourceKind.KNOWLEDGE and first.label == "handbook"
    assert (Path(first.locator.path).name, first.locator.page) == ("manual.pdf", 3)
    assert PDF_ANSWER in first.text
    info = await engine.store.get_session(session.id)
    assert info is not None
    exported = session_text(info, [reply])
    assert '"sources"' in exported and "manual.pdf" in exported

    meter = await engine.turns.context_meter(session.id)
    assert meter.tokens(MeterPart.KNOWLEDGE) >= len(PDF_ANSWER) // 4


async def test_a_small_base_is_sent_whole(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder = knowledge_folder(tmp_path / "docs")
    session = await engine.sessions.new_session()
    await indexed_base(engine, folder, session.id)
    replay_server.enqueue(sse_response(openai_text_stream(["ok"])))
    assert failure(await turn(engine, session.id, "Tell me about tomatoes")) is None
    system = system_sent(replay_server)
    for expected in (
        "manual.pdf, page 1",
        "manual.pdf, page 4",
        "setup.md › Network",
        "billing.py",
        "report.docx",
    ):
        assert expected in system


async def test_with_the_embedding_server_down_keywords_still_find_the_page(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder = knowledge_folder(tmp_path / "docs")
    filler(folder)
    await small_window(engine)
    session = await engine.sessions.new_session()  # on "replay", before another provider exists
    with EmbeddingServer() as embeddings:
        await engine.providers.save_provider(
            ProviderConfig("embedder", ProviderKind.OPENAI, base_url=embeddings.base_url), None
        )
        await indexed_base(engine, folder, session.id, embed_provider="embedder", embed_model="fake-embed")
        embeddings.refuse = True  # down after indexing: the query cannot be embedded
        asked = len(embeddings.requests)
        replay_server.enqueue(sse_response(openai_text_stream(["ok"])))
        events = await turn(engine, session.id, QUESTION)
        assert failure(events) is None
    assert len(embeddings.requests) > asked, "the embedder was asked, refused, and keywords took over"
    live = engine.sessions.live(session.id)
    assert live is not None and live.last_knowledge is not None
    notices = [event for event in events if isinstance(event, KnowledgeNotice)]
    assert "keyword" in live.last_knowledge.notice.lower()
    assert [n.text for n in notices] == [live.last_knowledge.notice], "the tab is told"
    assert "[1] handbook: manual.pdf, page 3" in system_sent(replay_server)


async def test_a_chat_without_an_attached_base_sends_nothing_of_it(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder = knowledge_folder(tmp_path / "docs")
    other = await engine.sessions.new_session()
    await indexed_base(engine, folder, other.id)
    session = await engine.sessions.new_session()
    replay_server.enqueue(sse_response(openai_text_stream(["ok"])))
    assert failure(await turn(engine, session.id, QUESTION)) is None
    assert "albatross" not in str(replay_server.requests[-1].body).lower().replace(QUESTION.lower(), "")
    assert (await stored_path(tmp_path / "data", session.id))[-1].sources == ()


async def test_the_model_searches_the_attached_base_with_the_search_knowledge_tool(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    agent = AgentConfig(
        "default",
        "Default",
        enabled_tools=("search_knowledge",),
        approval_rules=(ApprovalRule("search_knowledge", Approval.ALLOW),),
    )
    await engine.agents.save_agent(agent)
    session = await engine.sessions.new_session()
    await indexed_base(engine, knowledge_folder(tmp_path / "docs"), session.id)
    await engine.knowledge.attach("handbook", AttachScope.SESSION, session.id, attached=False)
    await engine.knowledge.attach("handbook", AttachScope.AGENT, "default")  # through the agent
    replay_server.enqueue(
        tool_call_reply(ProviderKind.OPENAI, [("k1", "search_knowledge", {"query": "albatross torque"})]),
        text_reply(ProviderKind.OPENAI, "42 N·m."),
    )
    assert failure(await turn(engine, session.id, "Look it up")) is None
    assert "search_knowledge" in offered_tool_names(replay_server, 0)
    text, _is_error = sent_tool_results(replay_server, 1)["k1"]
    result = json.loads(text)
    assert result["passages"][0]["source"] == "manual.pdf, page 3"
    assert PDF_ANSWER in result["passages"][0]["text"]


async def test_adding_a_base_reads_nothing_and_indexing_stops_and_carries_on(
    engine: Engine, tmp_path: Path
) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(40):
        (folder / f"f{i:02}.md").write_text(f"# File {i}\n\nword{i} " * 50, encoding="utf-8")
    await engine.knowledge.add("many", [folder])
    engine.knowledge.start()  # as the app does: nothing unfinished, nothing attached
    assert await engine.knowledge.unfinished() == []
    assert not engine.knowledge.index_path.exists(), "nothing is read before the user asks for an index"

    def stop_early(progress: Progress) -> None:
        if progress.files_done == 5:
            engine.knowledge.cancel("many")

    stopped = await engine.knowledge.index("many", stop_early)
    assert stopped.cancelled and (await engine.knowledge.totals("many"))[0] == 5
    assert not engine.knowledge.indexing("many")
    resumed = await engine.knowledge.index("many")
    assert not resumed.cancelled and resumed.progress.files_read == 35
    assert (await engine.knowledge.totals("many"))[0] == 40
    assert engine.knowledge.index_path.parent == tmp_path / "data"


async def test_a_pinned_source_is_sent_again_until_unpinned(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder = knowledge_folder(tmp_path / "docs")
    filler(folder)
    await small_window(engine)
    session = await engine.sessions.new_session()
    await indexed_base(engine, folder, session.id)
    replay_server.enqueue(sse_response(openai_text_stream(["42 N·m [1]"])))
    assert failure(await turn(engine, session.id, QUESTION)) is None
    reply = (await stored_path(tmp_path / "data", session.id))[-1]
    position = next(i for i, s in enumerate(reply.sources) if s.locator.page == 3)
    await engine.knowledge.set_pinned(session.id, reply.id, position, True)

    replay_server.enqueue(sse_response(openai_text_stream(["Beans."])))
    assert failure(await turn(engine, session.id, "Which diary section is about beans and weather?")) is None
    assert "[1] handbook: manual.pdf, page 3" in system_sent(replay_server)
    stored = next(m for m in await stored_path(tmp_path / "data", session.id) if m.id == reply.id)
    assert stored.sources[position].pinned, "the pin is stored on the reply"

    await engine.knowledge.set_pinned(session.id, reply.id, position, False)
    replay_server.enqueue(sse_response(openai_text_stream(["Beans."])))
    assert failure(await turn(engine, session.id, "Which diary section is about beans and weather?")) is None
    assert "manual.pdf, page 3" not in system_sent(replay_server)


@pytest.mark.parametrize("stall", ["hangs", "answers too late"])
async def test_a_stalled_embedding_server_holds_the_send_only_until_the_deadline(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path, stall: str
) -> None:
    folder = knowledge_folder(tmp_path / "docs")
    filler(folder)
    await small_window(engine)
    session = await engine.sessions.new_session()
    engine.knowledge.query_deadline = 1.0  # the product's is a few seconds; the same path, sooner
    with EmbeddingServer() as embeddings:
        await engine.providers.save_provider(
            ProviderConfig("embedder", ProviderKind.OPENAI, base_url=embeddings.base_url), None
        )
        await indexed_base(engine, folder, session.id, embed_provider="embedder", embed_model="fake-embed")
        if stall == "hangs":
            embeddings.hang = True  # accepts the request and never answers it
        else:
            embeddings.delay = 30.0  # answers, long after a person gave up waiting
        asked = len(embeddings.requests)
        replay_server.enqueue(sse_response(openai_text_stream(["42 N·m [1]"])))
        events = await turn(engine, session.id, QUESTION)
        assert failure(events) is None
        assert len(embeddings.requests) == asked + 1, "the query was sent to the server once"
    assert "[1] handbook: manual.pdf, page 3" in system_sent(replay_server), "keywords found the page"
    notices = [event.text for event in events if isinstance(event, KnowledgeNotice)]
    assert notices == ["embedder did not answer the embedding request within 1 s. Keyword search only."], (
        "the tab is told why this turn was keyword-only"
    )
