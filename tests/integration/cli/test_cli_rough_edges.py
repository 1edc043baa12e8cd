"""What a new user met on the command line (issue 28), each run as the real ``threadline`` process.

Every case starts ``python -m threadline`` against the replay server on 127.0.0.1: the parser,
the engine, the store and the provider SDK run as a script would run them.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.integration.cli.test_cli_ask import add_replay_provider
from tests.support.cli_process import ENV, threadline
from tests.support.sse_server import (
    ReplayServer,
    openai_text_stream,
    openai_tool_call_stream,
    sse_response,
)

from threadline.core.messages import MessageKind
from threadline.core.session import SessionInfo
from threadline.engine.engine import DATABASE_FILENAME
from threadline.store.repository import Store

RUNNER_PROMPT = "You run shell commands for the user."


def run(*words: str) -> subprocess.CompletedProcess[str]:
    """``threadline WORDS…`` exactly as written (the options wherever the words put them)."""
    return subprocess.run(
        [sys.executable, "-m", "threadline", *words], capture_output=True, text=True, env=ENV, timeout=60
    )


def stored_session_infos(data_dir: Path) -> list[SessionInfo]:
    async def read() -> list[SessionInfo]:
        store = await Store.open(Store.sqlite_url(data_dir / DATABASE_FILENAME))
        try:
            return await store.list_sessions()
        finally:
            await store.close()

    return asyncio.run(read())


def add_runner_agent(data_dir: Path) -> None:
    """An agent with a system prompt and the shell tool (which asks before each command)."""
    added = threadline(data_dir, "agent", "add", "Runner", "--system", RUNNER_PROMPT, "--tool", "shell")
    assert added.returncode == 0, added.stderr


def test_common_options_are_taken_after_any_command_word(tmp_path: Path) -> None:
    data = str(tmp_path)
    for words in (
        ("mcp", "--data-dir", data, "add", "one", "--", "echo", "hi"),
        ("mcp", "add", "--data-dir", data, "two", "--", "echo", "hi"),
        ("mcp", "add", "three", "--data-dir", data, "--", "echo", "hi"),
        ("--data-dir", data, "mcp", "add", "four", "--", "echo", "hi"),
        (f"--data-dir={data}", "mcp", "add", "five", "--", "echo", "hi"),
    ):
        added = run(*words)
        assert added.returncode == 0, (words, added.stderr)
    for words in (("mcp", "--data-dir", data, "list"), ("mcp", "list", "--data-dir", data)):
        listed = run(*words)
        names = sorted(line.split("\t")[0] for line in listed.stdout.splitlines())
        assert names == ["five", "four", "one", "three", "two"], listed
    for words in (("provider", "--data-dir", data, "list"), ("agent", "--data-dir", data, "list")):
        assert run(*words).returncode == 0, words


def test_mcp_options_after_the_dashes_are_warned_about_without_their_value(tmp_path: Path) -> None:
    secret = "ghp_NotARealToken0123456789"
    added = run("mcp", "--data-dir", str(tmp_path), "add", "gh", "--", "echo", "--env", f"GH_PAT={secret}")
    assert added.returncode == 0, added.stderr
    assert "--env after --" in added.stderr and "put --env before --" in added.stderr
    assert secret not in added.stderr + added.stdout
    plain = run("mcp", "add", "time", "--data-dir", str(tmp_path), "--", "echo", "--local-timezone", "UTC")
    assert plain.returncode == 0 and plain.stderr == ""


def test_a_new_chat_from_ask_uses_the_default_agent_not_the_last_one(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)
    add_runner_agent(tmp_path)
    replay_server.enqueue(sse_response(openai_text_stream(["ok"])), sse_response(openai_text_stream(["hi"])))
    picked = threadline(tmp_path, "ask", "--agent", "Runner", "list the files")  # the last chat's agent
    assert picked.returncode == 0, picked.stderr
    assert replay_server.requests[-1].body["messages"][0]["content"] == RUNNER_PROMPT
    assert "(agent Runner)" in picked.stderr  # the line naming the chat names its agent

    fresh = threadline(tmp_path, "ask", "--yes", "hello")
    assert fresh.returncode == 0, fresh.stderr
    body = replay_server.requests[-1].body
    assert [m["role"] for m in body["messages"]] == ["user"]  # no Runner system prompt
    assert "tools" not in body  # and no shell tool offered to run with --yes
    assert "(agent" not in fresh.stderr


def test_models_without_a_provider_use_the_chats_provider(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)
    replay_server.enqueue(
        sse_response(openai_text_stream(["one"], model="echo")),
        sse_response(openai_text_stream(["two"], model="fast-20")),
    )
    result = threadline(tmp_path, "ask", "--models", "echo,fast-20", "hi")
    assert result.returncode == 0, result.stderr
    assert sorted(r.body["model"] for r in replay_server.stream_requests()) == ["echo", "fast-20"]
    assert "=== replay/echo · done ===" in result.stdout and "=== replay/fast-20 · done ===" in result.stdout


def test_models_without_a_provider_and_none_set_up_are_refused(tmp_path: Path) -> None:
    result = threadline(tmp_path, "ask", "--models", "echo,fast-20", "hi")
    assert result.returncode == 1 and result.stdout == ""
    assert "“echo” names no provider" in result.stderr and "PROVIDER/echo" in result.stderr


def test_provider_without_model_stores_the_model_that_answered(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)  # default model gpt-4o-mini
    other = threadline(
        tmp_path, "provider", "add", "other", "--kind", "openai", "--base-url", replay_server.openai_base_url,
        "--model", "other-model",
    )  # fmt: skip
    assert other.returncode == 0, other.stderr
    replay_server.enqueue(sse_response(openai_text_stream(["hi"], model="other-model")))
    result = threadline(tmp_path, "ask", "--provider", "other", "hello")
    assert result.returncode == 0, result.stderr
    assert replay_server.requests[-1].body["model"] == "other-model"
    (info,) = stored_session_infos(tmp_path)
    assert (info.provider, info.model) == ("other", "other-model")


def test_a_tool_needing_approval_is_not_run_and_the_model_is_told_why(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)
    add_runner_agent(tmp_path)
    marker = tmp_path / "made-by-the-tool"
    replay_server.enqueue(
        sse_response(openai_tool_call_stream([("call_1", "shell", {"command": f"touch {marker}"})])),
        sse_response(openai_text_stream(["I could not run it."])),
    )
    result = threadline(tmp_path, "ask", "--agent", "Runner", "make a file")
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    told = "was not run: it needs approval and none could be asked"
    tool_message = next(m for m in replay_server.requests[-1].body["messages"] if m["role"] == "tool")
    assert told in tool_message["content"] and "cancelled by the user" not in tool_message["content"]
    assert "[tool shell: not run, it needs approval]" in result.stderr
    assert "--yes" in result.stderr
    assert result.stdout == "I could not run it.\n"

    async def stored_results() -> list[str]:
        store = await Store.open(Store.sqlite_url(tmp_path / DATABASE_FILENAME))
        try:
            (info,) = await store.list_sessions()
            path = (await store.load_tree(info.id)).path()
        finally:
            await store.close()
        answer = next(m for m in path if m.kind is MessageKind.CANCELLED_TOOL_USES)
        return [r.text for r in answer.tool_results]

    results = asyncio.run(stored_results())
    assert results
    assert all(told in text for text in results)


class _Lines:
    """A process's stderr read line by line on a thread, to wait on what it printed."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, args=(process.stderr,), daemon=True)
        self._reader.start()

    def _read(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()

    def wait_for(self, text: str, timeout: float = 90.0) -> int:
        """The index of the first line holding ``text``, once printed."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = next((i for i, line in enumerate(self.lines) if text in line), None)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                assert left > 0, f"{text!r} never printed; stderr so far: {self.lines}"
                self._changed.wait(left)


def test_a_silent_server_is_waited_for_aloud_and_attempts_are_counted_truly(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)
    assert threadline(tmp_path, "provider", "add", "replay", "--timeout", "5").returncode == 0
    replay_server.default = sse_response(openai_text_stream(["never"]), first_byte_delay=600)
    process = subprocess.Popen(
        [sys.executable, "-m", "threadline", "--data-dir", str(tmp_path), "ask", "Anyone there?"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    try:
        stderr = _Lines(process)
        waiting = stderr.wait_for("waiting for the first byte")
        retrying = stderr.wait_for("Retrying (")
        assert waiting < retrying  # said before the first attempt timed out
        assert process.wait(timeout=120) == 1
        out = process.stdout.read() if process.stdout is not None else ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert out == ""  # stdout stays for the reply
    retries = [line for line in stderr.lines if "Retrying (" in line]
    failure = stderr.lines[-1]
    attempts = len(replay_server.stream_requests())
    assert attempts == 2, stderr.lines
    assert [line.split("(")[1].split(")")[0] for line in retries] == ["2 of 2"], retries
    assert failure.startswith("threadline: replay did not answer") and f"({attempts} attempts)" in failure


def test_import_counts_chats_and_keeps_a_chat_newer_than_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'[{"a": "\xff"}, {"a": "\xfe"}, {"a": "\xfd"}]')
    three = threadline(tmp_path / "data", "import", str(bad))
    assert three.returncode == 1
    assert three.stdout.splitlines()[0] == "imported 0, updated 0, skipped 0 (unchanged), failed 3"
    assert len(three.stdout.splitlines()) == 4  # one line per chat, none for the file on top


def test_reimporting_an_older_export_says_the_stored_chat_is_kept(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)
    replay_server.enqueue(
        sse_response(openai_text_stream(["one"])), sse_response(openai_text_stream(["two"]))
    )
    first = threadline(tmp_path, "ask", "first")
    assert first.returncode == 0, first.stderr
    (info,) = stored_session_infos(tmp_path)
    export = tmp_path / "old.json"
    exported = threadline(tmp_path, "export", "--session", info.id, "--format", "json", "-o", str(export))
    assert exported.returncode == 0, exported.stderr
    assert threadline(tmp_path, "ask", "--session", info.id, "second").returncode == 0  # the chat goes on

    again = threadline(tmp_path, "import", str(export))
    assert again.returncode == 0, again.stderr
    assert again.stdout == (
        "imported 0, updated 0, skipped 0 (unchanged), kept 1 (the stored chat is newer), failed 0\n"
    )
