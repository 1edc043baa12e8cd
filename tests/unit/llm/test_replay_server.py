"""The replay server itself: byte-exact chunks, recording, faults, never hanging."""

from __future__ import annotations

import threading
import time

import httpx2
import pytest
from tests.support import sse_streams as s
from tests.support.sse_server import ReplayServer


def test_chunks_arrive_byte_exact_and_one_by_one(replay_server: ReplayServer) -> None:
    chunks = s.anthropic_text_stream(["Hé", "llo"])
    replay_server.enqueue(s.sse_response(chunks, chunk_delay=0.05))
    arrivals: list[tuple[float, bytes]] = []
    with httpx2.stream("POST", replay_server.base_url + "/v1/messages", json={"a": 1}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["transfer-encoding"] == "chunked"
        for piece in response.iter_raw():
            arrivals.append((time.monotonic(), piece))
    assert b"".join(p for _, p in arrivals) == b"".join(chunks)
    assert len(arrivals) >= len(chunks) // 2  # not buffered into one write
    assert arrivals[-1][0] - arrivals[0][0] >= 0.05 * (len(chunks) - 2)


def test_requests_are_recorded(replay_server: ReplayServer) -> None:
    replay_server.enqueue(s.sse_response(s.openai_text_stream(["x"])))
    httpx2.post(
        replay_server.openai_base_url + "/chat/completions",
        json={"model": "m", "messages": []},
        headers={"Authorization": "Bearer k"},
    )
    (request,) = replay_server.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.body == {"model": "m", "messages": []}
    assert request.headers["authorization"] == "Bearer k"
    assert not request.is_anthropic


def test_an_empty_queue_answers_500_with_a_clear_body(replay_server: ReplayServer) -> None:
    response = httpx2.post(replay_server.base_url + "/v1/messages", json={})
    assert response.status_code == 500
    assert "no scripted response left" in response.json()["error"]["message"]


def test_unknown_paths_are_404(replay_server: ReplayServer) -> None:
    assert httpx2.post(replay_server.base_url + "/v2/other", json={}).status_code == 404
    assert httpx2.get(replay_server.base_url + "/nothing").status_code == 404


def test_responder_and_default(replay_server: ReplayServer) -> None:
    replay_server.responder = lambda r: s.json_response(200, {"echo": r.body}) if r.body.get("echo") else None
    replay_server.default = s.json_response(418, {"teapot": True})
    url = replay_server.base_url + "/v1/messages"
    assert httpx2.post(url, json={"echo": 1}).json() == {"echo": {"echo": 1}}
    assert httpx2.post(url, json={"echo": 0}).status_code == 418
    replay_server.enqueue(s.json_response(201, {}))
    assert httpx2.post(url, json={"echo": 1}).status_code == 201  # the queue comes first


def test_models_in_each_api_shape(replay_server: ReplayServer) -> None:
    replay_server.models = ["a", "b"]
    openai = httpx2.get(replay_server.openai_base_url + "/models").json()
    assert [m["id"] for m in openai["data"]] == ["a", "b"]
    assert openai["object"] == "list"
    anthropic = httpx2.get(
        replay_server.base_url + "/v1/models", headers={"anthropic-version": "2023-06-01"}
    ).json()
    assert [m["id"] for m in anthropic["data"]] == ["a", "b"]
    assert anthropic["has_more"] is False


def test_disconnect_truncates_the_body(replay_server: ReplayServer) -> None:
    replay_server.enqueue(s.sse_response(s.openai_text_stream(["a", "b", "c"]), disconnect_after=2))
    with pytest.raises(httpx2.RemoteProtocolError):
        httpx2.post(replay_server.openai_base_url + "/chat/completions", json={})


def test_stop_releases_a_stalled_stream() -> None:
    server = ReplayServer().start()
    server.enqueue(s.sse_response(s.openai_text_stream(["a", "b"]), stall_after=1))
    failures: list[Exception] = []

    def client() -> None:
        try:
            httpx2.post(server.openai_base_url + "/chat/completions", json={}, timeout=10)
        except Exception as err:
            failures.append(err)

    thread = threading.Thread(target=client)
    thread.start()
    assert server.wait_for_requests(1)
    time.sleep(0.1)
    started = time.monotonic()
    server.stop()
    thread.join(5)
    assert not thread.is_alive()
    assert time.monotonic() - started < 2
    assert failures  # the client saw a truncated body, not a hang


def test_many_streams_at_once(replay_server: ReplayServer) -> None:
    for _ in range(16):
        replay_server.enqueue(s.sse_response(s.openai_text_stream(["x"] * 10), chunk_delay=0.02))
    bodies: list[bytes] = []

    def client() -> None:
        bodies.append(
            httpx2.post(replay_server.openai_base_url + "/chat/completions", json={}, timeout=10).content
        )

    threads = [threading.Thread(target=client) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(bodies) == 16
    # Served side by side, not one after another (counted by the server, not timed: a busy
    # machine stretches the clock, and each stream lasts over 0.2 s, so they overlap).
    assert replay_server.max_concurrent_streams >= 8
