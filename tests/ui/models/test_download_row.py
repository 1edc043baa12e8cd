"""A download's row on the Models page, stepped through the states a download goes through."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QWidget

from threadline.models.download import DownloadJob, State
from threadline.models.hub import HubFile
from threadline.ui.models.download_row import DownloadRow


def test_the_bar_moves_where_there_is_no_share_to_show(qtbot: Any) -> None:
    """A file the Hub gave no size for stood at 0 % to its end; the SHA-256 check at 100 %."""
    parent = QWidget()
    qtbot.addWidget(parent)
    job = DownloadJob(HubFile("tiny/Tiny-GGUF", "tiny.gguf", 0, None), "http://127.0.0.1:9/tiny.gguf")
    job.state, job.done = State.RUNNING, 5_000
    row = DownloadRow(job, parent)
    assert row.bar.maximum() == 0  # Qt's busy bar
    assert row.status.text() == "5 KB"  # no "of …" where the size is not known

    sized = DownloadJob(HubFile("tiny/Tiny-GGUF", "big.gguf", 10_000, None), "http://127.0.0.1:9/big.gguf")
    sized.state, sized.done = State.RUNNING, 2_500
    row = DownloadRow(sized, parent)
    assert (row.bar.maximum(), row.bar.value()) == (1000, 250)
    sized.state, sized.done = State.CHECKING, 10_000
    row.update_from(sized)
    assert row.bar.maximum() == 0 and row.status.text() == "Checking the SHA-256…"
    sized.state = State.DONE
    row.update_from(sized)
    assert (row.bar.maximum(), row.bar.value()) == (1000, 1000)
