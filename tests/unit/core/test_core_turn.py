"""The turn state machine: every legal transition, and every illegal one raises."""

from __future__ import annotations

import itertools

import pytest

from threadline.core.turn import TRANSITIONS, IllegalTransition, Turn, TurnAction, TurnState

S, A = TurnState, TurnAction

# The table of docs/design.md §1, written out independently of the implementation's.
EXPECTED: dict[tuple[TurnState, TurnAction], TurnState] = {
    (S.IDLE, A.STAGE): S.STREAMING,
    (S.FAILED, A.STAGE): S.STREAMING,
    (S.STREAMING, A.TOOL_CALLS): S.AWAITING_APPROVAL,
    (S.AWAITING_APPROVAL, A.DECIDED): S.RUNNING_TOOLS,
    (S.RUNNING_TOOLS, A.TOOLS_DONE): S.STREAMING,
    (S.STREAMING, A.COMMIT): S.IDLE,
    (S.STREAMING, A.CANCEL): S.IDLE,
    (S.AWAITING_APPROVAL, A.CANCEL): S.IDLE,
    (S.RUNNING_TOOLS, A.CANCEL): S.IDLE,
    (S.STREAMING, A.FAIL): S.FAILED,
    (S.AWAITING_APPROVAL, A.FAIL): S.FAILED,
    (S.RUNNING_TOOLS, A.FAIL): S.FAILED,
    # A compare (several workers on one prompt) is one turn, ended by the last worker or a pick.
    (S.IDLE, A.START_COMPARE): S.COMPARING,
    (S.FAILED, A.START_COMPARE): S.COMPARING,
    (S.COMPARING, A.WORKER_ENDED): S.COMPARING,
    (S.COMPARING, A.PICK): S.IDLE,
    (S.COMPARING, A.COMPARE_DONE): S.IDLE,
    (S.COMPARING, A.CANCEL): S.IDLE,
    (S.COMPARING, A.FAIL): S.FAILED,
}
STAGING = (A.STAGE, A.START_COMPARE)

# How to reach each state from a fresh turn with legal actions only.
ROUTES: dict[TurnState, list[TurnAction]] = {
    S.IDLE: [],
    S.STREAMING: [A.STAGE],
    S.AWAITING_APPROVAL: [A.STAGE, A.TOOL_CALLS],
    S.RUNNING_TOOLS: [A.STAGE, A.TOOL_CALLS, A.DECIDED],
    S.FAILED: [A.STAGE, A.FAIL],
    S.COMPARING: [A.START_COMPARE],
}


def turn_in(state: TurnState) -> Turn:
    turn = Turn()
    for action in ROUTES[state]:
        turn.apply(action, staged="p1" if action in STAGING else None)
    assert turn.state is state
    return turn


def test_table_is_the_designed_one() -> None:
    assert dict(TRANSITIONS) == EXPECTED


ALL = list(itertools.product(TurnState, TurnAction))


@pytest.mark.parametrize(("state", "action"), [p for p in ALL if p in EXPECTED])
def test_legal_transition(state: TurnState, action: TurnAction) -> None:
    turn = turn_in(state)
    assert turn.can(action)
    assert turn.apply(action, staged="p2" if action in STAGING else None) is EXPECTED[(state, action)]
    assert turn.state is EXPECTED[(state, action)]


@pytest.mark.parametrize(("state", "action"), [p for p in ALL if p not in EXPECTED])
def test_illegal_transition_raises_and_changes_nothing(state: TurnState, action: TurnAction) -> None:
    turn = turn_in(state)
    staged = turn.staged
    assert not turn.can(action)
    with pytest.raises(IllegalTransition) as info:
        turn.apply(action, staged="p2" if action in STAGING else None)
    assert info.value.state is state and info.value.action is action
    assert action.value in str(info.value) and state.value in str(info.value)
    assert turn.state is state and turn.staged == staged


def test_every_state_is_reachable_and_left() -> None:
    assert {s for s, _ in EXPECTED} | set(EXPECTED.values()) == set(TurnState)


def test_stage_records_the_prompt_and_keeps_it_through_tool_rounds() -> None:
    turn = Turn()
    assert turn.staged is None and turn.ready_for_input and not turn.busy
    turn.apply(A.STAGE, staged="p1")
    assert turn.staged == "p1" and turn.busy and not turn.ready_for_input
    for action in (A.TOOL_CALLS, A.DECIDED, A.TOOLS_DONE):
        turn.apply(action)
        assert turn.staged == "p1" and turn.busy


def test_stage_needs_the_prompt_id() -> None:
    turn = Turn()
    with pytest.raises(ValueError):
        turn.apply(A.STAGE)
    assert turn.state is S.IDLE


BACK_TO_INPUT = [(s, a) for (s, a), nxt in EXPECTED.items() if nxt in (S.IDLE, S.FAILED)]


def test_back_to_input_is_commit_cancel_or_fail() -> None:
    """Or, for a compare, the last worker's end or a pick."""
    assert {a for _, a in BACK_TO_INPUT} == {A.COMMIT, A.CANCEL, A.FAIL, A.PICK, A.COMPARE_DONE}
    assert len(BACK_TO_INPUT) == 11


@pytest.mark.parametrize(("state", "action"), BACK_TO_INPUT)
def test_every_way_back_to_input_clears_staged(state: TurnState, action: TurnAction) -> None:
    turn = turn_in(state)
    turn.apply(action)
    assert turn.ready_for_input
    assert turn.staged is None


def test_failed_is_ready_for_input_and_can_stage_again() -> None:
    turn = turn_in(S.FAILED)
    assert turn.ready_for_input and turn.staged is None
    turn.apply(A.STAGE, staged="p2")
    assert turn.state is S.STREAMING and turn.staged == "p2"
