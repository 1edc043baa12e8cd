"""Where ``mcp add`` stops reading Threadline's options and the server's command line begins."""

from __future__ import annotations

from threadline.cli.options import misplaced_options, split_server_command


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


def test_common_options_may_stand_between_mcp_and_add() -> None:
    """argparse takes ``--data-dir`` at every level, so ``mcp --data-dir D add`` is ``mcp add`` too."""
    for argv in (
        ["mcp", "--data-dir", "d", "add", "t", "--", "srv", "-x"],
        ["--database-url", "sqlite://", "mcp", "--data-dir=d", "add", "t", "--", "srv", "-x"],
    ):
        assert split_server_command(argv) == (argv[: argv.index("--")], ["srv", "-x"])
    assert split_server_command(["ask", "mcp", "add", "--", "x"]) == (["ask", "mcp", "add", "--", "x"], [])


def test_mcp_add_options_in_the_server_command_are_named_once_without_values() -> None:
    command = ["docker", "run", "--env", "A=secret", "--env=B=other", "--header", "H=v", "--rm", "image"]
    assert misplaced_options(command) == ["--env", "--header"]
    assert misplaced_options(["--env", "srv"]) == []  # the command itself is not an option
