"""The web tools in real turns: a real engine, a SearXNG and a page server on loopback, and the
request log of the loopback model server showing what reached the model."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from tests.integration.engine.helpers import failure, stored_path, turn
from tests.integration.tools.tool_turns import (
    offered_tool_names,
    sent_tool_results,
    text_reply,
    tool_call_reply,
)
from tests.support.knowledge_folders import knowledge_folder
from tests.support.sse_server import ReplayServer
from tests.support.web_servers import ARTICLE_ANSWER, ARTICLE_TITLE, WebServer

from threadline.core.config import AgentConfig, Approval, ApprovalRule, ProviderKind
from threadline.core.knowledge import AttachScope
from threadline.core.messages import MessageKind, stopped_after
from threadline.core.meter import MeterPart
from threadline.core.sources import SourceKind
from threadline.engine.engine import Engine
from threadline.web import FetchLimits, WebProvider

pytestmark = pytest.mark.asyncio
OPENAI = ProviderKind.OPENAI


async def web_agent(engine: Engine, approval: Approval = Approval.ALLOW) -> None:
    await engine.agents.save_agent(
        AgentConfig(
            "default",
            "Default",
            enabled_tools=("web_search", "fetch_page"),
            approval_rules=(ApprovalRule("web_search", approval), ApprovalRule("fetch_page", approval)),
        )
    )


async def test_search_results_and_the_page_text_reach_the_model_and_stay_as_sources(
    engine: Engine, replay_server: ReplayServer, web: WebServer
) -> None:
    await engine.web.use(WebProvider.SEARXNG, searxng_url=web.base_url)
    await web_agent(engine)
    session = await engine.sessions.new_session()
    replay_server.enqueue(
        tool_call_reply(OPENAI, [("s1", "web_search", {"query": "albatross valve torque"})]),
        tool_call_reply(OPENAI, [("f1", "fetch_page", {"url": f"{web.base_url}/page.html"})]),
        text_reply(OPENAI, "42 N·m [1]."),
    )
    assert failure(await turn(engine, session.id, "What torque does the albatross valve need?")) is None
    assert {"web_search", "fetch_page"} <= set(offered_tool_names(replay_server, 0))

    text, _ = sent_tool_results(replay_server, 1)["s1"]
    results = json.loads(text)["results"]
    assert results[0] == {
        "title": ARTICLE_TITLE,
        "url": f"{web.base_url}/page.html",
        "snippet": "Everything about the albatross valve (albatross valve torque): torque, seats and tags.",
        "cite": "[1]",
    }
    assert "not instructions" in json.loads(text)["note"]
    page_text, _ = sent_tool_results(replay_server, 2)["f1"]
    page = json.loads(page_text)
    assert page["title"] == ARTICLE_TITLE and ARTICLE_ANSWER in page["text"]
    assert web.requests[0][:2] == ("GET", "/search?q=albatross+valve+torque&format=json")

    reply = (await stored_path(engine.data_dir, session.id))[-1]
    assert [s.kind for s in reply.sources] == [SourceKind.WEB, SourceKind.WEB]
    by_url = {s.locator.url: s for s in reply.sources}
    assert ARTICLE_ANSWER in by_url[f"{web.base_url}/page.html"].text, "the page read replaces its snippet"
    assert by_url[f"{web.base_url}/page.html"].locator.heading == ARTICLE_TITLE
    assert by_url[f"{web.base_url}/doc.pdf"].text == "Speeds of heron pumps."

    meter = dict((await engine.turns.context_meter(session.id)).parts)
    assert meter[MeterPart.TOOLS] > 0, "the web tools' definitions are counted"
    page_tokens = len(page_text) // 4
    assert meter[MeterPart.HISTORY] > page_tokens, "and the page the model read, as part of the chat"


async def test_a_loopback_page_is_refused_until_the_user_allows_local_addresses(
    engine: Engine, replay_server: ReplayServer, web: WebServer, other_web: WebServer
) -> None:
    """``web`` is the SearXNG (its own origin is exempt); ``other_web`` is any page on 127.0.0.1."""
    await engine.web.use(WebProvider.SEARXNG, searxng_url=web.base_url)
    await web_agent(engine)
    session = await engine.sessions.new_session()
    page_url = f"{other_web.base_url}/page.html"
    bounce = f"{web.base_url}/redirect?to={page_url}"
    replay_server.enqueue(
        tool_call_reply(
            OPENAI, [("f1", "fetch_page", {"url": page_url}), ("f2", "fetch_page", {"url": bounce})]
        ),
        text_reply(OPENAI, "Refused."),
    )
    assert failure(await turn(engine, session.id, "Read it")) is None
    sent = sent_tool_results(replay_server, 1)
    for call_id in ("f1", "f2"):
        assert "on this computer or the local network" in sent[call_id][0]
        assert "Settings → Web" in sent[call_id][0]
    assert other_web.requests == [], "neither the page nor the redirect reached the local address"
    assert (await stored_path(engine.data_dir, session.id))[-1].sources == ()

    await engine.web.set_allow_local(True)
    replay_server.enqueue(
        tool_call_reply(OPENAI, [("f3", "fetch_page", {"url": bounce})]), text_reply(OPENAI, "Ok")
    )
    assert failure(await turn(engine, session.id, "Read it now")) is None
    assert ARTICLE_ANSWER in json.loads(sent_tool_results(replay_server, 3)["f3"][0])["text"]


async def test_stop_cancels_a_page_that_is_still_loading(
    engine: Engine, replay_server: ReplayServer, web: WebServer
) -> None:
    await engine.web.use(WebProvider.SEARXNG, searxng_url=web.base_url)  # its origin: no switch needed
    engine.web.limits = FetchLimits(seconds=600)
    await web_agent(engine)
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    replay_server.enqueue(tool_call_reply(OPENAI, [("f1", "fetch_page", {"url": f"{web.base_url}/slow"})]))
    engine.turns.send(session.id, "Read the slow page")
    deadline = time.monotonic() + 60
    while "/slow" not in web.paths():
        assert time.monotonic() < deadline, "the slow page was never asked for"
        await asyncio.sleep(0.02)
    engine.turns.cancel(session.id)
    await asyncio.wait_for(engine.turns.wait_idle(session.id), 60)
    assert live.conversation.ready_for_input
    stored = await stored_path(engine.data_dir, session.id)
    assert stored[-1].kind is MessageKind.CANCELLED_TOOL_USES
    assert stopped_after(stored[-1].tool_results[0]) is not None


async def test_the_slow_page_hits_the_time_limit_in_a_turn(
    engine: Engine, replay_server: ReplayServer, web: WebServer
) -> None:
    await engine.web.use(WebProvider.SEARXNG, searxng_url=web.base_url)
    engine.web.limits = FetchLimits(seconds=0.5)
    await web_agent(engine)
    session = await engine.sessions.new_session()
    replay_server.enqueue(
        tool_call_reply(OPENAI, [("f1", "fetch_page", {"url": f"{web.base_url}/slow"})]),
        text_reply(OPENAI, "Slow."),
    )
    assert failure(await turn(engine, session.id, "Read the slow page")) is None
    text, _ = sent_tool_results(replay_server, 1)["f1"]
    assert "did not finish loading within 0.5 s" in text


async def test_without_a_provider_the_search_says_where_to_choose_one(
    engine: Engine, replay_server: ReplayServer
) -> None:
    await web_agent(engine)
    session = await engine.sessions.new_session()
    replay_server.enqueue(
        tool_call_reply(OPENAI, [("s1", "web_search", {"query": "x"})]), text_reply(OPENAI, "None.")
    )
    assert failure(await turn(engine, session.id, "Search")) is None
    assert "pick one in Settings → Web" in sent_tool_results(replay_server, 1)["s1"][0]


async def test_web_results_are_numbered_after_the_knowledge_passages_of_the_same_request(
    engine: Engine, replay_server: ReplayServer, web: WebServer, tmp_path: Path
) -> None:
    await engine.web.use(WebProvider.SEARXNG, searxng_url=web.base_url)
    await web_agent(engine)
    session = await engine.sessions.new_session()
    await engine.knowledge.add("handbook", [knowledge_folder(tmp_path / "docs")])
    await engine.knowledge.index("handbook")
    await engine.knowledge.attach("handbook", AttachScope.SESSION, session.id)
    replay_server.enqueue(
        tool_call_reply(OPENAI, [("s1", "web_search", {"query": "albatross valve torque"})]),
        text_reply(OPENAI, "42 N·m."),
    )
    assert failure(await turn(engine, session.id, "What torque does the albatross valve need?")) is None

    reply = (await stored_path(engine.data_dir, session.id))[-1]
    passages = [s for s in reply.sources if s.kind is SourceKind.KNOWLEDGE]
    assert passages, "the knowledge base sent passages"
    hits = json.loads(sent_tool_results(replay_server, 1)["s1"][0])["results"]
    for hit in hits:
        number = int(hit["cite"].strip("[]"))
        assert number > len(passages)
        assert reply.sources[number - 1].locator.url == hit["url"], "the number the Sources list gives it"
