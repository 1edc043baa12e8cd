"""Migration 0003 on a 0002 database: sessions without a provider are pinned, timeouts are added."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from threadline.store import db, migrate
from threadline.store.repository import Store

NOW = "2026-01-01 00:00:00.000000"


def _database_at_0002(url: str, providers: dict[str, str], settings: dict[str, object]) -> None:
    engine = db.create_engine(url)
    try:
        migrate.run_alembic_upgrade(engine, "0002")
        with engine.begin() as connection:
            for name, model in providers.items():
                connection.execute(
                    sa.text(
                        "INSERT INTO providers (name, kind, base_url, api_key_env, default_model, headers,"
                        " updated_at) VALUES (:n, 'openai', '', '', :m, '{}', :t)"
                    ),
                    {"n": name, "m": model, "t": NOW},
                )
            for key, value in settings.items():
                connection.execute(
                    sa.text("INSERT INTO settings (key, value) VALUES (:k, :v)"),
                    {"k": key, "v": json.dumps(value)},
                )
    finally:
        engine.dispose()


def _add_session(url: str, session_id: str, provider: str, model: str) -> None:
    engine = db.create_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(
                sa.text(
                    "INSERT INTO sessions (id, title, title_set_by_user, pinned, archived, folder, agent_id,"
                    " provider, model, preview, checkpoints, created_at, updated_at, summary) VALUES"
                    " (:id, :id, 0, 0, 0, '', '', :p, :m, '', '{}', :t, :t, '')"
                ),
                {"id": session_id, "p": provider, "m": model, "t": NOW},
            )
    finally:
        engine.dispose()


async def _sessions_after_upgrade(url: str) -> dict[str, tuple[str, str]]:
    store = await Store.open(url)
    try:
        assert store.backup_path is not None and "-rev-0002" in store.backup_path.name
        return {s.id: (s.provider, s.model) for s in await store.list_sessions()}
    finally:
        await store.close()


def _provider_columns(url: str) -> set[str]:
    engine = sa.create_engine(url)
    try:
        return {c["name"] for c in sa.inspect(engine).get_columns("providers")}
    finally:
        engine.dispose()


@pytest.mark.asyncio
async def test_sessions_without_a_provider_are_pinned_to_the_default(tmp_path: Path) -> None:
    url = Store.sqlite_url(tmp_path / "threadline.db")
    _database_at_0002(
        url,
        providers={"aaa": "a-model", "local": "", "zed": "z-model"},
        settings={"default_provider": "local", "default_model": "llama-3"},
    )
    _add_session(url, "followed-default", "", "")
    _add_session(url, "own-provider-no-model", "zed", "")
    _add_session(url, "fully-chosen", "aaa", "a-special-model")

    sessions = await _sessions_after_upgrade(url)

    assert sessions["followed-default"] == ("local", "llama-3")  # the default provider + default model
    assert sessions["own-provider-no-model"] == ("zed", "z-model")  # its provider's default model
    assert sessions["fully-chosen"] == ("aaa", "a-special-model")  # untouched
    assert {"connect_timeout", "first_byte_timeout"} <= _provider_columns(url)
    assert _revisions(url) == [migrate.HEAD_REVISION]


@pytest.mark.asyncio
async def test_without_a_default_setting_the_first_provider_is_used(tmp_path: Path) -> None:
    url = Store.sqlite_url(tmp_path / "threadline.db")
    _database_at_0002(url, providers={"beta": "b-1", "alpha": "a-1"}, settings={"default_provider": "gone"})
    _add_session(url, "old", "", "")

    sessions = await _sessions_after_upgrade(url)

    assert sessions["old"] == ("alpha", "a-1")  # first by name, with its default model


@pytest.mark.asyncio
async def test_without_providers_sessions_are_left_to_choose_later(tmp_path: Path) -> None:
    url = Store.sqlite_url(tmp_path / "threadline.db")
    _database_at_0002(url, providers={}, settings={})
    _add_session(url, "old", "", "")

    sessions = await _sessions_after_upgrade(url)

    assert sessions["old"] == ("", "")


def _revisions(url: str) -> list[str]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            return [r[0] for r in connection.execute(sa.text("SELECT version_num FROM alembic_version"))]
    finally:
        engine.dispose()
