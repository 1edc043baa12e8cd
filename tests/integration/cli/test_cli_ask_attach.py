"""`threadline ask --attach FILE…`: documents sent with the prompt; a bad file refused, nothing sent."""

from __future__ import annotations

from pathlib import Path

from tests.integration.cli.test_cli_ask import add_replay_provider, stored_sessions
from tests.support.cli_process import threadline
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


def sent_text(replay_server: ReplayServer) -> str:
    content = replay_server.requests[-1].body["messages"][-1]["content"]
    return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)


def test_several_files_after_one_attach_and_the_prompt_stays_the_prompt(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    """``--attach a.pdf b.pptx "prompt"``: both files go, and the last value is the prompt;
    ``--`` says so explicitly; with the prompt on standard input every value is a file; a
    mistyped file name is reported, never sent as the prompt."""
    add_replay_provider(tmp_path, replay_server)
    pdf = write_pdf(tmp_path / "report.pdf", ["Revenue grew in PELICAN"])
    deck = write_pptx(tmp_path / "deck.pptx")
    for args, stdin in (
        (["--attach", str(pdf), str(deck), "What grew?"], None),
        (["--attach", str(pdf), str(deck), "--", "What grew?"], None),
        (["--attach", str(pdf), str(deck)], "What grew?"),
    ):
        replay_server.enqueue(sse_response(openai_text_stream(["It grew."])))
        result = threadline(tmp_path, "ask", *args, stdin=stdin)
        assert result.returncode == 0, (args, result.stderr)
        assert "attached report.pdf" in result.stderr and "attached deck.pptx" in result.stderr
        text = sent_text(replay_server)
        assert '<file name="report.pdf">' in text and '<file name="deck.pptx">' in text
        assert text.rstrip().endswith("What grew?")
    sessions = stored_sessions(tmp_path)
    assert len(sessions) == 3 and all(path[0].text == "What grew?" for path in sessions)

    before = len(replay_server.requests)
    typo = threadline(tmp_path, "ask", "--attach", str(pdf), "reprot.pdf", stdin="What grew?")
    assert typo.returncode == 1
    message = "threadline: reprot.pdf is not a file Threadline can attach. Nothing was sent."
    assert typo.stderr.splitlines()[-1] == message
    assert len(replay_server.requests) == before


def test_the_prompt_is_split_from_the_attached_files(tmp_path: Path) -> None:
    from threadline.cli.ask import split_attach_prompt

    real = tmp_path / "notes"
    real.write_text("an existing file without a suffix")
    assert split_attach_prompt(["a.pdf", "Compare them"], None) == (["a.pdf"], "Compare them")
    assert split_attach_prompt(["a.pdf", "b.docx", "Summarise"], None) == (["a.pdf", "b.docx"], "Summarise")
    assert split_attach_prompt(["a.pdf", "b.docx"], None) == (["a.pdf", "b.docx"], None)  # looks like files
    assert split_attach_prompt(["a.pdf", str(real)], None) == (["a.pdf", str(real)], None)  # exists
    assert split_attach_prompt(["a.pdf", "Summarise"], "Given") == (["a.pdf", "Summarise"], "Given")
    assert split_attach_prompt(["Summarise"], None) == (["Summarise"], None)  # one value: a file, as before
    assert split_attach_prompt([], None) == ([], None)
