"""Error mapping from status, body and headers; Retry-After parsing; stop reasons."""

from __future__ import annotations

import email.utils

import pytest
from llm_helpers import assert_human

from threadline.llm import errors
from threadline.llm.events import normalise_stop_reason

OPENAI_CTX = {
    "error": {
        "message": "This model's maximum context length is 8192 tokens. "
        "However, your messages resulted in 9000 tokens.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            401,
            {"error": {"message": "bad key", "type": "invalid_request_error", "code": "invalid_api_key"}},
            errors.AuthenticationError,
        ),
        (
            403,
            {"type": "error", "error": {"type": "permission_error", "message": "no"}},
            errors.PermissionDeniedError,
        ),
        (
            404,
            {"error": {"message": "The model `x` does not exist", "code": "model_not_found"}},
            errors.ModelNotFoundError,
        ),
        (404, "404 page not found", errors.BadRequestError),
        (429, {"error": {"message": "slow down", "code": "rate_limit_exceeded"}}, errors.RateLimitError),
        (
            429,
            {"error": {"message": "quota", "type": "insufficient_quota", "code": "insufficient_quota"}},
            errors.QuotaExceededError,
        ),
        (500, {"error": {"message": "oops"}}, errors.ServerError),
        (502, "<html>Bad gateway</html>", errors.ServerError),
        (503, {"error": {"message": "overloaded"}}, errors.OverloadedError),
        (
            529,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            errors.OverloadedError,
        ),
        (400, OPENAI_CTX, errors.ContextOverflowError),
        (
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 208310 tokens > 200000 maximum",
                },
            },
            errors.ContextOverflowError,
        ),
        (
            400,
            {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                }
            },
            errors.ContextOverflowError,
        ),
        (
            400,
            {"error": {"message": "bad temperature", "type": "invalid_request_error"}},
            errors.BadRequestError,
        ),
        (422, {"detail": "unprocessable"}, errors.BadRequestError),
        (None, {"type": "overloaded_error", "message": "Overloaded"}, errors.OverloadedError),
        (None, {"message": "boom", "type": "server_error"}, errors.ServerError),
    ],
)
def test_status_mapping(status: int | None, body: object, expected: type[errors.ProviderError]) -> None:
    err = errors.map_status_error(status, body, {}, provider="Prov", model="m-1")
    assert type(err) is expected
    assert err.status_code == status
    assert_human(err, "Prov")


def test_only_transient_errors_are_retryable() -> None:
    retryable = {
        c
        for c in vars(errors).values()
        if isinstance(c, type) and issubclass(c, errors.ProviderError) and c.retryable
    }
    assert retryable == {
        errors.NetworkError,
        errors.ProviderTimeoutError,
        errors.RateLimitError,
        errors.OverloadedError,
        errors.ServerError,
    }


def test_kinds_are_distinct() -> None:
    classes = [
        c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, errors.ProviderError)
    ]
    assert len({c.kind for c in classes}) == len(classes)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "12"}, 12.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "soon"}, None),
        ({}, None),
        ({"retry-after": "-3"}, 0.0),
    ],
)
def test_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert errors.parse_retry_after(headers) == expected


def test_retry_after_as_http_date() -> None:
    now = 1_700_000_000.0
    header = email.utils.formatdate(now + 30, usegmt=True)
    assert errors.parse_retry_after({"retry-after": header}, now=now) == pytest.approx(30, abs=1)


def test_rate_limit_message_says_when() -> None:
    err = errors.map_status_error(429, {}, {"retry-after": "12"}, provider="OpenAI", model="m")
    assert isinstance(err, errors.RateLimitError)
    assert err.retry_after == 12
    assert "12 s" in err.user_message


def test_long_provider_detail_is_cut() -> None:
    err = errors.map_status_error(400, {"error": {"message": "x" * 5000}}, {}, provider="P", model="m")
    assert len(err.user_message) < 400
    assert len(err.detail) <= 300


@pytest.mark.parametrize(
    ("raw", "calls", "expected"),
    [
        ("stop", False, "end"),
        ("end_turn", False, "end"),
        ("stop_sequence", False, "end"),
        ("tool_calls", True, "tool_calls"),
        ("tool_use", True, "tool_calls"),
        ("stop", True, "tool_calls"),
        ("length", False, "max_tokens"),
        ("max_tokens", True, "max_tokens"),
        ("content_filter", False, "refused"),
        ("refusal", False, "refused"),
        ("something_new", False, "something_new"),
        (None, False, "end"),
    ],
)
def test_stop_reasons(raw: str | None, calls: bool, expected: str) -> None:
    assert normalise_stop_reason(raw, has_tool_calls=calls) == expected
