"""A reply's web sources come from the web tool results of its own turn, newest look per URL in
the place of the first, and the request numbers them as the Sources list does."""

from __future__ import annotations

import json

from threadline.core.messages import Message, ToolResult
from threadline.core.sources import SourceKind
from threadline.web.sources import numbered_path, web_sources


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
    assert [s.locator.url for s in sources] == ["https://one.example/x", "https://two.example/"]
    assert all(s.kind is SourceKind.WEB for s in sources)
    assert sources[0].text == "the whole page" and sources[0].label == "one.example"
    assert sources[0].locator.heading == "Page" and sources[1].text == "snippet of https://two.example/"


def test_no_web_results_no_sources() -> None:
    assert web_sources([Message.prompt("hi")]) == ()


def test_the_request_numbers_the_turns_web_results_after_the_knowledge_passages() -> None:
    earlier = results(search("a", "https://old.example/"))
    path = [
        Message.prompt("earlier"),
        earlier,
        Message.prompt("now"),
        results(search("b", "https://one.example/x", "https://two.example/")),
        results(page("c", "https://one.example/x", "the whole page")),
    ]
    sent = numbered_path(path, first=3)  # two knowledge passages came first
    hits = json.loads(sent[3].tool_results[0].text)["results"]
    assert [h["cite"] for h in hits] == ["[3]", "[4]"]
    assert json.loads(sent[4].tool_results[0].text)["cite"] == "[3]", "a page read keeps its result's number"
    assert sent[1] is earlier, "an earlier turn's results are not this reply's sources"
    assert "cite" not in path[3].tool_results[0].text, "the stored results stay as the tool returned them"
    assert [s.locator.url for s in web_sources(path)][1] == "https://two.example/"
