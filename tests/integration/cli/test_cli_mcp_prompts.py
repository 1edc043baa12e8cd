"""``threadline mcp prompts|resources NAME``, ``ask "/server:prompt name=value"`` and
``ask --resource NAME:URI`` with the real ``server-everything`` (stdio)."""

from __future__ import annotations

from pathlib import Path

from tests.integration.cli.test_cli_ask import add_replay_provider, stored_sessions
from tests.integration.cli.test_cli_ask_attach import sent_text
from tests.support.cli_process import threadline
from tests.support.everything import STATIC_TEXT, everything_config
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response


def add_everything(data_dir: Path) -> None:
    config = everything_config()
    result = threadline(data_dir, "mcp", "add", "everything", "--", config.command, *config.args)
    assert result.returncode == 0, result.stderr


def test_mcp_prompts_and_resources_list_what_the_server_offers(tmp_path: Path) -> None:
    add_everything(tmp_path)
    prompts = threadline(tmp_path, "mcp", "prompts", "everything")
    assert prompts.returncode == 0, prompts.stderr
    lines = prompts.stdout.splitlines()
    assert "/everything:simple-prompt\tA prompt with no arguments" in lines
    assert any(line.startswith("/everything:args-prompt city=… [state=…]\t") for line in lines)
    resources = threadline(tmp_path, "mcp", "resources", "everything")
    assert resources.returncode == 0, resources.stderr
    lines = resources.stdout.splitlines()
    assert f"{STATIC_TEXT}\ttext/markdown\tarchitecture.md" in lines
    assert "demo://resource/dynamic/text/{resourceId}\ttemplate\tDynamic Text Resource" in lines
    unknown = threadline(tmp_path, "mcp", "prompts", "nowhere")
    assert unknown.returncode == 1 and "no MCP server named 'nowhere'" in unknown.stderr


def test_ask_with_a_prompt_sends_its_messages_as_the_users_turn(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)
    add_everything(tmp_path)
    replay_server.enqueue(sse_response(openai_text_stream(["Analysed."])))
    result = threadline(tmp_path, "ask", "/everything:resource-prompt resourceType=Text resourceId=5")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Analysed.\n"
    text = sent_text(replay_server)
    assert "This prompt includes the Text resource with id: 5" in text
    assert "Resource 5: This is a plaintext resource" in text  # the embedded resource, attached
    (path,) = stored_sessions(tmp_path)
    assert path[0].text.startswith("This prompt includes the Text resource")
    assert [c.name for c in path[0].context] == ["everything: demo://resource/dynamic/text/5"]


def test_ask_with_a_prompt_missing_an_argument_sends_nothing(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)
    add_everything(tmp_path)
    before = len(replay_server.requests)
    result = threadline(tmp_path, "ask", "/everything:args-prompt state=Texas")
    assert result.returncode == 1
    assert result.stderr.strip().endswith(
        "/everything:args-prompt needs city=… (usage: /everything:args-prompt city=… [state=…])"
    )
    assert len(replay_server.requests) == before
    assert stored_sessions(tmp_path) == []  # refused before any chat was made


def test_an_escaped_prompt_command_is_sent_as_written(tmp_path: Path, replay_server: ReplayServer) -> None:
    add_replay_provider(tmp_path, replay_server)
    add_everything(tmp_path)
    replay_server.enqueue(sse_response(openai_text_stream(["Text."])))
    result = threadline(tmp_path, "ask", "//everything:args-prompt city=Lyon")
    assert result.returncode == 0, result.stderr
    assert sent_text(replay_server) == "/everything:args-prompt city=Lyon"


def test_ask_resource_attaches_the_resource(tmp_path: Path, replay_server: ReplayServer) -> None:
    add_replay_provider(tmp_path, replay_server)
    add_everything(tmp_path)
    replay_server.enqueue(sse_response(openai_text_stream(["Read it."])))
    result = threadline(tmp_path, "ask", "--resource", f"everything:{STATIC_TEXT}", "Summarise this")
    assert result.returncode == 0, result.stderr
    assert f"attached everything: {STATIC_TEXT}" in result.stderr
    text = sent_text(replay_server)
    assert "Summarise this" in text and "Everything Server – Architecture" in text
    (path,) = stored_sessions(tmp_path)
    assert [c.name for c in path[0].context] == [f"everything: {STATIC_TEXT}"]
