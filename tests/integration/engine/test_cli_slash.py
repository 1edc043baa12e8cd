"""`threadline ask` with slash commands, as separate processes against the replay server."""

from __future__ import annotations

from pathlib import Path

from tests.integration.engine.test_cli_ask import add_replay_provider, stored_sessions, threadline
from tests.support.sse_server import ReplayServer, ScriptedResponse, openai_text_stream, sse_response

from threadline.core.messages import MessageKind


def reply(text: str) -> ScriptedResponse:
    return sse_response(openai_text_stream([text]))


def ask(data_dir: Path, *args: str) -> tuple[int, str, str]:
    result = threadline(data_dir, "ask", *args)
    return result.returncode, result.stdout, result.stderr


def chat_of_three_turns(data_dir: Path, server: ReplayServer) -> str:
    add_replay_provider(data_dir, server)
    server.enqueue(reply("A1"), reply("A2"), reply("A3"))
    code, _, err = ask(data_dir, "Q1")
    assert code == 0, err
    session_id = err.split("session ", 1)[1].split()[0]
    for prompt in ("Q2", "Q3"):
        assert ask(data_dir, "--session", session_id, prompt)[0] == 0
    return session_id


def test_compact_runs_headless_and_the_next_ask_sends_the_summary(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    session_id = chat_of_three_turns(tmp_path, replay_server)
    replay_server.enqueue(reply("Numbers: 1, 2, 3."))
    code, out, err = ask(tmp_path, "--session", session_id, "/compact keep numbers")
    assert code == 0, err
    assert "Earlier messages summarised" in out and "Numbers: 1, 2, 3." in out
    assert "keep numbers" in replay_server.requests[-1].body["messages"][-1]["content"]
    [path] = stored_sessions(tmp_path)
    assert path[-1].kind is MessageKind.SUMMARY

    replay_server.enqueue(reply("A4"))
    assert ask(tmp_path, "--session", session_id, "Q4")[0] == 0
    sent = replay_server.requests[-1].body["messages"]
    assert "Numbers: 1, 2, 3." in sent[0]["content"]
    assert [m["content"] for m in sent[1:]] == ["Q2", "A2", "Q3", "A3", "Q4"]

    requests = len(replay_server.requests)
    code, out, _ = ask(tmp_path, "--session", session_id, "/usage")
    assert code == 0 and "4 replies" in out and "Context: about" in out
    assert len(replay_server.requests) == requests  # a command is never sent


def test_unknown_and_refused_commands_exit_1_and_send_nothing(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)
    code, out, err = ask(tmp_path, "/foo bar")
    assert code == 1 and out == ""
    assert err.startswith("threadline: Unknown command /foo — type /help")
    code, _, err = ask(tmp_path, "/usage")
    assert code == 1 and "--session" in err
    assert replay_server.requests == [] and stored_sessions(tmp_path) == []  # no chat was made

    code, out, _ = ask(tmp_path, "/help")
    assert code == 0 and "/checkpoint NAME" in out and "/export [markdown|json] [PATH]" in out


def test_a_double_slash_and_a_path_are_sent_as_prompts(tmp_path: Path, replay_server: ReplayServer) -> None:
    add_replay_provider(tmp_path, replay_server)
    replay_server.enqueue(reply("ok"), reply("ok"))
    assert ask(tmp_path, "//usr is a folder")[0] == 0
    assert replay_server.requests[-1].body["messages"][-1]["content"] == "/usr is a folder"
    assert ask(tmp_path, "/usr/bin holds programs")[0] == 0
    assert replay_server.requests[-1].body["messages"][-1]["content"] == "/usr/bin holds programs"


def test_attachments_with_a_command_are_refused_not_dropped(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\nThe meeting is on Tuesday.\n", encoding="utf-8")
    replay_server.enqueue(reply("Hello."))
    code, _, err = ask(tmp_path, "Hi")
    assert code == 0, err
    session_id = err.split("session ", 1)[1].split()[0]
    code, out, err = ask(tmp_path, "--session", session_id, "--attach", str(notes), "/compact keep dates")
    assert code == 1 and out == ""
    assert "threadline: --attach goes with a prompt, not with /compact; nothing was done" in err
    assert len(replay_server.requests) == 1 and len(stored_sessions(tmp_path)[0]) == 2  # nothing compacted

    replay_server.enqueue(reply("Tuesday."))
    code, _, err = ask(tmp_path, "--attach", str(notes), "//compact: when is the meeting?")
    assert code == 0, err
    sent = replay_server.requests[-1].body["messages"]
    last = str(sent[-1]["content"])  # the file's text goes with the prompt that carries it
    assert "/compact: when is the meeting?" in last and "//compact" not in last
    assert "The meeting is on Tuesday." in str(sent)
