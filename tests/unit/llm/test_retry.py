"""Retries: transient errors before any output, with backoff or Retry-After; nothing else."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from llm_helpers import OPENAI, Api, collect, simple_request
from tests.support import sse_streams as s
from tests.support.sse_server import ReplayServer

from threadline.engine.events import RetryScheduled
from threadline.llm import errors
from threadline.llm.base import ChatParams
from threadline.llm.events import StreamEvent, StreamFinished, TextDelta
from threadline.llm.retry import RetryPolicy, stream_with_retries

FINISHED = StreamFinished("end", (), "r", "m", None)


class Script:
    """Each call of ``open`` plays the next outcome: an error, or events then maybe an error."""

    def __init__(self, *outcomes: errors.ProviderError | list[StreamEvent | errors.ProviderError]) -> None:
        self.outcomes = list(outcomes)
        self.opened = 0

    def open(self) -> AsyncIterator[StreamEvent]:
        outcome = self.outcomes[self.opened]
        self.opened += 1
        return self._play(outcome)

    async def _play(
        self, outcome: errors.ProviderError | list[StreamEvent | errors.ProviderError]
    ) -> AsyncIterator[StreamEvent]:
        if isinstance(outcome, errors.ProviderError):
            raise outcome
        for item in outcome:
            if isinstance(item, errors.ProviderError):
                raise item
            yield item


class Recorder:
    def __init__(self) -> None:
        self.sleeps: list[float] = []
        self.retries: list[tuple[int, float, str]] = []
        self.totals: list[int] = []

    async def sleep(self, delay: float) -> None:
        self.sleeps.append(delay)

    async def on_retry(self, attempt: int, delay: float, err: errors.ProviderError, most: int) -> None:
        self.retries.append((attempt, delay, err.kind))
        self.totals.append(most)


async def drain(script: Script, recorder: Recorder, policy: RetryPolicy | None = None) -> list[StreamEvent]:
    out: list[StreamEvent] = []
    async for event in stream_with_retries(
        script.open, policy, recorder.on_retry, sleep=recorder.sleep, rng=lambda: 0.5
    ):
        out.append(event)
    return out


@pytest.mark.asyncio
async def test_transient_errors_are_retried_with_exponential_backoff() -> None:
    script = Script(
        errors.ServerError("s"),
        errors.NetworkError("n"),
        errors.OverloadedError("o"),
        [TextDelta("hi"), FINISHED],
    )
    recorder = Recorder()
    events = await drain(script, recorder, RetryPolicy(max_attempts=4, base_delay=1.0, max_delay=30))
    assert events == [TextDelta("hi"), FINISHED]
    assert script.opened == 4
    assert recorder.sleeps == [0.75, 1.5, 3.0]  # equal jitter at rng=0.5: backoff * 3/4
    assert [(a, k) for a, _, k in recorder.retries] == [(2, "server"), (3, "network"), (4, "overloaded")]


@pytest.mark.asyncio
async def test_backoff_is_capped() -> None:
    policy = RetryPolicy(max_attempts=10, base_delay=1.0, max_delay=4.0)
    delays = [policy.delay(n, errors.ServerError("s"), lambda: 1.0) for n in range(1, 8)]
    assert delays == [1.0, 2.0, 4.0, 4.0, 4.0, 4.0, 4.0]
    assert all(d is not None and d >= 0.5 for d in [policy.delay(1, errors.ServerError("s"), lambda: 0.0)])


@pytest.mark.asyncio
async def test_retry_after_is_honoured() -> None:
    script = Script(errors.RateLimitError("r", retry_after=12), [FINISHED])
    recorder = Recorder()
    await drain(script, recorder)
    assert recorder.sleeps[0] >= 12
    assert recorder.sleeps[0] < 13
    assert recorder.retries[0][0] == 2


@pytest.mark.asyncio
async def test_a_retry_after_too_long_is_not_waited_for() -> None:
    script = Script(errors.RateLimitError("r", retry_after=3600), [FINISHED])
    with pytest.raises(errors.RateLimitError):
        await drain(script, Recorder())
    assert script.opened == 1


@pytest.mark.asyncio
async def test_gives_up_after_max_attempts() -> None:
    script = Script(*[errors.ServerError(f"s{n}") for n in range(3)])
    recorder = Recorder()
    with pytest.raises(errors.ServerError) as caught:
        await drain(script, recorder, RetryPolicy(max_attempts=3))
    assert str(caught.value) == "s2 (3 attempts)"  # the last error, telling how often it was tried
    assert caught.value.user_message == str(caught.value)
    assert isinstance(caught.value.__cause__, errors.ServerError)
    assert script.opened == 3
    assert len(recorder.sleeps) == 2


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "error",
    [
        errors.AuthenticationError("a"),
        errors.ModelNotFoundError("m"),
        errors.ContextOverflowError("c"),
        errors.BadRequestError("b"),
        errors.MalformedStreamError("x"),
        errors.PermissionDeniedError("p"),
    ],
)
async def test_non_transient_errors_are_not_retried(error: errors.ProviderError) -> None:
    script = Script(error, [FINISHED])
    recorder = Recorder()
    with pytest.raises(type(error)):
        await drain(script, recorder)
    assert script.opened == 1
    assert recorder.sleeps == []


@pytest.mark.asyncio
async def test_never_retried_after_output_started() -> None:
    script = Script([TextDelta("partial "), errors.NetworkError("cut")], [TextDelta("again"), FINISHED])
    recorder = Recorder()
    seen: list[StreamEvent] = []
    with pytest.raises(errors.NetworkError):
        async for event in stream_with_retries(
            script.open, RetryPolicy(), recorder.on_retry, sleep=recorder.sleep
        ):
            seen.append(event)
    assert seen == [TextDelta("partial ")]
    assert script.opened == 1
    assert recorder.sleeps == []


@pytest.mark.asyncio
async def test_on_retry_may_be_synchronous() -> None:
    calls: list[int] = []
    script = Script(errors.ServerError("s"), [FINISHED])

    async def no_sleep(_: float) -> None:
        return None

    events = [
        e
        async for e in stream_with_retries(
            script.open, RetryPolicy(), lambda a, d, e, m: calls.append(a), sleep=no_sleep
        )
    ]
    assert events == [FINISHED]
    assert calls == [2]


@pytest.mark.asyncio
async def test_retry_against_the_server_after_429_and_503(replay_server: ReplayServer) -> None:
    api: Api = OPENAI
    provider = api.make(replay_server)
    replay_server.enqueue(
        s.openai_rate_limited(2), s.openai_server_error(503), s.sse_response(s.openai_text_stream(["ok"]))
    )
    recorder = Recorder()
    stream = stream_with_retries(
        lambda: provider.stream(simple_request(), ChatParams(api.model)),
        RetryPolicy(base_delay=0.1),
        recorder.on_retry,
        sleep=recorder.sleep,
    )
    got = await collect(stream)
    await provider.aclose()
    assert got.error is None and got.text == "ok"
    assert [k for _, _, k in recorder.retries] == ["rate_limit", "overloaded"]
    assert recorder.sleeps[0] >= 2
    assert len(replay_server.stream_requests()) == 3


class Hanging:
    """Every attempt waits forever for its first event (a server that never answers)."""

    def __init__(self) -> None:
        self.opened = 0
        self.closed = 0

    def open(self) -> AsyncIterator[StreamEvent]:
        self.opened += 1
        return self._wait()

    async def _wait(self) -> AsyncIterator[StreamEvent]:
        try:
            await asyncio.Event().wait()
            yield FINISHED  # never reached
        finally:
            self.closed += 1


@pytest.mark.asyncio
async def test_the_budget_cuts_an_attempt_that_waits_too_long() -> None:
    hanging = Hanging()
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(errors.ProviderTimeoutError) as caught:
        async for _ in stream_with_retries(hanging.open, RetryPolicy(max_attempts=10, budget=0.3)):
            pass
    assert 0.25 <= loop.time() - started < 0.3 + 2.0
    assert hanging.opened == 1 and hanging.closed == 1  # the cut attempt was closed
    assert caught.value.user_message == "The provider did not answer within 1 s. Try again."


@pytest.mark.asyncio
async def test_the_budget_spent_error_comes_from_the_caller() -> None:
    def spent(seconds: float) -> errors.ProviderError:
        return errors.timeout_error("Ollama", seconds)

    with pytest.raises(errors.ProviderTimeoutError) as caught:
        async for _ in stream_with_retries(Hanging().open, RetryPolicy(budget=0.2), budget_spent=spent):
            pass
    assert caught.value.reason == "Ollama did not answer within 1 s"


@pytest.mark.asyncio
async def test_no_retry_is_scheduled_whose_wait_would_spend_the_budget() -> None:
    script = Script(errors.ServerError("s1"), errors.ServerError("s2"), [FINISHED])
    recorder = Recorder()
    with pytest.raises(errors.ServerError) as caught:
        await drain(script, recorder, RetryPolicy(base_delay=60.0, max_delay=120.0, budget=30.0))
    assert script.opened == 1
    assert recorder.retries == [] and recorder.sleeps == []
    assert str(caught.value) == "s1"  # one attempt: nothing to count


@pytest.mark.asyncio
async def test_retries_within_the_budget_go_on() -> None:
    script = Script(errors.ServerError("s1"), errors.NetworkError("n"), [TextDelta("ok"), FINISHED])
    recorder = Recorder()
    events = await drain(script, recorder, RetryPolicy(base_delay=1.0, budget=30.0))
    assert events == [TextDelta("ok"), FINISHED]
    assert [a for a, _, _ in recorder.retries] == [2, 3]


def test_a_rate_limit_reason_gives_no_advice_the_retry_would_contradict() -> None:
    err = errors.map_status_error(
        429, {"error": {"message": "slow down"}}, {"retry-after": "1"}, provider="Groq", model="m"
    )
    assert isinstance(err, errors.RateLimitError) and err.retry_after == 1
    assert err.reason == "Groq is rate limiting requests"
    line = RetryScheduled("s", 2, 2.4, err.reason, 4).describe()
    assert line == "Retrying (2 of 4) in 3 s: Groq is rate limiting requests."
    assert "try again" not in line.lower()
    # Once the app stopped retrying, the message may say what the provider asked for.
    assert err.user_message == (
        "Groq is rate limiting requests. It asked to wait 1 s; send again in a moment, or pick another model."
    )
    told = err.after_attempts(4)
    assert told.user_message.startswith("Groq is rate limiting requests (4 attempts). It asked")
    assert isinstance(told, errors.RateLimitError) and told.retry_after == 1


def test_the_retry_line_counts_down_and_works_without_a_known_total() -> None:
    event = RetryScheduled("s", 3, 8.0, "Could not connect to Ollama at http://127.0.0.1:11434/v1")
    assert event.describe(4.2) == (
        "Retrying (attempt 3) in 5 s: Could not connect to Ollama at http://127.0.0.1:11434/v1."
    )


@pytest.mark.parametrize(
    "err",
    [
        errors.network_error("Ollama", "http://127.0.0.1:11434/v1"),
        errors.timeout_error("Ollama", 60),
        errors.map_status_error(503, {}, None, provider="Ollama", model="m"),
        errors.map_status_error(500, {}, None, provider="Ollama", model="m"),
        errors.map_status_error(429, {}, None, provider="Ollama", model="m"),
    ],
)
def test_every_retryable_reason_is_a_plain_statement(err: errors.ProviderError) -> None:
    assert err.retryable
    assert "Ollama" in err.reason
    assert err.user_message.startswith(err.reason + ". ")
    for advice in ("try again", "Try again", "wait", "Check", "retry"):
        assert advice not in err.reason, err.reason


class TimingOut:
    """Every attempt fails the way a silent server's does: after waiting out its own bound."""

    def __init__(self, bound: float) -> None:
        self.bound = bound
        self.opened = 0

    def open(self) -> AsyncIterator[StreamEvent]:
        self.opened += 1
        return self._wait()

    async def _wait(self) -> AsyncIterator[StreamEvent]:
        await asyncio.sleep(self.bound)
        raise errors.timeout_error("Local", self.bound)
        yield FINISHED  # never reached


@pytest.mark.asyncio
async def test_the_total_announced_is_what_the_budget_can_hold() -> None:
    """A 0.3 s first-byte bound in a 0.6 s budget: one more attempt fits, so "2 of 2", not "2 of 4"."""
    silent = TimingOut(0.3)
    recorder = Recorder()

    async def no_sleep(_: float) -> None:
        return None

    with pytest.raises(errors.ProviderTimeoutError) as caught:
        async for _ in stream_with_retries(
            silent.open, RetryPolicy(max_attempts=4, base_delay=0.01, budget=0.6), recorder.on_retry,
            sleep=no_sleep,
        ):  # fmt: skip
            pass
    assert silent.opened == 2
    assert [a for a, _, _ in recorder.retries] == [2] and recorder.totals == [2]
    assert "(2 attempts)" in caught.value.user_message


@pytest.mark.asyncio
async def test_quick_failures_keep_the_policys_total() -> None:
    script = Script(errors.ServerError("s1"), errors.NetworkError("n"), [FINISHED])
    recorder = Recorder()
    await drain(script, recorder, RetryPolicy(max_attempts=4, base_delay=1.0, budget=30.0))
    assert recorder.totals == [4, 4]
