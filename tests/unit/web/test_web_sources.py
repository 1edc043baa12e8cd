"""A reply's web sources come from the web tool results of its own turn, newest look per URL."""

from __future__ import annotations

import json

from threadline.core.messages import Message, ToolResult
from threadline.core.sources import SourceKind
from threadline.web.sources import web_sources


def results(*items: ToolResult, parent: str | None = None) -> Message:
    return Message.tool_results_message(tuple(items), parent_id=parent)


def search(call_id: str, *urls: str) -> ToolResult:
    hits = [{"title": f"T {u}", "url": u, "snippet": f"snippet of {u}"} for u in urls]
    return ToolResult(call_id, json.dumps({"query": "q", "results": hits}), tool_name="web_search")


def page(call_id: str, url: str, text: str) -> ToolResult:
    return ToolResult(
        call_id, json.dumps({"url": url, "title": "Page", "text": text}), tool_name="fetch_page"
    )


def test_only_this_turns_results_count_and_a_read_page_replaces_its_snippet() -> None:
    path = [
        Message.prompt("earlier"),
        results(search("a", "https://old.example/")),
        Message.prompt("now"),
        results(search("b", "https://one.example/x", "https://two.example/")),
        results(
            page("c", "https://one.example/x", "the whole page"),
            ToolResult("d", "refused", is_error=True, tool_name="fetch_page"),
            ToolResult("e", json.dumps({"url": "https://notes.example/"}), tool_name="notes"),
        ),
    ]
    sources = web_sources(path)
    assert [s.locator.url for s in sources] == ["https://two.example/", "https://one.example/x"]
    assert all(s.kind is SourceKind.WEB for s in sources)
    assert sources[1].text == "the whole page" and sources[1].label == "one.example"
    assert sources[1].locator.heading == "Page" and sources[0].text == "snippet of https://two.example/"


def test_no_web_results_no_sources() -> None:
    assert web_sources([Message.prompt("hi")]) == ()
