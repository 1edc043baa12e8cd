"""Deciding which tool calls run: the agent's policy first, then the user when it says "ask".

The UI supplies the ``ApprovalHandler`` (inline Allow once / Always allow / Deny
with a reason); the command line supplies none unless the user passed ``--yes``,
so a call that needs asking is refused with a reason the model can read.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from threadline.core.config import AgentConfig, Approval
from threadline.core.messages import NOT_ASKED_RESULT_TEXT, ToolCall


@dataclass(frozen=True, slots=True)
class Decision:
    call_id: str
    allow: bool
    always: bool = False
    """Allow this tool from now on (stored with the agent)."""
    reason: str = ""
    """Why the user refused; the model sees it in the cancelled result."""
    arguments: str | None = None
    """Arguments the user changed before allowing (an edited memory proposal); the call runs
    with them, while the stored call keeps what the model asked for."""


ApprovalHandler = Callable[[str, tuple[ToolCall, ...]], Awaitable[Sequence[Decision]]]

POLICY_DENIED = "The agent's policy does not allow this tool."
NOBODY_TO_ASK = NOT_ASKED_RESULT_TEXT


async def decide(
    session_id: str,
    calls: tuple[ToolCall, ...],
    agent: AgentConfig,
    handler: ApprovalHandler | None,
    *,
    policy: Callable[[ToolCall], Approval] | None = None,
) -> list[Decision]:
    """One decision per call, in call order; ``policy`` overrides ``agent.approval_for`` (trust rules)."""
    decided: dict[str, Decision] = {}
    to_ask: list[ToolCall] = []
    for call in calls:
        approval = policy(call) if policy else agent.approval_for(call.name, _argument_text(call))
        if approval is Approval.ALLOW:
            decided[call.id] = Decision(call.id, allow=True)
        elif approval is Approval.DENY:
            decided[call.id] = Decision(call.id, allow=False, reason=POLICY_DENIED)
        else:
            to_ask.append(call)
    if to_ask:
        answers = list(await handler(session_id, tuple(to_ask))) if handler else []
        by_id = {d.call_id: d for d in answers}
        for call in to_ask:
            decided[call.id] = by_id.get(call.id) or Decision(call.id, allow=False, reason=NOBODY_TO_ASK)
    return [decided[c.id] for c in calls]


def refusal_reason(decisions: Sequence[Decision]) -> str:
    reasons = dict.fromkeys(d.reason for d in decisions if not d.allow and d.reason)
    return " ".join(reasons)


def _argument_text(call: ToolCall) -> str:
    """The text argument rules match: the command line for shell tools, else the raw JSON."""
    arguments = call.parsed_arguments()
    command = arguments.get("command")
    return command if isinstance(command, str) else call.arguments
