"""``threadline://`` links are read and checked before anything is shown (docs/desktop.md, "Links")."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from threadline.__main__ import split_open_targets
from threadline.tools.mcp.config import Transport
from threadline.ui.desktop.links import BadLink, McpInstallLink, NewChatLink, parse_link


def test_a_new_chat_link_carries_its_prompt() -> None:
    assert parse_link("threadline://new?prompt=What%20is%20WAL%3F") == NewChatLink("What is WAL?")
    assert parse_link("threadline://new") == NewChatLink("")


@pytest.mark.parametrize(
    "encode", [lambda t: t, lambda t: base64.urlsafe_b64encode(t.encode()).decode().rstrip("=")]
)
def test_an_mcp_link_describes_a_server_plain_or_base64(encode: object) -> None:
    config = json.dumps({"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}})
    assert callable(encode)
    link = parse_link(f"threadline://mcp/install?name=time&config={encode(config)}")
    assert isinstance(link, McpInstallLink)
    assert (link.config.name, link.config.command, link.config.args) == ("time", "uvx", ("mcp-server-time",))
    assert link.config.env == {"TZ": "UTC"}
    remote = parse_link('threadline://mcp/install?name=linear&config={"url":"https://mcp.linear.app/mcp"}')
    assert isinstance(remote, McpInstallLink) and remote.config.transport is Transport.HTTP


@pytest.mark.parametrize(
    "url",
    [
        "threadline://delete-everything",
        "https://example.com",
        "threadline://mcp/install?name=x",
        'threadline://mcp/install?name=bad%20name&config={"command":"x"}',
        'threadline://mcp/install?name=x&config={"command":"x","args":"not a list"}',
        "threadline://mcp/install?name=x&config=%%%",
    ],
)
def test_links_it_cannot_follow_say_why(url: str) -> None:
    with pytest.raises(BadLink):
        parse_link(url)


def test_files_and_links_on_the_command_line_are_split_from_the_options(tmp_path: Path) -> None:
    export = tmp_path / "chats.json"
    export.write_text("{}", encoding="utf-8")
    words = ["--data-dir", str(tmp_path), str(export), "threadline://new?prompt=x", "--new-chat"]
    assert split_open_targets(words) == (
        ["--data-dir", str(tmp_path), "--new-chat"],
        [str(export), "threadline://new?prompt=x"],
    )
    # a command, a missing file or a file Threadline does not open: the parsers read the words
    for words in (["ask", "hello"], [str(tmp_path / "missing.json")], ["--data-dir", str(export)]):
        assert split_open_targets(words) == (words, [])
