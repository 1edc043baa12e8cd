"""Migration 0009: project writes join the change log; upgrading keeps data, downgrading undoes it."""

from __future__ import annotations

from dataclasses import replace

import pytest
import sqlalchemy as sa
from alembic import command

from threadline.core.project import Project
from threadline.store import db, migrate
from threadline.store.repository import Store


def _project_entries(url: str) -> list[tuple[str, str]]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                sa.text("SELECT kind, session_id FROM change_log WHERE kind = 'project_changed' ORDER BY seq")
            )
            return [(str(r[0]), str(r[1])) for r in rows]
    finally:
        engine.dispose()


@pytest.mark.asyncio
@pytest.mark.expected_log_warnings("without a backup")  # PostgreSQL: server databases are not copied
async def test_a_0008_database_with_projects_upgrades_and_logs_project_edits(store_url: str) -> None:
    engine = db.create_engine(store_url)
    try:
        migrate.run_alembic_upgrade(engine, "0008")
        with engine.begin() as connection:
            connection.execute(
                sa.text(
                    "INSERT INTO projects (id, name, colour, instructions, context, created_at, updated_at)"
                    " VALUES ('p-old', 'Garden', '#10b981', 'Metric units.', '{}',"
                    " '2026-01-01 00:00:00', '2026-01-01 00:00:00')"
                )
            )
    finally:
        engine.dispose()
    assert _project_entries(store_url) == []  # 0008 logs no projects

    store = await Store.open(store_url)
    try:
        old = await store.get_project("p-old")
        assert old is not None and old.name == "Garden" and old.instructions == "Metric units."
        await store.save_project(replace(old, instructions="Imperial units."))
        await store.delete_project("p-old")
    finally:
        await store.close()
    assert _project_entries(store_url) == [("project_changed", "p-old")] * 2


@pytest.mark.asyncio
async def test_downgrading_0009_stops_logging_projects_and_drops_their_entries(store_url: str) -> None:
    store = await Store.open(store_url)
    try:
        project = await store.save_project(Project.create("Garden"))
    finally:
        await store.close()
    assert _project_entries(store_url) == [("project_changed", project.id)]

    engine = db.create_engine(store_url)
    try:
        with db.writing(engine) as connection:
            command.downgrade(migrate.alembic_config(connection), "0008")
        with engine.begin() as connection:
            connection.execute(sa.text("UPDATE projects SET name = 'Allotment'"))
            assert connection.execute(sa.text("SELECT name FROM projects")).scalar_one() == "Allotment"
    finally:
        engine.dispose()
    assert _project_entries(store_url) == []  # an 0008 reader knows no such kind
