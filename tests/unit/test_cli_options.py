"""Where ``mcp add`` stops reading Threadline's options and the server's command line begins."""

from __future__ import annotations

from threadline.cli_options import split_server_command


def test_everything_after_the_first_dashes_of_mcp_add_is_the_server_command() -> None:
    argv = ["--data-dir", "d", "mcp", "add", "t", "--env-from", "A=B", "--", "srv", "--url", "u", "--", "x"]
    assert split_server_command(argv) == (
        ["--data-dir", "d", "mcp", "add", "t", "--env-from", "A=B"],
        ["srv", "--url", "u", "--", "x"],
    )
    assert split_server_command(["mcp", "add", "t", "--", "srv"]) == (["mcp", "add", "t"], ["srv"])


def test_other_commands_and_a_url_server_are_left_to_the_parser() -> None:
    for argv in (
        ["ask", "--", "mcp add -- x"],
        ["ask", "--", "mcp", "add", "--", "x"],  # a prompt's words, after ask's own --
        ["mcp", "add", "web", "--url", "https://h/mcp"],
        ["mcp", "list"],
    ):
        assert split_server_command(argv) == (argv, [])
