"""A real MCP server that writes in the allowed folder (mcp-server-git's checkout), recorded by a scan.

The read-only tool of the same server (``git_status``, annotated ``readOnlyHint``) is not
recorded; the checkout's change to the work tree is, and restoring before the turn gives
the files back.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tests.integration.tools.conftest import git_server
from tests.integration.tools.tool_turns import failure, run_turn, text_reply, tool_call_reply
from tests.support.engines import open_engine
from tests.support.sse_server import ReplayServer

from threadline.core.config import AgentConfig, Approval, ApprovalRule, ProviderKind
from threadline.core.file_changes import ChangeKind
from threadline.engine.events import FileChangesRecorded

pytestmark = pytest.mark.asyncio


def _repository(tmp_path: Path) -> Path:
    repository = tmp_path / "repo"
    repository.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repository, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "test@example.com")
    git("config", "user.name", "Test")
    (repository / "README.md").write_text("# main\n")
    git("add", "README.md")
    git("commit", "-q", "-m", "main")
    git("checkout", "-q", "-b", "other")
    (repository / "README.md").write_text("# other\nmore\n")
    (repository / "other.txt").write_text("only on other\n")
    git("add", "README.md", "other.txt")
    git("commit", "-q", "-m", "other")
    git("checkout", "-q", "main")
    return repository


async def test_an_mcp_servers_writes_are_recorded_and_restored(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    repository = _repository(tmp_path)
    kind = ProviderKind.OPENAI
    engine = await open_engine(tmp_path / "data", replay_server, kind)
    try:
        await engine.tool_servers.save_server(git_server(repository))
        await engine.agents.save_agent(
            AgentConfig(
                "default",
                "Default",
                enabled_tools=("git/git_status", "git/git_checkout"),
                approval_rules=(ApprovalRule("git/*", Approval.ALLOW),),
                allowed_folders=(str(repository),),
            )
        )
        replay_server.enqueue(
            tool_call_reply(
                kind,
                [
                    ("g1", "git__git_status", {"repo_path": str(repository)}),
                    ("g2", "git__git_checkout", {"repo_path": str(repository), "branch_name": "other"}),
                ],
            ),
            text_reply(kind, "Switched."),
        )
        session = await engine.sessions.new_session()
        events = await run_turn(engine, session.id, "switch to the other branch")
        assert failure(events) is None
        assert (repository / "other.txt").exists()
        (recorded,) = [e.change_set for e in events if isinstance(e, FileChangesRecorded)]
        assert recorded.tool_name == "git__git_checkout"
        assert [(os.path.basename(c.path), c.kind) for c in recorded.changes] == [
            ("README.md", ChangeKind.MODIFIED),
            ("other.txt", ChangeKind.CREATED),
        ]
        plan = await engine.workspace.plan_before_turn(session.id, 1)
        await engine.workspace.run_restore(plan)
        assert (repository / "README.md").read_text() == "# main\n"
        assert not (repository / "other.txt").exists()
    finally:
        await engine.aclose()
