"""`threadline ask` with slash commands, as separate processes against the replay server."""

from __future__ import annotations

from pathlib import Path

from tests.integration.cli.test_cli_ask import add_replay_provider, stored_sessions
from tests.support.cli_process import threadline
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


def sent_texts(server: ReplayServer) -> list[str]:
    """The non-system messages of the last request the server got."""
    return [str(m["content"]) for m in server.requests[-1].body["messages"] if m["role"] != "system"]


def ask_ok(data_dir: Path, session_id: str, text: str) -> str:
    """``threadline ask --session ID text`` as its own process; it must exit 0. Its output."""
    code, out, err = ask(data_dir, "--session", session_id, text)
    assert code == 0, err
    return out


def test_clear_headless_then_ask_sends_nothing_from_before(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    session_id = chat_of_three_turns(tmp_path, replay_server)
    requests = len(replay_server.requests)
    assert "Context cleared" in ask_ok(tmp_path, session_id, "/clear")
    assert len(replay_server.requests) == requests  # the command itself is never sent
    replay_server.enqueue(reply("A4"))
    ask_ok(tmp_path, session_id, "Q4")
    assert sent_texts(replay_server) == ["Q4"]
    [path] = stored_sessions(tmp_path)
    prompts = [m.text for m in path if m.kind is MessageKind.PROMPT]
    assert prompts == ["Q1", "Q2", "Q3", "Q4"]  # nothing deleted


def test_a_tangent_headless_is_left_out_after_tangent_end_unless_brought(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    """``/tangent`` in ``ask`` branches at the current point (the window's "Start tangent from
    here" can branch earlier); its turns are sent while in it and absent once left."""
    session_id = chat_of_three_turns(tmp_path, replay_server)
    main_line = ["Q1", "A1", "Q2", "A2", "Q3", "A3"]
    assert "Tangent started" in ask_ok(tmp_path, session_id, "/tangent")
    replay_server.enqueue(reply("TA1"), reply("TA2"))
    ask_ok(tmp_path, session_id, "T1")
    assert sent_texts(replay_server) == [*main_line, "T1"]
    ask_ok(tmp_path, session_id, "T2")
    assert sent_texts(replay_server) == [*main_line, "T1", "TA1", "T2"]
    code, _, err = ask(tmp_path, "--session", session_id, "/tangent")
    assert code == 1 and "already in a tangent" in err

    assert "Back on the main line" in ask_ok(tmp_path, session_id, "/tangent end")
    replay_server.enqueue(reply("A4"))
    ask_ok(tmp_path, session_id, "Q4")
    assert sent_texts(replay_server) == [*main_line, "Q4"]  # the tangent's turns are absent

    ask_ok(tmp_path, session_id, "/tangent")
    replay_server.enqueue(reply("TA3"))
    ask_ok(tmp_path, session_id, "T3")
    assert "with the tangent's last exchange" in ask_ok(tmp_path, session_id, "/tangent end bring")
    replay_server.enqueue(reply("A5"))
    ask_ok(tmp_path, session_id, "Q5")
    assert sent_texts(replay_server) == [*main_line, "Q4", "A4", "T3", "TA3", "Q5"]
    code, _, err = ask(tmp_path, "--session", session_id, "/tangent end")
    assert code == 1 and "not in a tangent" in err


def test_checkpoint_and_restore_headless_move_what_the_next_ask_sends(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)
    replay_server.enqueue(reply("A1"))
    code, _, err = ask(tmp_path, "Q1")
    assert code == 0, err
    session_id = err.split("session ", 1)[1].split()[0]
    assert ask_ok(tmp_path, session_id, "/checkpoint after one").startswith("Checkpoint “after one” set.")
    for n in (2, 3):
        replay_server.enqueue(reply(f"A{n}"))
        ask_ok(tmp_path, session_id, f"Q{n}")
    listed = ask_ok(tmp_path, session_id, "/restore")
    assert "after one — “A1”" in listed

    assert "Restored “after one”" in ask_ok(tmp_path, session_id, "/restore after one")
    replay_server.enqueue(reply("A2b"))
    ask_ok(tmp_path, session_id, "Q2b")
    assert sent_texts(replay_server) == ["Q1", "A1", "Q2b"]  # the restored path, not Q2..A3

    # In a tangent from there, the main line's later turns stay absent; leaving brings them back.
    ask_ok(tmp_path, session_id, "/restore after one")
    ask_ok(tmp_path, session_id, "/tangent")
    replay_server.enqueue(reply("TA"))
    ask_ok(tmp_path, session_id, "T1")
    assert sent_texts(replay_server) == ["Q1", "A1", "T1"]
    ask_ok(tmp_path, session_id, "/tangent end")
    replay_server.enqueue(reply("A4"))
    ask_ok(tmp_path, session_id, "Q4")
    assert sent_texts(replay_server) == ["Q1", "A1", "Q4"]  # back where the tangent started

    code, _, err = ask(tmp_path, "--session", session_id, "/restore nowhere")
    assert code == 1 and "No checkpoint named “nowhere”" in err
