"""Projects through the engine: what a chat in a project sends, and how the listing follows.

The replay server's captured requests prove what went over the wire.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from tests.integration.engine.helpers import failure, turn
from tests.support.engines import FAST_RETRIES
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response
from tests.support.waiting import until

from threadline.core.sticky import ContextSource, StickyContext
from threadline.engine.engine import DATABASE_FILENAME, Engine
from threadline.engine.events import ProjectsChanged, SessionEvent, SessionUpdated
from threadline.engine.projects import ProjectNameError, ProjectNotFoundError
from threadline.store.repository import Store

pytestmark = pytest.mark.asyncio


def system_sent(server: ReplayServer) -> str:
    first = server.requests[-1].body["messages"][0]
    return str(first["content"]) if first["role"] == "system" else ""


async def test_a_chat_in_a_project_sends_its_instructions_and_files(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    spec = tmp_path / "spec.md"
    spec.write_text("The garden is 12 metres long.\n")
    agent = await engine.agents.get_agent()
    await engine.agents.save_agent(replace(agent, system_prompt="You are a gardener."))
    project = await engine.projects.create_project("Garden", instructions="Answer in metric units.")
    project = await engine.projects.save_project(
        replace(project, context=StickyContext(sources=(ContextSource(str(spec)),)))
    )
    inside = await engine.sessions.new_session(project_id=project.id)
    outside = await engine.sessions.new_session()
    assert inside.project_id == project.id and outside.project_id is None

    replay_server.enqueue(sse_response(openai_text_stream(["ok"])))
    assert failure(await turn(engine, inside.id, "How long is it?")) is None
    system = system_sent(replay_server)
    assert system.startswith("You are a gardener.")
    assert "Answer in metric units." in system and "The garden is 12 metres long." in system
    assert system.index("You are a gardener.") < system.index("Answer in metric units.")

    replay_server.enqueue(sse_response(openai_text_stream(["ok"])))
    await turn(engine, outside.id, "And here?")
    assert "metric" not in system_sent(replay_server) and "12 metres" not in system_sent(replay_server)

    # Moving the chat out of the project takes the instructions away from its next request.
    await engine.projects.set_session_project(inside.id, None)
    replay_server.enqueue(sse_response(openai_text_stream(["ok"])))
    await turn(engine, inside.id, "Still there?")
    assert "metric" not in system_sent(replay_server)


async def test_the_listing_hears_every_project_change(engine: Engine) -> None:
    heard: list[SessionEvent] = []
    engine.sessions.subscribe_sessions(heard.append)
    project = await engine.projects.create_project("  Reading   list ")
    assert project.name == "Reading list" and project.colour.startswith("#")
    second = await engine.projects.create_project("Work")
    assert second.colour != project.colour  # the next unused colour of the palette
    changes = [e for e in heard if isinstance(e, ProjectsChanged)]
    assert [p.name for p in changes[-1].projects] == ["Reading list", "Work"]

    with pytest.raises(ProjectNameError, match="already a project"):
        await engine.projects.create_project("reading LIST")
    with pytest.raises(ProjectNameError, match="needs a name"):
        await engine.projects.create_project("   ")

    info = await engine.sessions.new_session(project_id=project.id)
    await engine.sessions.open_session(info.id)
    heard.clear()
    assert await engine.projects.delete_project(project.id) == 1
    moved = [e.session for e in heard if isinstance(e, SessionUpdated) and e.session.id == info.id]
    assert moved and moved[-1].project_id is None
    live = engine.sessions.live(info.id)
    assert live is not None and live.info.project_id is None
    assert [p.name for p in await engine.projects.list_projects()] == ["Work"]
    with pytest.raises(ProjectNotFoundError):
        await engine.projects.set_session_project(info.id, project.id)


async def test_search_can_keep_to_one_project(engine: Engine, replay_server: ReplayServer) -> None:
    project = await engine.projects.create_project("Trips")
    inside = await engine.sessions.new_session(project_id=project.id)
    outside = await engine.sessions.new_session()
    for info in (inside, outside):
        replay_server.enqueue(sse_response(openai_text_stream(["noted"])))
        await turn(engine, info.id, "the lighthouse at dawn")
    assert {h.session_id for h in await engine.library.search("lighthouse")} == {inside.id, outside.id}
    assert {h.session_id for h in await engine.library.search("lighthouse", project_id=project.id)} == {
        inside.id
    }
    listed = await engine.sessions.list_sessions(project_id=project.id)
    assert [s.id for s in listed] == [inside.id]
    assert await engine.projects.project_chat_counts() == {project.id: 1}


async def test_an_edit_made_by_another_instance_arrives_through_the_change_feed(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    """Two engines on one SQLite file. A renames, recolours and re-instructs a project; B,
    which follows the change feed as a window does, hears ``ProjectsChanged`` with the edit
    without listing the projects or sending anything, and B's next request carries the new
    instructions. B's own edit is announced once: the feed's echo of it stays silent."""
    url = Store.sqlite_url(tmp_path / "data" / DATABASE_FILENAME)
    other = await Engine.open(
        tmp_path / "b", database_url=url, retry_policy=FAST_RETRIES, provider_timeout=10.0, watch_changes=True
    )
    try:
        project = await engine.projects.create_project(
            "Garden", colour="#10b981", instructions="Answer in metric units."
        )
        info = await engine.sessions.new_session(project_id=project.id)
        assert [p.instructions for p in await other.projects.list_projects()] == ["Answer in metric units."]
        events: list[SessionEvent] = []
        other.sessions.subscribe_sessions(events.append)

        def heard() -> list[ProjectsChanged]:
            return [e for e in events if isinstance(e, ProjectsChanged)]

        watch = other.change_watch
        assert watch is not None
        await until(lambda: watch.feed is not None)

        replay_server.enqueue(sse_response(openai_text_stream(["ok"])))
        assert failure(await turn(other, info.id, "How long is it?")) is None
        assert "Answer in metric units." in system_sent(replay_server)
        assert heard() == []

        imperial = "Answer in imperial units."
        edited = replace(project, name="Allotment", colour="#ef4444", instructions=imperial)
        await engine.projects.save_project(edited)
        shown = [[("Allotment", "#ef4444", imperial)]]
        await until(
            lambda: [[(p.name, p.colour, p.instructions) for p in e.projects] for e in heard()] == shown
        )

        replay_server.enqueue(sse_response(openai_text_stream(["ok"])))
        assert failure(await turn(other, info.id, "And wide?")) is None
        system = system_sent(replay_server)
        assert "Answer in imperial units." in system and "metric" not in system

        # B's own edit: announced at once, and the feed's entry for it adds nothing.
        await other.projects.save_project(replace(edited, instructions="Answer in furlongs."))
        assert [e.projects[0].instructions for e in heard()] == [imperial, "Answer in furlongs."]
        # A chat made after it is announced by B's feed only once the entry before it was applied.
        marker = await engine.sessions.new_session("after the edit")
        await until(lambda: any(isinstance(e, SessionUpdated) and e.session.id == marker.id for e in events))
        assert len(heard()) == 2
    finally:
        await other.aclose()
