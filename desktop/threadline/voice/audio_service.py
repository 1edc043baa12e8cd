"""Speech and transcription from any server with OpenAI's audio endpoints.

``/v1/audio/speech`` (OpenAI, and local Kokoro or Piper servers that copy it) turns text into
a WAV; ``/v1/audio/transcriptions`` (OpenAI, Groq, a local whisper server) turns a recording
into text. Requests follow the provider layer's conventions, as chat requests do
(``llm/openai_http``): the provider's base URL and headers, its key from the keychain, no TLS
towards a plain-http local server, no redirects.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from threadline.core.config import ProviderConfig
from threadline.llm._http import httpx_module
from threadline.llm.openai_http import base_url, request_headers, tls_context_for

SPEECH_LIMIT = 4096
"""Characters per speech request (OpenAI's limit): longer text is sent in parts."""


class AudioServiceError(RuntimeError):
    """The server could not be reached or refused; the message names it and says what to do."""


class AudioService:
    def __init__(self, config: ProviderConfig, api_key: str | None, *, timeout: float = 120.0) -> None:
        httpx = httpx_module()
        url = base_url(config).rstrip("/") + "/"
        context = tls_context_for(url)
        options: dict[str, Any] = {} if context is None else {"verify": context}
        self._provider = config.name
        self._client = httpx.AsyncClient(
            base_url=url,
            headers=request_headers(config, api_key),
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            follow_redirects=False,
            **options,
        )

    async def speech(self, text: str, *, model: str, voice: str, speed: float = 1.0) -> bytes:
        """``text`` spoken, as the bytes of a WAV file."""
        body = {"model": model, "voice": voice, "input": text, "response_format": "wav", "speed": speed}
        response = await self._post("audio/speech", "speech", json=body)
        if not response.content.startswith(b"RIFF"):
            raise AudioServiceError(
                f"{self._provider} answered the speech request with something that is not a WAV file."
            )
        return bytes(response.content)

    async def transcription(self, recording: Path, *, model: str, language: str = "") -> str:
        """The text spoken in ``recording`` (a WAV file)."""
        data = {"model": model, "response_format": "json"}
        if language:
            data["language"] = language
        with recording.open("rb") as audio:
            files = {"file": (recording.name, audio, "audio/wav")}
            response = await self._post("audio/transcriptions", "transcription", data=data, files=files)
        try:
            answer = response.json()
        except ValueError:
            return str(response.text).strip()
        if not isinstance(answer, dict) or not isinstance(answer.get("text"), str):
            raise AudioServiceError(f"{self._provider} answered the transcription without a text.")
        return str(answer["text"]).strip()

    async def _post(self, path: str, what: str, **request: Any) -> Any:
        httpx = httpx_module()
        try:
            response = await self._client.post(path, **request)
        except httpx.TimeoutException as err:
            raise AudioServiceError(
                f"{self._provider} did not answer the {what} request in time. Try again."
            ) from err
        except httpx.HTTPError as err:
            raise AudioServiceError(
                f"{self._provider} could not be reached for {what} ({type(err).__name__}). Check that "
                "it runs, or pick another provider in Settings → Voice."
            ) from err
        if response.status_code >= 400:
            raise AudioServiceError(f"{self._provider} refused the {what} request: {_reason(response)}")
        return response

    async def aclose(self) -> None:
        await self._client.aclose()


def _reason(response: Any) -> str:
    """The server's own words for a refusal where it gives them (OpenAI's ``error.message``)."""
    try:
        body = response.json()
    except (ValueError, json.JSONDecodeError):
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        if isinstance(message, str) and message:
            return f"{message} (HTTP {response.status_code})."
    if response.status_code in (401, 403):
        return (
            f"the key was not accepted (HTTP {response.status_code}). Check the provider's key in Settings."
        )
    if response.status_code == 404:
        return "it has no such endpoint or model (HTTP 404). Check the model name in Settings → Voice."
    return f"HTTP {response.status_code}."
