"""Compaction: fitting a conversation into the model's context window by summarising it.

Apart from ``turn_runner.py`` because it is a loop of its own, with its own rules, that
a turn only calls: before a request that nears the window (``compact_if_near_limit``),
after a request the server refused as too long (the runner retries while the refused
request keeps shrinking), and on ``/compact`` (``engine.turns.compact``). The loop
summarises the older part of the path in pieces that each fit one request, condenses
the summary so far when it leaves no room beside it (a summary of the summary), and,
when even a summary request is refused, learns a smaller limit from what was refused
and goes on from where it was. What the pieces and requests are is pure and lives in
``core/compaction.py``; here they are sent and the summary stored.

An empty reply also lives here: a llama.cpp server answers a request over its window
with an empty body, so what an empty reply means (``empty_reply_error``) decides
whether the turn compacts.
"""

from __future__ import annotations

from collections.abc import Callable

from threadline.core.compaction import (
    CHARS_PER_TOKEN,
    MIN_PIECE_CHARS,
    SUMMARY_SHARE,
    NothingToCompactError,
    condense_request,
    message_tokens,
    plan_compaction,
    request_overhead_tokens,
    smallest_workable_limit,
    summary_request,
    take_piece,
    words_for,
)
from threadline.core.config import AgentConfig, ProviderConfig
from threadline.core.gathered_context import with_context
from threadline.core.messages import Message, MessageKind
from threadline.core.request import (
    BuiltRequest,
    NothingFitsError,
    build_request,
    split_at_summary,
    tokens_for_chars,
)
from threadline.engine.errors import TurnStopped
from threadline.engine.events import ErrorAction, MessageAdded
from threadline.engine.live import LiveConversation
from threadline.engine.providers import ProviderHub
from threadline.llm import errors as llm_errors
from threadline.llm import events as llm_events
from threadline.llm.base import ChatParams, Provider
from threadline.llm.retry import RetryPolicy
from threadline.store.repository import Store

COMPACT_THRESHOLD = 0.85
"""Compact before sending when the estimate passes this share of the model's budget."""
OVERFLOW_SHRINK = 0.6
"""After a request of N tokens was refused as too long, requests aim at this share of N: the
window is somewhere below N, and halving at once would summarise in needlessly small pieces."""
WINDOW_MARGIN = 0.9
"""Share of a known window a summary request is planned to fill: the estimate is an estimate."""
MAX_COMPACTIONS_PER_TURN = 3
"""Compactions one turn may run (each only while the refused request keeps getting smaller)."""
EMPTY_REPLY_OVERFLOW_SHARE = 0.5
"""An empty reply to a request filling this share of a known context window counts as an overflow."""
EMPTY_REPLY_TINY_REQUEST = 64
"""With the window unknown, an empty reply to a request of fewer tokens than this is a broken
stream, not an overflow: no server runs with a window that small. From this size on it is taken
for a probable overflow, since local servers are often started with windows of 512 to 2,048
tokens and do not say what theirs is."""


class ProbableOverflowError(llm_errors.ContextOverflowError):
    """An empty reply while the model's context window is unknown.

    A llama.cpp server answers a streamed request over its window with HTTP 200 and an
    empty body, and its listing does not always give the window (llama-cpp-python lists
    ``owned_by: "me"`` and has no ``/props``). So this counts as an overflow — the turn
    compacts and tries once more — but, as nothing confirms it, the tab also offers to
    give the window (Settings → Models) and to send the same request again.
    """

    def after_compacting(self) -> ProbableOverflowError:
        """This error as told when the retry after compacting came back empty too."""
        again = "sent back an empty reply again, after the earlier messages were summarised,"
        return self.told_as(self.user_message.replace("sent back an empty reply", again, 1))


def naming_what_does_not_fit(overflow: llm_errors.ContextOverflowError, live: LiveConversation) -> Exception:
    """``overflow`` told when nothing older is left to summarise: the latest message alone is
    what does not fit, so the error names it (its start and its estimated size)."""
    summary, body = split_at_summary(live.conversation.path())
    latest = next((m for m in reversed(body) if m.kind is MessageKind.PROMPT), None)
    if latest is None:
        return overflow
    start = " ".join(latest.text.split())
    start = start if len(start) <= NAMED_CHARS else start[: NAMED_CHARS - 1].rstrip() + "…"
    before = ", even with everything before it summarised" if summary is not None else ""
    return overflow.told_as(
        f"Your message “{start}” (about {message_tokens(latest):,} tokens) is what does not fit"
        f"{before}. {overflow.user_message}"
    )


NAMED_CHARS = 48
"""Characters of a message an error quotes to name it."""


def window_too_small(model: str) -> TurnStopped:
    """Not even a summary request with a few lines of the conversation fits the window."""
    return TurnStopped(
        f"The context window of '{model}' is too small to summarise this conversation in: even a "
        "summary request with a few lines of it was refused. Start a new session, or pick a model "
        "(or start the local server) with a larger context window.",
        kind="compaction",
        actions=(ErrorAction.NEW_SESSION, ErrorAction.PICK_MODEL),
    )


def empty_reply_error(
    err: llm_errors.MalformedStreamError, request: BuiltRequest, provider: str, model: str, window: int | None
) -> llm_errors.ProviderError:
    """What a stream that ended before its first event means.

    A llama.cpp server answers a streamed request longer than its context window
    with HTTP 200 and an empty body, and retrying sends the same request again.
    When the request fills at least ``EMPTY_REPLY_OVERFLOW_SHARE`` of the model's
    known window, that is a context overflow. When the window is unknown, any
    request but a tiny one (``EMPTY_REPLY_TINY_REQUEST``) is a probable overflow
    (``ProbableOverflowError``). Either way the turn compacts and tries once more, as
    for an overflow the server names, when there is something older than the current
    turn to summarise. A request well within a known window, or a tiny one, gets a
    broken stream's error: Retry is what helps there.
    """
    tokens = request.estimated_tokens
    if window and tokens >= EMPTY_REPLY_OVERFLOW_SHARE * window:
        return llm_errors.ContextOverflowError(
            f"{provider} sent back an empty reply to a request of about {tokens:,} tokens, close "
            f"to the {window:,}-token context window of '{model}'. Compact the conversation, "
            "remove attached files, or continue in a new session.",
            provider=provider,
            model=model,
            detail=err.detail,
            reason="an empty reply to a request near the context window",
        )
    if not window and tokens >= EMPTY_REPLY_TINY_REQUEST:
        return ProbableOverflowError(
            f"{provider} sent back an empty reply to a request of about {tokens:,} tokens. The "
            f"likely cause: the server's context window for '{model}' is smaller than this request "
            "(a llama.cpp server answers so instead of naming the overflow), and Threadline does "
            "not know the window. Compact the conversation or shorten the message, and give the "
            "model's context window in Settings → Models so Threadline can fit requests to it.",
            provider=provider,
            model=model,
            detail=err.detail,
            reason="an empty reply (probably a request over the server's context window)",
        )
    if window:
        return llm_errors.MalformedStreamError(
            f"{provider} ended the reply without sending anything (the request was about {tokens:,} "
            f"tokens, well within the {window:,}-token context window of '{model}'). Try again; if "
            "it keeps happening, look at the server's log.",
            provider=provider,
            model=model,
            detail=err.detail,
            reason="an empty reply",
        )
    return llm_errors.MalformedStreamError(
        f"{provider} ended the reply without sending anything (the request was about {tokens:,} "
        "tokens, too short to be over a context window). Try again; if it keeps happening, look at "
        "the server's log, and give the model's context window in Settings → Models.",
        provider=provider,
        model=model,
        detail=err.detail,
        reason="an empty reply",
    )


class Compactor:
    """Summarises the older part of open conversations; one instance serves a ``TurnRunner``.

    ``budget`` is the runner's ``token_budget``: what the messages of a request may take
    with this agent and model (``None``: the window is unknown).
    """

    def __init__(
        self,
        store: Store,
        hub: ProviderHub,
        retry: RetryPolicy,
        budget: Callable[[AgentConfig, str, str], int | None],
    ) -> None:
        self._store = store
        self._hub = hub
        self._retry = retry
        self._budget = budget

    async def compact_if_near_limit(
        self,
        live: LiveConversation,
        agent: AgentConfig,
        config: ProviderConfig,
        provider: Provider,
        params: ChatParams,
    ) -> bool:
        """Compact before the first request when the estimate nears the context window.

        Only when the window is known (from the provider's model listing); otherwise
        the provider's overflow error triggers compaction. Returns whether it ran.
        """
        budget = self._budget(agent, config.name, params.model)
        if budget is None:
            return False
        try:
            last = live.last_context  # the previous request's sticky context, near enough for the estimate
            system = with_context(agent.system_prompt, last.block if last else "")
            estimate = build_request(live.conversation.path(), system=system).estimated_tokens
        except (NothingFitsError, ValueError):
            return False
        if estimate <= COMPACT_THRESHOLD * budget:
            return False
        limit, keep = self.limits(agent, config.name, params.model)
        try:
            await self.compact(live, provider, params, keep_turns=1, limit=limit, keep_tokens=keep)
        except NothingToCompactError:
            return False
        return True

    def limits(
        self, agent: AgentConfig, provider: str, model: str, refused: int | None = None
    ) -> tuple[int | None, int | None]:
        """(``limit``, ``keep_tokens``) for ``compact``: what one summary request and its
        summary may take, and what the turns kept word for word may take.

        From the known window, less a margin for the estimate; after a request of ``refused``
        tokens was refused as too long, never more than ``OVERFLOW_SHRINK`` of it (the window,
        known or not, is smaller than that request) — but no less than a summary request can
        work in, since the estimate may undercount what the server counted (a refusal of even
        that tells ``compact`` the window is too small). The kept turns get half of what a
        turn's request may hold, the rest being the summary's and the new reply's.
        """
        window = self._hub.context_window(provider, model)
        budget = self._budget(agent, provider, model)
        limit = None if window is None else int(window * WINDOW_MARGIN)
        keep = None if budget is None else budget // 2
        if refused is not None:
            shrunk = int(refused * OVERFLOW_SHRINK)
            limit = max(shrunk if limit is None else min(limit, shrunk), smallest_workable_limit())
            keep = shrunk // 2 if keep is None else min(keep, shrunk // 2)
        return limit, keep

    async def compact(
        self,
        live: LiveConversation,
        provider: Provider,
        params: ChatParams,
        *,
        keep_turns: int = 2,
        instructions: str = "",
        limit: int | None = None,
        keep_tokens: int | None = None,
    ) -> Message:
        """Summarise the older part of the path into a stored summary message.

        ``limit`` is what one summary request and the summary it asks for may take (estimated
        tokens), when known: the rest is summarised in pieces that each fit it
        (core/compaction.py). Unknown, the whole part goes in one request; a request the server
        refuses as too long teaches the limit (a share of what was refused) and the summary
        goes on in smaller pieces, from where it was. The newest turns stay word for word as
        far as ``keep_tokens`` allows (``limits`` gives both).
        """
        plan = plan_compaction(live.conversation.path(), keep_turns=keep_turns, keep_tokens=keep_tokens)
        summary = plan.previous_summary
        excerpts = plan.excerpts()
        overhead = request_overhead_tokens(instructions)
        while excerpts:
            rest: list[str] | None = None  # what is left once this request's piece is summarised
            if limit is None:
                request, rest = summary_request(summary, excerpts, instructions), []
            else:
                room = limit - overhead - tokens_for_chars(len(summary)) - limit // SUMMARY_SHARE
                if room * CHARS_PER_TOKEN >= MIN_PIECE_CHARS:
                    piece, rest = take_piece(excerpts, room * CHARS_PER_TOKEN)
                    words = words_for(limit // SUMMARY_SHARE)
                    request = summary_request(summary, piece, instructions, words=words)
                elif summary:  # a summary of the summary first, to make room beside it
                    request = condense_request(summary, words_for(limit // (2 * SUMMARY_SHARE)), instructions)
                else:
                    raise window_too_small(params.model)
            try:
                text = (await self._collect_text(provider, request, params)).strip()
            except llm_errors.ContextOverflowError:
                limit = int(request.estimated_tokens * OVERFLOW_SHRINK)
                if limit < smallest_workable_limit(instructions):
                    raise window_too_small(params.model) from None
                continue
            if not text:
                raise TurnStopped(
                    "The model returned an empty summary, so the conversation was not compacted.",
                    kind="compaction",
                )
            if rest is None and len(text) >= len(summary):
                raise window_too_small(params.model)  # condensing did not make room: it never will
            summary = text
            if rest is not None:
                excerpts = rest
        added = live.conversation.add_summary(summary, plan.summarised_through)
        await self._store.append_message(live.session_id, added)
        live.emit(MessageAdded(live.session_id, added))
        return added

    async def _collect_text(self, provider: Provider, request: BuiltRequest, params: ChatParams) -> str:
        """The summary's text; an empty reply to a long summary request is an overflow too."""
        parts: list[str] = []
        seen = False
        try:
            async for event in self._hub.stream(provider, request, params, (), self._retry):
                seen = True
                if isinstance(event, llm_events.TextDelta):
                    parts.append(event.text)
        except llm_errors.MalformedStreamError as err:
            if seen:
                raise
            window = self._hub.context_window(provider.name, params.model)
            raise empty_reply_error(err, request, provider.name, params.model, window) from err
        return "".join(parts)
