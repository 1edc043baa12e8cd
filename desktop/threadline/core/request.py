"""Building what is sent to a model from the active path (docs/design.md §1).

Storage keeps everything; what is *sent* is derived, and always well-formed:

* a partial reply (cancelled, interrupted) is sent as the text it has, a failed
  reply with no text is left out, a reply still streaming is left out, and
  messages of one role left adjacent are merged so roles alternate;
* then the invariants are enforced, in this order:

  1. length: the oldest turns are dropped (from the request only) until the
     rest fits the history cap and the token budget, always cutting at a user
     prompt; if nothing fits, ``NothingFitsError`` says how to continue;
  2. the first message is a user prompt; tool results there become text;
  3. tool results answer the calls of the assistant message right before them;
     orphans become text;
  4. every tool call has a result: a call its interrupted round left without one
     (the process died while it ran) is answered "interrupted — Threadline
     stopped while this tool ran", a call nothing answers at all gets the
     matching "stopped before it was answered"; "cancelled by the user" is only
     ever what the user did, and that is stored as it happens;
  5. calls to tools that no longer exist are repaired to a known name or
     mapped to a placeholder tool, so the provider accepts the history.

Every function here is pure; the Hypothesis tests call ``check_well_formed`` on
whatever comes out.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING

from threadline.core.messages import (
    PARTIAL_STATUSES,
    RECORD_KINDS,
    TOOL_ANSWER_KINDS,
    ContextFile,
    ImageBlock,
    MarkerType,
    Message,
    MessageKind,
    MessageStatus,
    Role,
    ToolCall,
    ToolResult,
    interrupted_result,
    unanswered_result,
)
from threadline.core.reasoning import Reasoning

if TYPE_CHECKING:
    from threadline.core.tree import ConversationTree

PLACEHOLDER_TOOL_NAME = "unavailable_tool"
PLACEHOLDER_TOOL_DESCRIPTION = (
    "Stands for a tool used earlier in this conversation that is no longer available. Do not call it."
)
CONTINUE_PROMPT = "Continue exactly where your previous reply stopped, without repeating it."
IMAGE_TOKENS = 800
MESSAGE_OVERHEAD_TOKENS = 4


class NothingFitsError(Exception):
    """Even the newest turn alone exceeds the limits: the user must act."""

    def __init__(self, needed: int, budget: int | None, cap: int, messages: int = 0) -> None:
        self.needed = needed
        self.budget = budget
        self.cap = cap
        self.messages = messages
        over_budget = budget is not None and needed > budget
        if messages > cap and not over_budget:
            text = (
                f"The latest turn alone has {messages} messages, more than the {cap} a request may "
                "carry (a long run of tool calls). Compact the conversation or continue in a new session."
            )
        else:
            text = (
                "This conversation no longer fits the model's context window, even its latest "
                "message alone. Compact the conversation, remove attached context files, or "
                "continue in a new session."
            )
        super().__init__(text)

    @property
    def user_message(self) -> str:
        return str(self)


@dataclass(frozen=True, slots=True)
class SentMessage:
    """One message as a provider receives it (providers convert it to their format)."""

    role: Role
    text: str = ""
    images: tuple[ImageBlock, ...] = ()
    context: tuple[ContextFile, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    source_ids: tuple[str, ...] = ()
    reasoning: tuple[Reasoning, ...] = ()
    """A reply's reasoning; each provider's converter decides what of it goes back (usually none)."""

    @property
    def is_prompt(self) -> bool:
        """A user message with something the person said (not only tool results)."""
        return self.role is Role.USER and bool(self.text or self.images or self.context)

    @property
    def is_empty(self) -> bool:
        return not (self.text or self.images or self.context or self.tool_calls or self.tool_results)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as offered to a model: name, description and a JSON schema."""

    name: str
    description: str = ""
    input_schema: dict[str, object] = field(default_factory=lambda: {"type": "object", "properties": {}})


PLACEHOLDER_TOOL = ToolSpec(PLACEHOLDER_TOOL_NAME, PLACEHOLDER_TOOL_DESCRIPTION)


@dataclass(frozen=True, slots=True)
class Limits:
    """How much history may be sent: a message cap and a token budget (``None``: unlimited)."""

    history_cap: int = 400
    token_budget: int | None = None


TokenEstimator = Callable[[str], int]


def estimate_tokens_by_chars(text: str) -> int:
    """The default estimator: about four characters a token, as for English text."""
    return tokens_for_chars(len(text))


def tokens_for_chars(count: int) -> int:
    """``estimate_tokens_by_chars`` of a text ``count`` characters long."""
    return math.ceil(count / 4)


def estimate_tool_tokens(tools: Sequence[ToolSpec]) -> int:
    """Tokens the tool definitions of a request take (their JSON, estimated like text)."""
    return sum(estimate_tokens_by_chars(json.dumps(asdict(spec))) for spec in tools)


def estimate_message(message: SentMessage, estimator: TokenEstimator = estimate_tokens_by_chars) -> int:
    return MESSAGE_OVERHEAD_TOKENS + estimator(message.text) + _beyond_text(message, estimator)


def _beyond_text(message: SentMessage, estimator: TokenEstimator) -> int:
    """A message's tokens besides its text and overhead (files, tool calls and results, images)."""
    tokens = 0
    # Most messages are text alone: the sums below are skipped for them (the meter estimates
    # every message of the history after each turn).
    if message.context:
        tokens += sum(estimator(c.text) + estimator(c.name) for c in message.context)
    if message.tool_calls:
        tokens += sum(estimator(c.name) + estimator(c.arguments) for c in message.tool_calls)
    if message.tool_results:
        tokens += sum(estimator(r.text) + IMAGE_TOKENS * len(r.images) for r in message.tool_results)
    return tokens + IMAGE_TOKENS * len(message.images)


@dataclass(frozen=True, slots=True)
class BuiltRequest:
    """The messages to send, with the system text and what the builder had to do."""

    system: str
    messages: tuple[SentMessage, ...]
    estimated_tokens: int
    dropped_messages: int = 0
    needs_placeholder_tool: bool = False
    repairs: tuple[str, ...] = ()
    summary_id: str | None = None


def build_request(
    path: Sequence[Message],
    *,
    system: str = "",
    limits: Limits = Limits(),
    estimator: TokenEstimator = estimate_tokens_by_chars,
    known_tools: Collection[str] | None = None,
    continue_reply: bool = False,
) -> BuiltRequest:
    """The well-formed request for ``path`` (root to active leaf).

    ``continue_reply`` adds a short instruction after a partial reply at the end
    of the path, so the model carries on from its text.
    """
    summary, body = split_at_summary(path)
    if summary is not None:
        system = f"{system}\n\n" if system else ""
        system += f"Summary of the earlier part of this conversation:\n{summary.text}"
    if continue_reply and body and body[-1].is_assistant and body[-1].status is MessageStatus.STREAMING:
        # A reply being continued (``Conversation.resume``) streams again, but the
        # model must see the text it has so far: send it as the partial it was.
        body[-1] = body[-1].copy(status=MessageStatus.INTERRUPTED)
    interrupted = interrupted_call_ids(body)
    messages = sendable_messages(body)
    if continue_reply and messages and messages[-1].role is Role.ASSISTANT:
        messages.append(SentMessage(Role.USER, text=CONTINUE_PROMPT))
    if not messages:
        raise ValueError("there is nothing to send")
    fixed = estimator(system)
    # Invariant 1 is checked on what is finally sent: the repairs of invariants 2-5
    # add text (flattened results, cancelled results), so a cut that fits before them
    # may not fit after. Try the cuts from the oldest that could fit, newest last.
    cuts = _cut_points(messages)
    try:
        _, first_cut = enforce_length(messages, limits, estimator, fixed)
    except NothingFitsError:
        first_cut = cuts[-1]  # renaming tools may still make the last turn fit
    cuts = [c for c in cuts if c >= first_cut]
    needed = count = 0
    for cut in cuts:
        repairs: list[str] = [f"dropped {cut} oldest messages to fit"] if cut else []
        sent = enforce_first_is_prompt(messages[cut:], repairs)
        sent = enforce_results_answer_calls(sent, repairs)
        sent = enforce_calls_answered(sent, repairs, interrupted)
        sent, placeholder = enforce_known_tools(sent, known_tools, repairs)
        tokens = fixed + sum(estimate_message(m, estimator) for m in sent)
        if len(sent) <= limits.history_cap and (limits.token_budget is None or tokens <= limits.token_budget):
            return BuiltRequest(
                system=system,
                messages=tuple(sent),
                estimated_tokens=tokens,
                dropped_messages=cut,
                needs_placeholder_tool=placeholder,
                repairs=tuple(repairs),
                summary_id=summary.id if summary else None,
            )
        needed, count = tokens, len(sent)
    raise NothingFitsError(needed, limits.token_budget, limits.history_cap, count)


# -- the derivation before the invariants ---------------------------------------------


def after_clear(path: Sequence[Message]) -> Sequence[Message]:
    """The part of ``path`` after its latest clear marker (all of it when there is none).

    ``/clear`` starts a fresh context without deleting anything: what came before the
    marker stays visible and searchable but is never sent again, summaries included.
    """
    for index in range(len(path) - 1, -1, -1):
        marker = path[index].marker
        if marker is not None and marker.type is MarkerType.CLEAR:
            return path[index + 1 :]
    return path


def split_at_summary(path: Sequence[Message]) -> tuple[Message | None, list[Message]]:
    """The latest summary on the path (after its latest clear) and the messages it does not
    stand for."""
    path = after_clear(path)
    for index in range(len(path) - 1, -1, -1):
        summary = path[index]
        if summary.kind is MessageKind.SUMMARY:
            ids = [m.id for m in path]
            covered = ids.index(summary.summarised_through) if summary.summarised_through in ids else index
            rest = [m for m in path[covered + 1 :] if m.kind is not MessageKind.SUMMARY]
            return summary, rest
    return None, list(path)


def interrupted_call_ids(body: Sequence[Message]) -> frozenset[str]:
    """Ids of the calls whose round was ``interrupted`` (the process died while they ran).

    A round's answer is stored ``streaming`` before its tools start and filled as
    they finish; a crash leaves it ``interrupted`` with the results of the calls
    that finished. The others are answered ``interrupted_result`` by invariant 4.
    """
    ids: set[str] = set()
    for message in body:
        if message.kind in TOOL_ANSWER_KINDS and message.status is MessageStatus.INTERRUPTED:
            done = {r.call_id for r in message.tool_results}
            ids.update(c.id for c in _calls_of(body, message.parent_id) if c.id not in done)
    return frozenset(ids)


def _calls_of(body: Sequence[Message], message_id: str | None) -> tuple[ToolCall, ...]:
    return next((m.tool_calls for m in body if m.id == message_id), ())


def sendable_messages(body: Sequence[Message]) -> list[SentMessage]:
    """Complete messages converted and merged so that roles alternate."""
    out: list[SentMessage] = []
    for message in body:
        sent = _to_sent(message)
        if sent is None or sent.is_empty:
            continue
        if out and out[-1].role is sent.role:
            out[-1] = _merge(out[-1], sent)
        else:
            out.append(sent)
    return out


def sendable_tokens(body: Iterable[Message], estimator: TokenEstimator = estimate_tokens_by_chars) -> int:
    """What ``sendable_messages(body)`` would estimate at (``estimate_message`` summed),
    converting one message at a time instead of holding them all.

    The context meter asks this of the whole history after a chat opens and after every
    turn; the converted list of a 10,000-message chat was the largest peak of short-lived
    objects of an open (figures: docs/performance.md, "Memory after a big chat is opened
    and closed").
    """
    total = 0
    current: SentMessage | None = None
    for message in body:
        sent = _to_sent(message)
        if sent is None or sent.is_empty:
            continue
        if current is not None and current.role is sent.role:
            current = _merge(current, sent)
            continue
        if current is not None:
            total += estimate_message(current, estimator)
        current = sent
    return total if current is None else total + estimate_message(current, estimator)


def path_history_tokens(tree: ConversationTree, leaf: str | None = None) -> tuple[Message | None, int]:
    """``split_at_summary(tree.path(leaf))``'s summary, and ``sendable_tokens`` of the rest by
    the default estimator, without making the tree's packed messages.

    A packed message is plain text (``core/packed_history.py``), so its role, kind, status
    and text length are all its estimate needs; only the path's summaries and markers (to
    find the latest clear and summary) and the messages held as objects are made. The
    meter asks this after a chat opens and after each turn, so making every message of a
    long chat for it was a noticeable share of an open (figures: docs/performance.md).
    """
    ids, kinds = tree.path_kinds(leaf)
    dividers = {i: tree.get(ids[i]) for i, kind in enumerate(kinds) if kind in RECORD_KINDS}
    start = 0
    for index in sorted(dividers, reverse=True):
        marker = dividers[index].marker
        if marker is not None and marker.type is MarkerType.CLEAR:
            start = index + 1
            break
    summary: Message | None = None
    first = start
    for index in sorted((i for i in dividers if i >= start), reverse=True):
        if dividers[index].kind is MessageKind.SUMMARY:
            summary = dividers[index]
            through = summary.summarised_through
            rest = ids[start:]
            first = start + rest.index(through) + 1 if through in rest else index + 1
            break
    total = 0
    role: Role | None = None  # the merged message being added up: its role, text and the rest
    text_chars = texts = beyond = 0
    for message_id, _kind, facts in itertools.islice(tree.path_outline(leaf), first, None):
        if facts is None:
            sent = _to_sent(tree.get(message_id))
            if sent is None or sent.is_empty:
                continue
            piece_role, chars, extra = sent.role, len(sent.text), _beyond_text(sent, estimate_tokens_by_chars)
        else:
            piece = _plain_piece(*facts)
            if piece is None:
                continue
            piece_role, chars, extra = piece
        if role is piece_role:
            beyond += extra
        else:
            if role is not None:
                total += _merged_estimate(text_chars, texts, beyond)
            role, text_chars, texts, beyond = piece_role, 0, 0, extra
        if chars:  # merging joins the non-empty texts with a blank line
            text_chars += chars
            texts += 1
    if role is not None:
        total += _merged_estimate(text_chars, texts, beyond)
    return summary, total


def _plain_piece(
    role: Role, kind: MessageKind, status: MessageStatus, chars: int
) -> tuple[Role, int, int] | None:
    """What ``_to_sent`` makes of a message with nothing but text: its role, text length and
    zero further tokens; ``None`` when it sends nothing (mirrors ``_to_sent``, tested against it)."""
    if kind in RECORD_KINDS:
        return None
    if role is Role.ASSISTANT:
        if status is MessageStatus.STREAMING or not chars:
            return None  # a failed reply without text is skipped; any other without text is empty
        return Role.ASSISTANT, chars, 0
    if kind is MessageKind.PROMPT and chars:
        return Role.USER, chars, 0
    return None  # an empty prompt, or a tool answer without results: nothing to send


def _merged_estimate(text_chars: int, texts: int, beyond: int) -> int:
    joined = text_chars + 2 * max(0, texts - 1)
    return MESSAGE_OVERHEAD_TOKENS + tokens_for_chars(joined) + beyond


def _to_sent(message: Message) -> SentMessage | None:
    if message.kind is MessageKind.SUMMARY or message.kind is MessageKind.MARKER:
        return None  # a summary goes into the system text; a marker is for people only
    if message.is_assistant:
        if message.status is MessageStatus.STREAMING:
            return None
        if message.status is MessageStatus.FAILED and not message.text:
            return None
        keep_calls = message.status is MessageStatus.COMPLETE or message.status in PARTIAL_STATUSES
        return SentMessage(
            Role.ASSISTANT,
            text=message.text,
            tool_calls=message.tool_calls if keep_calls else (),
            source_ids=(message.id,),
            reasoning=message.reasoning,
        )
    if message.kind is MessageKind.PROMPT:
        return SentMessage(
            Role.USER,
            text=message.text,
            images=message.images,
            context=message.context,
            source_ids=(message.id,),
        )
    return SentMessage(Role.USER, tool_results=message.tool_results, source_ids=(message.id,))


def _merge(first: SentMessage, second: SentMessage) -> SentMessage:
    return SentMessage(
        first.role,
        text="\n\n".join(t for t in (first.text, second.text) if t),
        images=first.images + second.images,
        context=first.context + second.context,
        tool_calls=first.tool_calls + second.tool_calls,
        tool_results=first.tool_results + second.tool_results,
        source_ids=first.source_ids + second.source_ids,
        reasoning=first.reasoning + second.reasoning,
    )


# -- invariant 1: length ------------------------------------------------------------------


def enforce_length(
    messages: list[SentMessage], limits: Limits, estimator: TokenEstimator, fixed_tokens: int = 0
) -> tuple[list[SentMessage], int]:
    """Keep the longest suffix that fits, starting at a user prompt (or at the start).

    This measures the messages as they are; ``build_request`` re-checks the fit after
    the other invariants have repaired the suffix.
    """
    costs = [estimate_message(m, estimator) for m in messages]
    suffix_cost = [0] * (len(messages) + 1)
    for index in range(len(messages) - 1, -1, -1):
        suffix_cost[index] = suffix_cost[index + 1] + costs[index]
    cuts = _cut_points(messages)
    for cut in cuts:
        fits_cap = len(messages) - cut <= limits.history_cap
        fits_budget = limits.token_budget is None or suffix_cost[cut] + fixed_tokens <= limits.token_budget
        if fits_cap and fits_budget:
            return messages[cut:], cut
    raise NothingFitsError(
        suffix_cost[cuts[-1]] + fixed_tokens,
        limits.token_budget,
        limits.history_cap,
        len(messages) - cuts[-1],
    )


def _cut_points(messages: Sequence[SentMessage]) -> list[int]:
    """Where what is sent may start: the start, or a prompt the person wrote.

    The synthetic "continue" prompt is no cut point: sent alone, without the reply
    it refers to, it would ask the model to continue something it cannot see.
    """
    return [0] + [i for i, m in enumerate(messages) if i > 0 and m.is_prompt and m.source_ids]


# -- invariant 2: the first message is a prompt --------------------------------------------


def enforce_first_is_prompt(messages: list[SentMessage], repairs: list[str]) -> list[SentMessage]:
    while messages and messages[0].role is not Role.USER:
        messages = messages[1:]
        repairs.append("dropped an assistant message at the start")
    if messages and messages[0].tool_results:
        first = messages[0]
        messages = [_flatten_results(replace(first, tool_results=()), first.tool_results), *messages[1:]]
        repairs.append("flattened tool results in the first message")
    return messages


# -- invariant 3: results answer the calls right before them ------------------------------


def enforce_results_answer_calls(messages: list[SentMessage], repairs: list[str]) -> list[SentMessage]:
    out = list(messages)
    for index, message in enumerate(out):
        if not message.tool_results:
            continue
        before = out[index - 1] if index > 0 else None
        expected = {c.id for c in before.tool_calls} if before and before.role is Role.ASSISTANT else set()
        kept: list[ToolResult] = []
        orphans: list[ToolResult] = []
        for result in message.tool_results:
            if result.call_id in expected and all(k.call_id != result.call_id for k in kept):
                kept.append(result)
            else:
                orphans.append(result)
        if orphans:
            out[index] = _flatten_results(replace(message, tool_results=tuple(kept)), tuple(orphans))
            repairs.append(f"flattened {len(orphans)} orphan tool results")
    return out


# -- invariant 4: every call has a result ----------------------------------------------------


def enforce_calls_answered(
    messages: list[SentMessage], repairs: list[str], interrupted: Collection[str] = ()
) -> list[SentMessage]:
    """Answer every call; ``interrupted`` calls were running when Threadline stopped."""
    messages = list(messages)  # the loop rewrites the message after each call
    out: list[SentMessage] = []
    for index, message in enumerate(messages):
        out.append(message)
        if message.role is not Role.ASSISTANT or not message.tool_calls:
            continue
        nxt = messages[index + 1] if index + 1 < len(messages) else None
        answered = {r.call_id: r for r in nxt.tool_results} if nxt else {}
        missing = [c for c in message.tool_calls if c.id not in answered]
        if not missing and nxt is not None:
            continue
        results = tuple(
            answered.get(c.id) or (interrupted_result(c) if c.id in interrupted else unanswered_result(c))
            for c in message.tool_calls
        )
        if missing:
            repairs.append(f"added {len(missing)} results for tool calls nothing answered")
        if nxt is None:
            out.append(SentMessage(Role.USER, tool_results=results))
        else:
            messages[index + 1] = replace(nxt, tool_results=results)
    return out


# -- invariant 5: known tool names ------------------------------------------------------------


def enforce_known_tools(
    messages: list[SentMessage], known_tools: Collection[str] | None, repairs: list[str]
) -> tuple[list[SentMessage], bool]:
    if known_tools is None:
        return messages, False
    known = set(known_tools)
    renamed: dict[str, str] = {}
    for message in messages:
        for call in message.tool_calls:
            if call.name not in known and call.name not in renamed:
                renamed[call.name] = _repair_tool_name(call.name, known)
    if not renamed:
        return messages, False
    repairs.extend(f"tool {old!r} mapped to {new!r}" for old, new in renamed.items())
    out = [
        replace(
            m,
            tool_calls=tuple(replace(c, name=renamed.get(c.name, c.name)) for c in m.tool_calls),
            tool_results=tuple(
                replace(r, tool_name=renamed.get(r.tool_name, r.tool_name)) for r in m.tool_results
            ),
        )
        for m in messages
    ]
    return out, PLACEHOLDER_TOOL_NAME in renamed.values()


def _repair_tool_name(name: str, known: set[str]) -> str:
    """A known tool this name clearly meant (case, or a server prefix), else the placeholder."""

    def bare(n: str) -> str:
        for separator in ("/", "__", "."):
            n = n.rsplit(separator, 1)[-1]
        return n.lower()

    for candidate in (
        [k for k in known if k.lower() == name.lower()],
        [k for k in known if bare(k) == bare(name)],
    ):
        if len(candidate) == 1:
            return candidate[0]
    return PLACEHOLDER_TOOL_NAME


# -- helpers -----------------------------------------------------------------------------------


def flatten_result_text(result: ToolResult) -> str:
    label = result.tool_name or result.call_id
    state = "failed" if result.is_error else "returned"
    return f"[Earlier tool call {label} {state}]\n{result.text}".rstrip()


def _flatten_results(message: SentMessage, results: tuple[ToolResult, ...]) -> SentMessage:
    """``results`` as text at the start of ``message`` (which no longer carries them).

    The caller removes them from ``message`` first: filtering by equality here would
    also drop a kept result equal to a flattened duplicate.
    """
    texts = [flatten_result_text(r) for r in results]
    images = tuple(image for r in results for image in r.images)
    return replace(
        message,
        text="\n\n".join([*texts, message.text] if message.text else texts),
        images=images + message.images,
    )


def check_well_formed(messages: Sequence[SentMessage]) -> list[str]:
    """Every way ``messages`` breaks the provider rules; empty when well-formed.

    Used by tests and by the engine's debug assertions, so the rules are written once.
    """
    problems: list[str] = []
    if not messages:
        return ["no messages"]
    if messages[0].role is not Role.USER or messages[0].tool_results or not messages[0].is_prompt:
        problems.append("first message is not a user prompt")
    if messages[-1].role is not Role.USER:
        problems.append("last message is not from the user")
    for index, message in enumerate(messages):
        if message.is_empty:
            problems.append(f"message {index} is empty")
        if index and messages[index - 1].role is message.role:
            problems.append(f"messages {index - 1} and {index} have the same role")
        if message.role is Role.ASSISTANT:
            if message.tool_results:
                problems.append(f"assistant message {index} carries tool results")
            calls = [c.id for c in message.tool_calls]
            nxt = messages[index + 1] if index + 1 < len(messages) else None
            answered = [r.call_id for r in nxt.tool_results] if nxt else []
            if calls and sorted(calls) != sorted(answered):
                problems.append(f"tool calls of message {index} are not answered one to one")
        elif message.tool_results:
            before = messages[index - 1] if index else None
            calls = [c.id for c in before.tool_calls] if before else []
            if sorted(calls) != sorted(r.call_id for r in message.tool_results):
                problems.append(f"tool results of message {index} do not answer the calls before them")
    return problems
