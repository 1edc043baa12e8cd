"""``threadline provider add --timeout/--connect-timeout`` and ``provider list``, as separate processes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.support.cli_process import threadline

from threadline.engine.engine import DATABASE_FILENAME
from threadline.store.repository import Store


def stored_provider(data_dir: Path, name: str):  # type: ignore[no-untyped-def]
    async def read():  # type: ignore[no-untyped-def]
        store = await Store.open(Store.sqlite_url(data_dir / DATABASE_FILENAME))
        try:
            return await store.get_provider(name)
        finally:
            await store.close()

    return asyncio.run(read())


def listed_line(data_dir: Path, name: str) -> str:
    result = threadline(data_dir, "provider", "list")
    assert result.returncode == 0, result.stderr
    return next(line for line in result.stdout.splitlines() if line.startswith(name + "\t"))


def test_timeouts_round_trip_through_add_and_list(tmp_path: Path) -> None:
    added = threadline(
        tmp_path,
        "provider",
        "add",
        "local",
        "--kind",
        "openai",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "llama3",
        "--timeout",
        "45",
        "--connect-timeout",
        "2.5",
    )
    assert added.returncode == 0, added.stderr
    config = stored_provider(tmp_path, "local")
    assert (config.first_byte_timeout, config.connect_timeout) == (45.0, 2.5)
    assert listed_line(tmp_path, "local").endswith("timeouts: connect 2.5 s, first byte 45 s")


def test_add_on_an_existing_provider_changes_only_what_is_given(tmp_path: Path) -> None:
    assert (
        threadline(
            tmp_path, "provider", "add", "p", "--kind", "openai", "--base-url", "http://h/v1"
        ).returncode
        == 0
    )
    assert listed_line(tmp_path, "p").endswith("timeouts: connect 10 s (default), first byte 60 s (default)")

    changed = threadline(
        tmp_path, "provider", "add", "p", "--timeout", "300"
    )  # what the timeout message says
    assert changed.returncode == 0, changed.stderr
    config = stored_provider(tmp_path, "p")
    assert config.base_url == "http://h/v1" and config.kind.value == "openai"  # kept
    assert config.first_byte_timeout == 300.0 and config.connect_timeout is None

    back = threadline(tmp_path, "provider", "add", "p", "--timeout", "0")
    assert back.returncode == 0
    assert stored_provider(tmp_path, "p").first_byte_timeout is None  # 0: the default again


def test_bad_timeouts_and_a_new_provider_without_kind_are_refused(tmp_path: Path) -> None:
    for value in ("-1", "soon", "7200", "nan"):
        refused = threadline(tmp_path, "provider", "add", "p", "--kind", "openai", "--timeout", value)
        assert refused.returncode == 2 and "--timeout" in refused.stderr, (value, refused.stderr)
    assert stored_provider(tmp_path, "p") is None

    no_kind = threadline(tmp_path, "provider", "add", "fresh", "--timeout", "5")
    assert no_kind.returncode == 1
    assert no_kind.stderr.strip() == "threadline: --kind is required to add the new provider 'fresh'"
