"""Compaction policy: what to summarise and how to ask for the summary (docs/design.md §1).

Compaction replaces the older part of the path, in what is *sent*, by a
summary message; the originals stay in storage and in search. The policy keeps
the last turns verbatim, prunes old tool output before summarising, builds on
the previous summary, and escalates (shorter excerpts, then fewer messages)
when the summarisation request itself does not fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from threadline.core.messages import TOOL_ANSWER_KINDS, Message, MessageKind, MessageStatus, Role
from threadline.core.request import BuiltRequest, SentMessage, estimate_tokens_by_chars, split_at_summary

SUMMARY_SYSTEM = (
    "You write faithful, compact summaries of conversations so they can continue without the "
    "original messages. Keep decisions, facts, names, numbers, file paths, code identifiers, open "
    "questions and the user's preferences. Do not invent anything. Write in the conversation's language."
)


@dataclass(frozen=True, slots=True)
class Escalation:
    """How hard to squeeze: characters kept per message and per tool output, and messages left out."""

    message_chars: int
    tool_output_chars: int
    exclude_newest: int = 0


ESCALATIONS = (
    Escalation(message_chars=6000, tool_output_chars=400),
    Escalation(message_chars=1500, tool_output_chars=120),
    Escalation(message_chars=1500, tool_output_chars=120, exclude_newest=2),
)


class NothingToCompactError(Exception):
    """The path is too short: everything is already among the turns kept verbatim."""

    user_message = "There is nothing to compact yet: the conversation only has its latest turns."


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    summarised_through: str
    """The last message the summary stands for when every planned message is summarised."""
    messages: tuple[Message, ...]
    previous_summary: str

    def summarised(self, escalation: Escalation) -> tuple[Message, ...]:
        """The planned messages ``escalation`` puts into the summary request.

        The last escalation leaves the newest ones out to make the request smaller. They
        are then not in the summary, so the summary must not stand for them: they stay
        after its ``summarised_through`` and are sent as they are (``through``). The part
        left out starts where a request may go on after the summary — a prompt or a round
        of tool results, never the model's reply, which a request cannot start with — so
        at least ``exclude_newest`` are left out, or none when no such start leaves
        something to summarise.
        """
        if not escalation.exclude_newest:
            return self.messages
        start = len(self.messages) - escalation.exclude_newest
        while start > 0 and not _may_follow_a_summary(self.messages[start]):
            start -= 1
        return self.messages[:start] if start > 0 else self.messages

    def through(self, escalation: Escalation) -> str:
        """The id the summary written under ``escalation`` stands for, up to and including."""
        return self.summarised(escalation)[-1].id


def _may_follow_a_summary(message: Message) -> bool:
    return message.kind is MessageKind.PROMPT or message.kind in TOOL_ANSWER_KINDS


def plan_compaction(path: Sequence[Message], *, keep_turns: int = 2) -> CompactionPlan:
    """Summarise everything before the last ``keep_turns`` user prompts (and after the last summary)."""
    previous, body = split_at_summary(path)
    starts = [i for i, m in enumerate(body) if m.kind is MessageKind.PROMPT]
    if keep_turns <= 0:
        cut = len(body)
    else:
        cut = starts[-keep_turns] if len(starts) >= keep_turns else 0
    older = [m for m in body[:cut] if m.status is not MessageStatus.STREAMING]
    if not older:
        raise NothingToCompactError(NothingToCompactError.user_message)
    return CompactionPlan(
        summarised_through=older[-1].id,
        messages=tuple(older),
        previous_summary=previous.text if previous else "",
    )


def summary_request(plan: CompactionPlan, escalation: Escalation, instructions: str = "") -> BuiltRequest:
    """The one-message request that asks a model for the new summary."""
    messages = plan.summarised(escalation)
    parts: list[str] = []
    if plan.previous_summary:
        parts.append(f"Summary so far:\n{plan.previous_summary}")
    parts.append("Conversation to add to the summary:")
    parts.extend(_excerpt(m, escalation) for m in messages)
    ask = "Write the updated summary of the whole conversation so far."
    if instructions:
        ask += f" Follow these instructions from the user: {instructions}"
    parts.append(ask)
    text = "\n\n".join(p for p in parts if p)
    return BuiltRequest(
        system=SUMMARY_SYSTEM,
        messages=(SentMessage(Role.USER, text=text),),
        estimated_tokens=estimate_tokens_by_chars(SUMMARY_SYSTEM + text),
    )


def _excerpt(message: Message, escalation: Escalation) -> str:
    if message.kind is MessageKind.SUMMARY or message.kind is MessageKind.MARKER:
        return ""
    if message.tool_results:
        lines = [
            f"[tool result {r.tool_name or r.call_id}{' (error)' if r.is_error else ''}]: "
            + _clip(r.text, escalation.tool_output_chars)
            for r in message.tool_results
        ]
        return "\n".join(lines)
    who = "User" if message.role is Role.USER else "Assistant"
    text = _clip(message.text, escalation.message_chars)
    calls = "".join(f"\n[called tool {c.name} with {_clip(c.arguments, 200)}]" for c in message.tool_calls)
    files = "".join(f"\n[attached file {c.name}]" for c in message.context)
    return f"{who}: {text}{calls}{files}".rstrip()


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f" […{len(text) - limit} characters left out]"
