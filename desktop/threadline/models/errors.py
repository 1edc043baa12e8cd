"""The models layer's expected failures, each with the sentence the user reads."""

from __future__ import annotations


class ModelError(Exception):
    """Base: ``user_message`` is shown as is (the message bridge, the command line)."""

    def __init__(self, user_message: str) -> None:
        super().__init__(user_message)
        self.user_message = user_message


class NotGgufError(ModelError):
    """The file is not a GGUF model (wrong magic, unknown version, unreadable header)."""


class HubError(ModelError):
    """The Hub could not be reached, or answered with an error."""


class DownloadError(ModelError):
    """A download failed for good (checksum mismatch, not enough space, refused by the server)."""
