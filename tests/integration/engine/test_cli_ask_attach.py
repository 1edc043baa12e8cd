"""`threadline ask --attach FILE…`: documents sent with the prompt; a bad file refused, nothing sent."""

from __future__ import annotations

from pathlib import Path

from tests.integration.engine.test_cli_ask import add_replay_provider, stored_sessions, threadline
from tests.support.documents import write_encrypted_pdf, write_pdf, write_pptx
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response


def test_ask_attach_sends_the_documents_text(tmp_path: Path, replay_server: ReplayServer) -> None:
    add_replay_provider(tmp_path, replay_server)
    pdf = write_pdf(tmp_path / "report.pdf", ["Revenue grew in PELICAN", "Page two"])
    deck = write_pptx(tmp_path / "deck.pptx")
    replay_server.enqueue(sse_response(openai_text_stream(["It grew."])))
    result = threadline(tmp_path, "ask", "--attach", str(pdf), "--attach", str(deck), "What grew?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "It grew.\n"
    assert "attached report.pdf · 2 pages · ≈" in result.stderr
    assert "attached deck.pptx · 2 slides · ≈" in result.stderr
    user = replay_server.requests[-1].body["messages"][-1]
    content = user["content"]
    text = content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)
    assert '<file name="report.pdf">' in text and "--- Page 1 ---\nRevenue grew in PELICAN" in text
    assert "Ship the PELICAN release in May" in text and "What grew?" in text
    (path,) = stored_sessions(tmp_path)
    assert [(c.name, c.document_type, c.page_count) for c in path[0].context] == [
        ("report.pdf", "pdf", 2),
        ("deck.pptx", "pptx", 2),
    ]


def test_ask_attach_refuses_a_bad_file_and_sends_nothing(tmp_path: Path, replay_server: ReplayServer) -> None:
    add_replay_provider(tmp_path, replay_server)
    before = len(replay_server.requests)
    good = write_pdf(tmp_path / "good.pdf", ["fine"])
    locked = write_encrypted_pdf(tmp_path / "locked.pdf", "secret")
    result = threadline(tmp_path, "ask", "--attach", str(good), "--attach", str(locked), "Read them")
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "threadline: locked.pdf: This PDF is password-protected: Threadline cannot read it. "
        "Remove the password and attach it again. Nothing was sent."
    )
    missing = threadline(tmp_path, "ask", "--attach", str(tmp_path / "nope.docx"), "Read it")
    assert missing.returncode == 1
    assert missing.stderr.strip() == (
        "threadline: nope.docx is not a file Threadline can attach. Nothing was sent."
    )
    assert len(replay_server.requests) == before
    assert stored_sessions(tmp_path) == []  # no session, no prompt stored
