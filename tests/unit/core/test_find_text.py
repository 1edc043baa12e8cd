"""Find in a chat over message data (core.find_text)."""

from __future__ import annotations

from threadline.core.find_text import (
    TEXT_PART,
    FindIndex,
    Match,
    find_matches,
    iter_matches,
    searchable_parts,
)
from threadline.core.messages import Message, MessageKind, Role, ToolCall, ToolResult


def reply(text: str, *, calls: tuple[ToolCall, ...] = (), mid: str = "r") -> Message:
    return Message(
        id=mid, parent_id=None, role=Role.ASSISTANT, kind=MessageKind.RESPONSE, text=text, tool_calls=calls
    )


def results(*items: ToolResult, mid: str = "t") -> Message:
    return Message(id=mid, parent_id=None, role=Role.USER, kind=MessageKind.TOOL_RESULTS, tool_results=items)


def test_matches_ignore_case_and_come_in_reading_order() -> None:
    messages = [reply("Oslo and OSLO", mid="a"), reply("nothing", mid="b"), reply("oslo!", mid="c")]
    assert find_matches(messages, "oslo") == [
        Match(0, TEXT_PART, 0, 4),
        Match(0, TEXT_PART, 9, 4),
        Match(2, TEXT_PART, 0, 4),
    ]
    assert find_matches(messages, "oslo", case_sensitive=True) == [Match(2, TEXT_PART, 0, 4)]
    assert find_matches(messages, "") == []
    assert find_matches(messages, "absent") == []


def test_tool_arguments_and_output_are_searched_with_their_box_key() -> None:
    call = ToolCall("c1", "weather", '{"city": "Bergen"}')
    messages = [
        reply("Checking.", calls=(call,), mid="r1"),
        results(ToolResult("c1", "Rain in Bergen all week", tool_name="weather"), mid="t1"),
    ]
    assert find_matches(messages, "bergen") == [
        Match(0, "r1:c1", 13, 6),
        Match(1, "t1:c1", 8, 6),
    ]  # in {\n  "city": "Bergen"\n}
    assert [key for key, _ in searchable_parts(messages[0])] == [TEXT_PART, "r1:c1"]


def test_offsets_stay_true_when_lowering_changes_length() -> None:
    text = "İstanbul, then istanbul"  # "İ".lower() is two characters
    found = find_matches([reply(text)], "istanbul")
    assert [text[m.offset : m.offset + m.length] for m in found] == ["İstanbul", "istanbul"]


def test_overlapping_text_counts_each_start_once_and_limit_stops_early() -> None:
    assert [m.offset for m in find_matches([reply("aaaa")], "aa")] == [0, 2]
    many = [reply("x " * 100, mid=str(i)) for i in range(100)]
    assert len(find_matches(many, "x", limit=7)) == 7
    first = next(iter_matches(many, "x"))
    assert first == Match(0, TEXT_PART, 0, 1)


def test_the_index_prepares_a_message_again_only_when_its_version_changes() -> None:
    index = FindIndex()
    old = reply("alpha", mid="m")
    assert len(find_matches([old], "alpha", index=index, versions=[1])) == 1
    new = reply("beta", mid="m")
    assert find_matches([new], "beta", index=index, versions=[1]) == []  # same version: kept
    assert len(find_matches([new], "beta", index=index, versions=[2])) == 1
    assert find_matches([new], "beta", index=index, versions=[2]) == [Match(0, TEXT_PART, 0, 4)]


def test_the_text_is_searched_as_shown_text_gives_it() -> None:
    """The view's text (Markdown rendered) is what is searched: a match split by markup is
    found, one in a link's address is not, and offsets are in the shown text."""
    message = reply("**foo** bar, see [the docs](https://foo.example/bar)", mid="m")

    def shown(m: Message) -> str:
        assert m is message
        return "foo bar, see the docs"

    assert find_matches([message], "foo bar") == []  # the stored text has markup between them
    assert find_matches([message], "foo bar", shown_text=shown) == [Match(0, TEXT_PART, 0, 7)]
    assert find_matches([message], "foo", shown_text=shown) == [Match(0, TEXT_PART, 0, 3)]
    index = FindIndex()
    assert len(find_matches([message], "foo", index=index, versions=[1])) == 2  # one in the address
    assert len(find_matches([message], "foo", index=index, versions=[1], shown_text=shown)) == 1
    assert [key for key, _ in searchable_parts(reply("**", mid="x"), lambda _m: "")] == []


def test_a_json_tool_result_is_searched_as_its_box_shows_it() -> None:
    """Indented and unescaped, like the open box: "Tromsø" is found in ``"Troms\\u00f8"``."""
    raw = '{"city":"Troms\\u00f8","days":[1,2]}'
    found = find_matches([results(ToolResult("c1", raw, tool_name="weather"), mid="t1")], "tromsø")
    assert len(found) == 1
    shown = searchable_parts(results(ToolResult("c1", raw), mid="t1"))[0][1]
    assert shown == '{\n  "city": "Tromsø",\n  "days": [\n    1,\n    2\n  ]\n}'
    assert searchable_parts(results(ToolResult("c1", "[not json"), mid="t1"))[0][1] == "[not json"
    assert searchable_parts(results(ToolResult("c1", '"a string"'), mid="t1"))[0][1] == '"a string"'
