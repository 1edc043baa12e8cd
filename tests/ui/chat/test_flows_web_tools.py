"""The web tools in the window: asked about with their arguments, answered with the mouse
(allow once, always allow, deny), their results shown in the chat and sent to the model, and
the page text reaching the model, numbered as the reply's Sources show them — a real engine,
a SearXNG and page server on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.sse_server import openai_text_stream, openai_tool_call_stream, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle
from tests.support.waiting import WAIT_MS
from tests.support.web_servers import ARTICLE_ANSWER, ARTICLE_TITLE, WebServer
from tests.ui.approval.test_flows_approval import click, sent_results, wait_asked
from tests.ui.chat.test_flows_sources import DesktopUrls, desktop  # noqa: F401 (a fixture)
from tests.ui.chat.test_flows_sources import click as click_anchor

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.messages import MessageKind
from threadline.core.sources import SourceKind
from threadline.web import WebProvider


@pytest.fixture
def web(tmp_path: Path) -> Iterator[WebServer]:
    (tmp_path / "pdf").mkdir()
    with WebServer(tmp_path / "pdf") as server:
        yield server


def tool_reply(*calls: tuple[str, str, dict[str, Any]]) -> Any:
    return sse_response(openai_tool_call_stream(list(calls), text_pieces=["Let me look."]))


def test_search_then_read_asked_shown_and_sent(harness: Any, web: WebServer) -> None:
    page_url = f"{web.base_url}/page.html"
    harness.server.enqueue(
        tool_reply(("s1", "web_search", {"query": "albatross valve torque"})),
        tool_reply(("f1", "fetch_page", {"url": page_url})),
        sse_response(openai_text_stream(["42 N·m."])),
    )
    harness.open()
    harness.run(harness.engine.web.use(WebProvider.SEARXNG, searxng_url=web.base_url))
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig("default", "Default", enabled_tools=("web_search", "fetch_page"))
        )
    )
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "What torque does the albatross valve need?")

    (row,) = wait_asked(harness, tab)
    assert row.name_label.text() == "web_search"
    assert any("albatross valve torque" in box.text for box in row.boxes), "the arguments are shown"
    assert web.requests == [], "nothing is searched before the user allows it"
    click(harness, row.allow_button)

    (row,) = wait_asked(harness, tab)
    assert row.name_label.text() == "fetch_page" and any(page_url in box.text for box in row.boxes)
    click(harness, row.always_button)
    wait_idle(harness, tab)

    path = tab.live.conversation.path()
    results = [m for m in path if m.kind is MessageKind.TOOL_RESULTS]
    assert len(results) == 2 and all(m.id in tab.view.visible_message_ids() for m in results)
    assert json.loads(sent_results(harness, 1)["s1"])["results"][0]["title"] == ARTICLE_TITLE
    assert ARTICLE_ANSWER in json.loads(sent_results(harness, 2)["f1"])["text"]
    assert {s.kind for s in path[-1].sources} == {SourceKind.WEB}
    rules = harness.run(harness.engine.agents.get_agent()).approval_rules
    assert ApprovalRule("fetch_page", Approval.ALLOW) in rules
    assert not any(rule.pattern == "web_search" for rule in rules), "allow once stores no rule"


def test_a_denied_page_is_not_fetched(harness: Any, web: WebServer) -> None:
    harness.server.enqueue(
        tool_reply(("f1", "fetch_page", {"url": f"{web.base_url}/page.html"})),
        sse_response(openai_text_stream(["Fine."])),
    )
    harness.open()
    harness.run(harness.engine.web.use(WebProvider.SEARXNG, searxng_url=web.base_url))
    harness.run(
        harness.engine.agents.save_agent(AgentConfig("default", "Default", enabled_tools=("fetch_page",)))
    )
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Read that page")
    (row,) = wait_asked(harness, tab)
    click(harness, row.deny_button)
    wait_idle(harness, tab)
    harness.qtbot.waitUntil(lambda: tab.live.conversation.path()[-1].text == "Fine.", timeout=WAIT_MS)
    assert web.requests == [] and "f1" in sent_results(harness, 1)


def test_the_model_is_told_the_numbers_the_sources_show_so_its_citation_opens_the_right_page(
    harness: Any,
    web: WebServer,
    desktop: DesktopUrls,  # noqa: F811 (the fixture imported above)
) -> None:
    harness.server.enqueue(
        tool_reply(("s1", "web_search", {"query": "heron pump speed"})),
        sse_response(openai_text_stream(["Heron pumps run at 1450 rpm [2]."])),
    )
    harness.open()
    harness.run(harness.engine.web.use(WebProvider.SEARXNG, searxng_url=web.base_url))
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig(
                "default",
                "Default",
                enabled_tools=("web_search",),
                approval_rules=(ApprovalRule("web_search", Approval.ALLOW),),
            )
        )
    )
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "How fast do heron pumps run?")
    wait_idle(harness, tab)

    hits = json.loads(sent_results(harness, 1)["s1"])["results"]
    assert [(h["cite"], h["url"]) for h in hits] == [
        ("[1]", f"{web.base_url}/page.html"),
        ("[2]", f"{web.base_url}/doc.pdf"),
    ], "the request numbers each result"
    reply = tab.live.conversation.path()[-1]
    assert [s.locator.url for s in reply.sources] == [h["url"] for h in hits], "as the Sources box does"
    click_anchor(harness, tab, reply.id, "source:cite:2")
    harness.qtbot.waitUntil(lambda: desktop.urls == [f"{web.base_url}/doc.pdf"], timeout=WAIT_MS)
