"""`threadline kb …` and `threadline ask --kb`: the real commands, in their own processes."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.integration.cli.test_cli_ask import add_replay_provider, stored_sessions
from tests.support.cli_process import ENV, threadline
from tests.support.documents import write_encrypted_pdf
from tests.support.embedding_server import EmbeddingServer
from tests.support.knowledge_folders import PDF_ANSWER, knowledge_folder
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response
from tests.support.waiting import WAIT


def test_add_index_search_list_and_remove(tmp_path: Path) -> None:
    data = tmp_path / "data"
    folder = knowledge_folder(tmp_path / "docs")
    write_encrypted_pdf(tmp_path / "locked.pdf", "secret")
    (tmp_path / "locked.pdf").rename(folder / "locked.pdf")

    added = threadline(data, "kb", "add", "handbook", str(folder))
    assert added.returncode == 0, added.stderr
    assert "Added “handbook” (1 location(s), keywords only)" in added.stdout

    indexed = threadline(data, "kb", "index", "handbook")
    assert indexed.returncode == 0, indexed.stderr
    assert indexed.stderr == "", "no progress line when stderr is not a terminal"
    assert "Indexed: 5 file(s) read, 1 unchanged, 0 removed; “handbook” holds 5 files" in indexed.stdout
    assert (
        f"{folder / 'locked.pdf'}: " in indexed.stdout and "1 file(s) could not be indexed" in indexed.stdout
    )
    assert f"{folder / 'locked.pdf'}: locked.pdf" not in indexed.stdout, "the name said once"
    again = threadline(data, "kb", "index", "handbook")
    assert "Indexed: 0 file(s) read, 6 unchanged" in again.stdout

    found = threadline(data, "kb", "search", "handbook", "albatross valve torque", "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert (Path(hits[0]["path"]).name, hits[0]["page"]) == ("manual.pdf", 3)
    assert PDF_ANSWER in hits[0]["text"]
    plain = threadline(data, "kb", "search", "handbook", "kestrel proxy")
    lines = plain.stdout.splitlines()
    assert lines[0] == "(No embedding model for this knowledge base: keyword search only.)"
    assert "setup.md › Network, lines" in lines[1]

    listed = threadline(data, "kb", "list")
    assert listed.stdout.startswith("handbook\t5 files, ") and "keywords only" in listed.stdout

    removed = threadline(data, "kb", "remove", "handbook")
    assert removed.returncode == 0 and "the files were not touched" in removed.stdout
    assert (folder / "manual.pdf").exists()
    assert "No knowledge bases." in threadline(data, "kb", "list").stdout


def test_unknown_bases_and_bad_arguments_are_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    missing = threadline(data, "kb", "search", "nope", "x")
    assert missing.returncode == 1
    assert missing.stderr.strip() == (
        "threadline: There is no knowledge base named “nope”. See them with `threadline kb list`."
    )
    bad = threadline(data, "kb", "add", "x", str(tmp_path / "absent"))
    assert bad.returncode == 1 and bad.stderr.strip() == f"threadline: not found: {tmp_path / 'absent'}"
    embed = threadline(data, "kb", "add", "x", str(tmp_path), "--embed", "justone")
    assert "--embed takes PROVIDER:MODEL" in embed.stderr


def test_ask_with_a_knowledge_base_sends_the_page_with_its_source(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    data = tmp_path / "data"
    add_replay_provider(data, replay_server)
    folder = knowledge_folder(tmp_path / "docs")
    assert threadline(data, "kb", "add", "handbook", str(folder)).returncode == 0
    assert threadline(data, "kb", "index", "handbook").returncode == 0
    replay_server.enqueue(sse_response(openai_text_stream(["42 N·m [1]."])))
    result = threadline(data, "ask", "--kb", "handbook", "What torque does the albatross valve need?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "42 N·m [1].\n"
    system = replay_server.requests[-1].body["messages"][0]["content"]
    assert "handbook: manual.pdf, page 3" in system and f"> {PDF_ANSWER}" in system
    assert "handbook: manual.pdf, page 3" in result.stderr
    (path,) = stored_sessions(data)
    assert any(Path(s.locator.path).name == "manual.pdf" and s.locator.page == 3 for s in path[-1].sources)


@pytest.mark.parametrize("stall", ["hangs", "answers too late"])
def test_ask_goes_on_with_keywords_when_the_embedding_server_stalls(
    tmp_path: Path, replay_server: ReplayServer, stall: str
) -> None:
    data = tmp_path / "data"
    folder = knowledge_folder(tmp_path / "docs")
    for i in range(10):  # more than the model's window takes (750 KB): the passages are searched for
        (folder / f"diary-{i}.md").write_text("Tomatoes, beans and weather.\n\n" * 2500, encoding="utf-8")
    with EmbeddingServer() as server:
        add_replay_provider(data, replay_server)  # first by name: the one chats use
        url = server.base_url
        embed = threadline(data, "provider", "add", "vectors", "--kind", "openai", "--base-url", url)
        assert embed.returncode == 0, embed.stderr
        assert threadline(data, "kb", "add", "handbook", str(folder), "--embed", "vectors:e").returncode == 0
        assert threadline(data, "kb", "index", "handbook").returncode == 0
        if stall == "hangs":
            server.hang = True  # accepts the request and never answers it
        else:
            server.delay = 45.0  # answers, long after a person gave up waiting
        replay_server.enqueue(sse_response(openai_text_stream(["42 N·m [1]."])))
        result = threadline(data, "ask", "--kb", "handbook", "What torque does the albatross valve need?")
        assert server.requests[-1]["input"] == ["What torque does the albatross valve need?"]
    assert result.returncode == 0 and result.stdout == "42 N·m [1].\n", result.stderr
    assert "vectors did not answer the embedding request within 5 s. Keyword search only." in result.stderr
    system = replay_server.requests[-1].body["messages"][0]["content"]
    assert "handbook: manual.pdf, page 3" in system and f"> {PDF_ANSWER}" in system


def test_add_with_an_embedding_model_indexes_vectors_and_searches_both_ways(tmp_path: Path) -> None:
    data = tmp_path / "data"
    folder = knowledge_folder(tmp_path / "docs")
    with EmbeddingServer() as server:
        provider = threadline(
            data, "provider", "add", "emb", "--kind", "openai", "--base-url", server.base_url, "--model", "e"
        )
        assert provider.returncode == 0, provider.stderr
        added = threadline(data, "kb", "add", "handbook", str(folder), "--embed", "emb:fake-embed")
        assert "vectors from emb:fake-embed and keywords" in added.stdout, added.stderr
        indexed = threadline(data, "kb", "index", "handbook")
        assert indexed.returncode == 0 and "Indexed: 5 file(s) read" in indexed.stdout, indexed.stderr
        found = threadline(data, "kb", "search", "handbook", "albatross valve", "--json")
    assert json.loads(found.stdout)["notice"] == ""
    assert any(len(r["input"]) > 1 for r in server.requests), "the passages were embedded"
    assert server.requests[-1]["input"] == ["albatross valve"], "and so was the query"
    assert "emb:fake-embed" in threadline(data, "kb", "list").stdout


def test_on_a_terminal_index_shows_progress_and_ctrl_c_pauses_until_the_next_run(tmp_path: Path) -> None:
    data = tmp_path / "data"
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(2000):  # seconds of work on an idle machine, so Ctrl+C comes while it runs
        (folder / f"f{i:04}.md").write_text(f"# File {i}\n\n" + f"word{i} text " * 1000, encoding="utf-8")
    (folder / "blob.bin").write_bytes(bytes(range(256)) * 64)
    assert threadline(data, "kb", "add", "many", str(folder)).returncode == 0
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "threadline", "--data-dir", str(data), "kb", "index", "many"],
        stdout=subprocess.PIPE,
        stderr=follower,
        env=ENV,
        text=True,
    )
    os.close(follower)
    shown = b""
    deadline = time.monotonic() + WAIT
    while not re.search(rb"Indexing [1-9]\d+/", shown) and time.monotonic() < deadline:  # 10 files or more
        ready, _, _ = select.select([leader], [], [], 1.0)
        if ready:
            shown += os.read(leader, 4096)
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=WAIT)
    os.close(leader)
    assert process.returncode == 0, out
    line = [part for part in shown.decode().split("\r") if part.endswith("\x1b[K")][-1]  # a whole one
    assert line.startswith("Indexing ") and "/2,001 files, " in line and " passages" in line, line
    assert "files/s" in line and "left" in line, line
    assert out.startswith("Paused: "), out
    assert "again to carry on" in out
    done = int(out.split("Paused: ")[1].split(" file(s) read")[0])
    assert 0 < done < 2000, (out, line)

    again = threadline(data, "kb", "index", "many", timeout=WAIT * 2)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"Indexed: {2000 - done:,} file(s) read"), again.stdout
    assert "“many” holds 2,000 files" in again.stdout
    assert f"{folder / 'blob.bin'}: " in again.stdout and "1 file(s) could not be indexed" in again.stdout


def test_index_waits_for_an_embedding_server_that_refuses_and_embeds_every_chunk_when_it_answers(
    tmp_path: Path,
) -> None:
    from tests.support.embedding_server import closed_port

    from threadline.knowledge.index import KnowledgeIndex

    data = tmp_path / "data"
    folder = knowledge_folder(tmp_path / "docs")
    port = closed_port()
    address = f"http://127.0.0.1:{port}/v1"
    added = threadline(
        data, "provider", "add", "emb", "--kind", "openai", "--base-url", address, "--model", "e"
    )
    assert added.returncode == 0, added.stderr
    assert threadline(data, "kb", "add", "handbook", str(folder), "--embed", "emb:fake-embed").returncode == 0
    process = subprocess.Popen(
        [sys.executable, "-m", "threadline", "--data-dir", str(data), "kb", "index", "handbook"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        text=True,
    )
    assert process.stderr is not None
    first = process.stderr.readline()  # not a terminal: only why it waits, a line each time
    assert first.startswith(
        f"Waiting for the embedding server at {address} (connection refused); "
        "indexing resumes when it answers."
    ), first
    assert process.poll() is None, "it waits rather than ending with the vectors missing"
    with EmbeddingServer(port=port) as server:
        out, rest = process.communicate(timeout=WAIT)
        found = threadline(data, "kb", "search", "handbook", "albatross valve", "--json")
    assert process.returncode == 0, rest
    assert out.startswith("Indexed: 5 file(s) read"), out
    assert "no vectors" not in out, out
    assert server.requests, "the passages were embedded once it answered"
    assert json.loads(found.stdout)["notice"] == "", "vector search works for the base"
    index = KnowledgeIndex(data / "knowledge.sqlite3")
    try:
        (base_id,) = [row[0] for row in index._db.execute("SELECT DISTINCT base FROM files")]
        _files, chunks, _chars = index.totals(base_id)
        vectors = index._db.execute("SELECT COUNT(*) FROM chunk_vectors").fetchone()[0]
        assert chunks > 0 and vectors == chunks and index.unembedded(base_id) == 0
    finally:
        index.close()
