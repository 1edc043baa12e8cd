"""`threadline import FILE` as a separate process: the report it prints and its exit status."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli_process import threadline

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "import"


def test_import_reports_failures_and_exits_non_zero(tmp_path: Path) -> None:
    data = tmp_path / "data"
    done = threadline(data, "import", str(FIXTURES / "claude_conversations.json"))
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        "imported 2, updated 0, skipped 0 (unchanged), failed 2",
        "failed: Broken loop: Its messages' parent links form a loop.",
        "failed: Empty chat: It holds no messages.",
    ]
    listed = threadline(data, "list")
    assert "Weather tool and a regenerated answer" in listed.stdout


def test_clean_import_exits_zero_and_twice_skips(tmp_path: Path) -> None:
    data = tmp_path / "data"
    clean = tmp_path / "one.json"
    clean.write_text(
        (FIXTURES / "openwebui_export.json").read_text().rsplit(',\n  {\n    "user_id"', 1)[0] + "\n]"
    )
    first = threadline(data, "import", str(clean))
    assert (first.returncode, first.stdout) == (0, "imported 2, updated 0, skipped 0 (unchanged), failed 0\n")
    second = threadline(data, "import", str(clean))
    assert (second.returncode, second.stdout) == (
        0,
        "imported 0, updated 0, skipped 2 (unchanged), failed 0\n",
    )


def test_missing_or_foreign_file_fails(tmp_path: Path) -> None:
    missing = threadline(tmp_path / "data", "import", str(tmp_path / "nope.zip"))
    assert missing.returncode == 1 and "failed: nope.zip: It could not be read" in missing.stdout
    foreign = tmp_path / "notes.txt"
    foreign.write_text("just some notes")
    other = threadline(tmp_path / "data", "import", str(foreign))
    assert other.returncode == 1 and "It is not JSON" in other.stdout
