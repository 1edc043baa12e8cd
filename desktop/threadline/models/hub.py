"""The Hugging Face Hub, through ``huggingface_hub``: GGUF models found by text, a model's files.

The endpoint is the user's (Settings, or ``HF_ENDPOINT`` as the library itself reads it), so
a mirror works and the tests talk to a fake Hub on 127.0.0.1. Calls are blocking (the
library's own client); the engine runs them in a thread.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from threadline.models.errors import HubError

if TYPE_CHECKING:
    from huggingface_hub import HfApi

DEFAULT_ENDPOINT = "https://huggingface.co"
SEARCH_LIMIT = 30


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
        try:
            found = self._api().list_models(search=text, filter="gguf", sort="downloads", limit=limit)
            return [HubModel(m.id, int(m.downloads or 0), int(m.likes or 0)) for m in found]
        except Exception as err:
            raise _hub_error(self.endpoint, err) from err

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
    return HubError(f"Could not reach the Hub at {endpoint}: {err}. Check the connection and try again.")
