"""Settings → Knowledge keeps its shape from one base to the next, as a person clicks through them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.waiting import WAIT_MS
from tests.ui.knowledge.test_flows_knowledge import handbook, open_knowledge_page


def test_the_list_of_bases_keeps_its_width_for_a_base_not_yet_indexed(harness: Any, tmp_path: Path) -> None:
    """The hint under "Files that could not be read" of a base never indexed was one long line:
    the page widened for it and the list of bases shrank to its narrowest."""
    folder = handbook(tmp_path / "handbook")
    harness.open()
    harness.run(harness.engine.knowledge.add("handbook", [folder]))
    dialog = open_knowledge_page(harness)
    dialog.resize(930, 640)
    page = dialog.knowledge
    harness.qtbot.waitUntil(
        lambda: page.list.count() == 1 and page.problems.none.text().startswith("Files that cannot be read"),
        timeout=WAIT_MS,
    )
    harness.qtbot.waitUntil(lambda: page.list.width() == page.list.maximumWidth(), timeout=WAIT_MS)
    assert page.problems.none.isVisible()
