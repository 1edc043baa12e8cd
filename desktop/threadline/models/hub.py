"""The Hugging Face Hub, through ``huggingface_hub``: GGUF models found by text, a model's files.

The endpoint is the user's (Settings, or ``HF_ENDPOINT`` as the library itself reads it), so
a mirror works and the tests talk to a fake Hub on 127.0.0.1. Calls are blocking (the
library's own client); the engine runs them in a thread.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from threadline.models.errors import HubError

if TYPE_CHECKING:
    from huggingface_hub import HfApi

DEFAULT_ENDPOINT = "https://huggingface.co"
SEARCH_LIMIT = 30
REACH_TIMEOUT = 10.0
"""Seconds one reachability check may take to connect (an address that drops packets)."""
REACH_PAUSE = 0.5
"""Seconds before the one quick second try (a connection dropped as the network changed)."""


def default_endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


@dataclass(frozen=True)
class HubModel:
    repo: str
    downloads: int
    likes: int


@dataclass(frozen=True)
class HubFile:
    """One GGUF file of a repository: its size and the SHA-256 the Hub keeps for it (LFS oid)."""

    repo: str
    name: str
    size: int
    sha256: str | None


class Hub:
    def __init__(self, endpoint: str | None = None, token: str | None = None) -> None:
        self.endpoint = (endpoint or default_endpoint()).rstrip("/")
        self._token = token

    def _api(self) -> HfApi:
        from huggingface_hub import HfApi  # late: it costs start-up time

        return HfApi(endpoint=self.endpoint, token=self._token or False)

    def search(self, text: str, limit: int = SEARCH_LIMIT) -> list[HubModel]:
        """GGUF models whose name contains ``text``, most downloaded first."""
        self._reachable()
        try:
            found = self._api().list_models(search=text, filter="gguf", sort="downloads", limit=limit)
            return [HubModel(m.id, int(m.downloads or 0), int(m.likes or 0)) for m in found]
        except Exception as err:
            raise _hub_error(self.endpoint, err) from err

    def _reachable(self) -> None:
        """Fail fast when nothing answers at the endpoint (offline, refused, unknown name).

        The library retries a failed connection five times with growing pauses (about 23 s),
        which suits a flaky link but leaves the Models page silent when the computer is
        offline. One request without its retries, and one quick second try, tells the two
        apart; any answer at all (even an error status) means the Hub is there, and the
        search itself keeps the library's retries for 429 and 5xx (docs/local-models.md).
        """
        import httpx2  # late, as HfApi: it comes with huggingface_hub
        from huggingface_hub import get_session

        for attempt in range(2):
            try:
                get_session().head(self.endpoint, timeout=httpx2.Timeout(60.0, connect=REACH_TIMEOUT))
                return
            except (httpx2.ConnectError, httpx2.ConnectTimeout) as err:
                if attempt:
                    raise unreachable(self.endpoint, err) from err
            except httpx2.HTTPError:
                return  # it answered something: the search will say what
            time.sleep(REACH_PAUSE)

    def files(self, repo: str) -> list[HubFile]:
        """The repository's ``.gguf`` files with sizes and checksums, by name."""
        try:
            info = self._api().model_info(repo, files_metadata=True)
        except Exception as err:
            raise _hub_error(self.endpoint, err, repo) from err
        files = []
        for s in info.siblings or []:
            if not s.rfilename.lower().endswith(".gguf"):
                continue
            lfs = s.lfs
            size = lfs.size if lfs is not None else (s.size or 0)
            files.append(HubFile(repo, s.rfilename, int(size), lfs.sha256 if lfs is not None else None))
        return sorted(files, key=lambda f: f.name)

    def file(self, repo: str, name: str) -> HubFile:
        for f in self.files(repo):
            if f.name == name:
                return f
        raise HubError(f"{repo} has no file {name} (see `threadline models search` for its files).")

    def resolve_url(self, repo: str, name: str, revision: str = "main") -> str:
        """The file's download address (the Hub redirects it to its storage)."""
        return f"{self.endpoint}/{repo}/resolve/{quote(revision, safe='')}/{quote(name)}"


def _hub_error(endpoint: str, err: Exception, repo: str | None = None) -> HubError:
    status = getattr(getattr(err, "response", None), "status_code", None)
    if status in (401, 403):
        return HubError(f"The Hub refused access to {repo or 'the search'} (it may be gated or private).")
    if status == 404 and repo:
        return HubError(f"The Hub has no model {repo}.")
    if status is not None:
        return HubError(f"The Hub at {endpoint} answered {status}. Try again later.")
    return unreachable(endpoint, err)


def unreachable(endpoint: str, err: Exception) -> HubError:
    """The sentence for a Hub that did not answer, naming the cause in plain words."""
    text = str(err).lower()
    if "refused" in text:
        cause = "connection refused"
    elif "name or service" in text or "nodename" in text or "getaddrinfo" in text or "resolution" in text:
        cause = "its name was not found"
    elif "timed out" in text or "timeout" in type(err).__name__.lower():
        cause = "no answer"
    else:
        cause = str(err) or type(err).__name__
    return HubError(
        f"Could not reach the model hub at {endpoint}: {cause}. "
        "Check your connection or the hub address in Settings."
    )
