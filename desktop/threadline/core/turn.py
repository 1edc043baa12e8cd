"""The turn state machine (docs/design.md §1).

A turn is a two-phase commit: a prompt is staged, the reply streams (with any
tool rounds), then the turn commits. Making the states an explicit type, with
a table of legal transitions, turns "a session ready for input has nothing
staged" into a structural property instead of a convention: every way back to
input (commit, cancel, fail) clears the staged prompt, and nothing else can.
"""

from __future__ import annotations

from enum import StrEnum


class TurnState(StrEnum):
    IDLE = "idle"
    STREAMING = "streaming"
    AWAITING_APPROVAL = "awaiting_approval"
    RUNNING_TOOLS = "running_tools"
    COMPARING = "comparing"
    """Several workers answer one prompt at once (``core/compare.py``); each has its own lane."""
    FAILED = "failed"


class TurnAction(StrEnum):
    STAGE = "stage"
    TOOL_CALLS = "tool_calls"
    DECIDED = "decided"
    """Every pending call was allowed or refused; the allowed ones run next."""
    TOOLS_DONE = "tools_done"
    COMMIT = "commit"
    CANCEL = "cancel"
    FAIL = "fail"
    START_COMPARE = "start_compare"
    """A prompt is staged for several workers (models or agents) at once."""
    WORKER_ENDED = "worker_ended"
    """One worker of a compare finished, failed or was stopped; the others go on."""
    PICK = "pick"
    """The person chose one worker's reply to continue with; the others stop."""
    COMPARE_DONE = "compare_done"
    """Every worker of the compare has ended."""


_BUSY = (TurnState.STREAMING, TurnState.AWAITING_APPROVAL, TurnState.RUNNING_TOOLS, TurnState.COMPARING)

TRANSITIONS: dict[tuple[TurnState, TurnAction], TurnState] = {
    (TurnState.IDLE, TurnAction.STAGE): TurnState.STREAMING,
    (TurnState.FAILED, TurnAction.STAGE): TurnState.STREAMING,
    (TurnState.STREAMING, TurnAction.TOOL_CALLS): TurnState.AWAITING_APPROVAL,
    (TurnState.AWAITING_APPROVAL, TurnAction.DECIDED): TurnState.RUNNING_TOOLS,
    (TurnState.RUNNING_TOOLS, TurnAction.TOOLS_DONE): TurnState.STREAMING,
    (TurnState.STREAMING, TurnAction.COMMIT): TurnState.IDLE,
    (TurnState.IDLE, TurnAction.START_COMPARE): TurnState.COMPARING,
    (TurnState.FAILED, TurnAction.START_COMPARE): TurnState.COMPARING,
    (TurnState.COMPARING, TurnAction.WORKER_ENDED): TurnState.COMPARING,
    (TurnState.COMPARING, TurnAction.PICK): TurnState.IDLE,
    (TurnState.COMPARING, TurnAction.COMPARE_DONE): TurnState.IDLE,
    **{(state, TurnAction.CANCEL): TurnState.IDLE for state in _BUSY},
    **{(state, TurnAction.FAIL): TurnState.FAILED for state in _BUSY},
}


class IllegalTransition(RuntimeError):
    """An action was attempted in a state that does not allow it (a programming error)."""

    def __init__(self, state: TurnState, action: TurnAction) -> None:
        super().__init__(f"cannot {action.value} while {state.value}")
        self.state = state
        self.action = action


class Turn:
    """The state of the one turn a session may run, and the prompt it staged."""

    def __init__(self) -> None:
        self._state = TurnState.IDLE
        self._staged: str | None = None

    @property
    def state(self) -> TurnState:
        return self._state

    @property
    def staged(self) -> str | None:
        """Id of the prompt message this turn staged, while the turn runs."""
        return self._staged

    @property
    def busy(self) -> bool:
        return self._state in _BUSY

    @property
    def ready_for_input(self) -> bool:
        return not self.busy

    def can(self, action: TurnAction) -> bool:
        return (self._state, action) in TRANSITIONS

    def apply(self, action: TurnAction, staged: str | None = None) -> TurnState:
        """Move to the next state or raise ``IllegalTransition``."""
        try:
            nxt = TRANSITIONS[(self._state, action)]
        except KeyError:
            raise IllegalTransition(self._state, action) from None
        if action in (TurnAction.STAGE, TurnAction.START_COMPARE):
            if staged is None:
                raise ValueError("stage needs the id of the staged prompt")
            self._staged = staged
        elif nxt in (TurnState.IDLE, TurnState.FAILED):
            self._staged = None
        self._state = nxt
        return nxt
