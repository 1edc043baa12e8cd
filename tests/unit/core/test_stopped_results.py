"""The result of a tool call the user stopped while it ran: it says how long it ran, and the
window reads that time back to show "Stopped after 3 s"."""

from __future__ import annotations

import pytest

from threadline.core.messages import (
    ToolCall,
    cancelled_result,
    duration_text,
    stopped_after,
    stopped_result,
)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.2, "less than 1 s"), (2.6, "3 s"), (59.4, "59 s"), (60, "1 min"), (125, "2 min 5 s")],
)
def test_duration_text(seconds: float, text: str) -> None:
    assert duration_text(seconds) == text


def test_a_stopped_result_says_how_long_the_call_ran_and_is_read_back() -> None:
    call = ToolCall(id="c1", name="shell", arguments='{"command": "sleep 60"}')
    result = stopped_result(call, 3.2)
    assert result.is_error and result.call_id == "c1" and result.tool_name == "shell"
    assert result.text == "Stopped by the user after 3 s, while it ran; it may have done part of its work."
    assert stopped_after(result) == "3 s"
    assert stopped_after(cancelled_result(call)) is None
