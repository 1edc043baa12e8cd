"""A start does not import the workspace's scanner, diffs and restore code (nor ``difflib``):
they load with the first tool call that writes or the first look at a chat's changes."""

from __future__ import annotations

from pathlib import Path

from tests.support.fresh_python import run_fresh

SCRIPT = """
import asyncio, sys
from pathlib import Path
from threadline.engine.engine import Engine

LATER = (
    "threadline.workspace.scan",
    "threadline.workspace.changes",
    "threadline.workspace.restore",
    "threadline.workspace.recorder",
    "difflib",
)

async def main(data_dir):
    engine = await Engine.open(Path(data_dir))
    try:
        info = await engine.store.create_session(title="Files")
        assert not [m for m in LATER if m in sys.modules], [m for m in LATER if m in sys.modules]
        assert await engine.workspace.turn_changes(info.id) == []
    finally:
        await engine.aclose()

asyncio.run(main(sys.argv[1]))
"""


def test_a_start_leaves_the_workspace_code_for_its_first_use(tmp_path: Path) -> None:
    run_fresh(SCRIPT, str(tmp_path))
