"""Migration 0004: agents keep top-p, sticky context and context share; sessions keep their own context."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from threadline.core.config import AgentConfig
from threadline.core.sticky import (
    DEFAULT_CONTEXT_SHARE,
    ContextHook,
    ContextSource,
    HookTiming,
    StickyContext,
)
from threadline.store import db, migrate
from threadline.store.repository import Store

CONTEXT = StickyContext(
    sources=(ContextSource("~/notes/*.md"), ContextSource("src", base="/work/project")),
    hooks=(ContextHook("git status --short", timing=HookTiming.SESSION_START, timeout=5.0, name="git"),),
)


@pytest.mark.asyncio
async def test_an_agent_round_trips_its_new_fields(tmp_path: Path) -> None:
    store = await Store.open(Store.sqlite_url(tmp_path / "t.sqlite3"))
    try:
        agent = AgentConfig(id="reviewer", name="Reviewer", top_p=0.9, context=CONTEXT, context_share=0.5)
        await store.save_agent(agent)
        assert await store.get_agent("reviewer") == agent
        plain = AgentConfig(id="plain", name="Plain")
        await store.save_agent(plain)
        loaded = await store.get_agent("plain")
        assert loaded == plain and loaded.context_share == DEFAULT_CONTEXT_SHARE and not loaded.context
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_a_session_keeps_its_own_sticky_context(tmp_path: Path) -> None:
    store = await Store.open(Store.sqlite_url(tmp_path / "t.sqlite3"))
    try:
        info = await store.create_session(title="with context")
        assert not info.context
        await store.update_session(info.id, context=CONTEXT)
        again = await store.get_session(info.id)
        assert again is not None and again.context == CONTEXT
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_a_0003_database_upgrades_with_empty_context(tmp_path: Path) -> None:
    url = Store.sqlite_url(tmp_path / "old.sqlite3")
    engine = db.create_engine(url)
    try:
        migrate.run_alembic_upgrade(engine, "0003")
        with engine.begin() as connection:
            connection.execute(
                sa.text(
                    "INSERT INTO agents (id, name, system_prompt, provider, model, enabled_tools,"
                    " approval_rules, allowed_folders, default_approval, updated_at)"
                    " VALUES ('old', 'Old', 'be brief', '', '', '[]', '[]', '[]', 'ask',"
                    " '2026-01-01 00:00:00')"
                )
            )
    finally:
        engine.dispose()
    store = await Store.open(url)
    try:
        agent = await store.get_agent("old")
        assert agent is not None and agent.system_prompt == "be brief"
        assert agent.top_p is None and not agent.context and agent.context_share == DEFAULT_CONTEXT_SHARE
    finally:
        await store.close()
