"""A start of the window is parsed without the commands' parsers, and reads exactly as before.

``parse_command_line`` tries the top-level options alone and hands every other set of
words to the whole parser (``build_parser``); these tests hold it to the whole parser's
answers, help and messages, and check that a plain start imports none of the commands'
modules (building them was ~10 ms of every start, docs/performance.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from threadline.__main__ import build_parser, parse_command_line

ROOT = Path(__file__).resolve().parents[2]

WORDS = [
    [],
    ["--startup-probe"],
    ["--data-dir", "/tmp/d", "--startup-probe"],
    ["--data-dir=/tmp/d", "--database-url", "sqlite://"],
    ["--self-test"],
    ["--quick-ask"],
    ["--data-dir", "/tmp/d", "--quick-ask"],
    ["--start"],  # an abbreviation, as argparse allows
    ["--data-dir", "ask"],  # a command's name as an option's value
    ["ask", "hello"],
    ["--data-dir", "/tmp/d", "list", "--json"],
    ["provider", "list"],
]

WRONG = [["--s"], ["bogus"], ["--bogus"], ["--data-dir"], ["--startup-probe", "extra"], ["provider"]]


def outcome(parse: object, words: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[object, str, str]:
    """What parsing ``words`` gives: the namespace or the exit code, and what was printed."""
    assert callable(parse)
    try:
        result: object = vars(parse(words))
    except SystemExit as stop:
        result = f"exit {stop.code}"
    printed = capsys.readouterr()
    return result, printed.out, printed.err


@pytest.mark.parametrize("words", WORDS + WRONG + [["-h"], ["--help"]], ids=" ".join)
def test_the_same_answer_and_messages_as_the_whole_parser(
    words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    expected = outcome(build_parser().parse_args, words, capsys)
    assert outcome(parse_command_line, words, capsys) == expected


def test_help_still_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = outcome(parse_command_line, ["--help"], capsys)
    for command in ("ask", "provider", "mcp", "list", "usage", "show", "export", "import", "agent", "db"):
        assert f"    {command} " in out


CHECK_PLAIN_START = """
import sys
from threadline.__main__ import parse_command_line
args = parse_command_line(sys.argv[1:])
print("command:", args.command, "probe:", args.startup_probe)
print("loaded:", sorted(m for m in sys.modules if m.startswith("threadline.cli") or m == "json"))
"""


def test_a_plain_start_builds_no_command_parser() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "desktop")}
    out = subprocess.run(
        [sys.executable, "-c", CHECK_PLAIN_START, "--data-dir", "/tmp/d", "--startup-probe"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "command: None probe: True" in out
    assert "loaded: []" in out


def test_quick_ask_is_a_plain_start() -> None:
    """``threadline --quick-ask`` (what a desktop shortcut runs) starts the window with Quick ask."""
    args = parse_command_line(["--quick-ask"])
    assert args.command is None and args.quick_ask is True
    assert parse_command_line([]).quick_ask is False
