"""The offer after a crash while tools ran: say so and run them again or skip them.

Shown when the chat opens and whenever it is ready again; nothing runs by itself, since a
tool may have done half its work (a write, a command) before the crash.
"""

from __future__ import annotations

from typing import Protocol

from threadline.core.tree import TreeError
from threadline.engine.api import EngineApi
from threadline.engine.errors import EngineError
from threadline.engine.events import ErrorAction, UserFacingError
from threadline.ui.common.error_banner import ErrorBanner
from threadline.ui.common.message_bridge import MessageBridge
from threadline.ui.common.tasks import describe, spawn

INTERRUPTED_TOOLS_KIND = "interrupted_tools"


class InterruptedToolsHost(Protocol):
    """What the offer needs of its tab."""

    engine: EngineApi
    banner: ErrorBanner
    bridge: MessageBridge

    @property
    def session_id(self) -> str: ...
    @property
    def busy(self) -> bool: ...
    def tool_name(self, name: str) -> str: ...
    def show_control_error(self, text: str) -> None: ...


class InterruptedTools:
    """The banner's offer about tool calls a crash stopped, and its two answers."""

    def __init__(self, host: InterruptedToolsHost) -> None:
        self._host = host

    def offer(self) -> None:
        """Say which calls a crash stopped (or take the offer back once nothing is left)."""
        host = self._host
        if host.busy:
            return
        stopped = host.engine.turns.interrupted_tools(host.session_id)
        banner = host.banner
        shown = banner.error is not None and banner.error.kind == INTERRUPTED_TOOLS_KIND
        if stopped is None:
            if shown:
                banner.dismiss()
            return
        names = ", ".join(dict.fromkeys(host.tool_name(c.name) for c in stopped.calls))
        unsure = [host.tool_name(n) for n in host.engine.turns.interrupted_tools_unsure(host.session_id)]
        if unsure:  # its work goes on elsewhere: a second run may do it twice
            works = "it works" if len(unsure) == 1 else "they work"
            text = (
                f"Threadline stopped while {names} ran. It cannot tell whether {', '.join(unsure)} "
                f"stopped too: {works} outside Threadline and may have finished. Check before you run "
                "it again, or skip and the model is told the call was interrupted."
            )
        else:
            text = (
                f"Threadline stopped while {names} ran, so {'it' if len(stopped.calls) == 1 else 'they'} "
                "did not finish. Run again, or skip and the model is told the call was interrupted."
            )
        banner.show_error(
            UserFacingError(INTERRUPTED_TOOLS_KIND, text, (ErrorAction.RERUN_TOOLS, ErrorAction.SKIP_TOOLS))
        )

    def rerun(self) -> None:
        host = self._host
        host.banner.dismiss()
        try:
            host.engine.turns.rerun_interrupted_tools(host.session_id)
        except (EngineError, TreeError) as err:
            host.show_control_error(f"Could not run the tools again: {describe(err)}")

    def skip(self) -> None:
        host = self._host
        host.banner.dismiss()
        spawn(
            host.engine.turns.skip_interrupted_tools(host.session_id),
            on_done=lambda _: self.offer(),
            tell=host.bridge,
            context="Could not skip the tools",
            session_id=host.session_id,
        )
