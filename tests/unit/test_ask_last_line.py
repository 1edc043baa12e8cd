"""The last line of `threadline ask` after it gave up on a refusing database (no disk needed).

``tests/integration/cli/test_cli_ask_full_disk.py`` fills a real tmpfs, which needs
root; this checks the wording of what the database keeps for every case.
"""

from __future__ import annotations

from threadline.cli.ask import _what_was_kept


def test_part_of_the_reply_saved() -> None:
    assert _what_was_kept(1_996, 4_800) == (
        "The reply is saved up to 1,996 of 4,800 characters, as interrupted; the rest was only printed."
    )


def test_nothing_of_the_reply_saved() -> None:
    assert _what_was_kept(0, 4_800) == "The reply was not saved (only printed)."


def test_all_of_the_text_saved_but_not_its_end() -> None:
    assert _what_was_kept(4_800, 4_800) == "The reply's 4,800 characters are saved, marked interrupted."


def test_unknown_when_the_database_cannot_be_read() -> None:
    said = _what_was_kept(None, 4_800)
    assert said == "Part of the reply may be saved, as interrupted; all of it was printed."
