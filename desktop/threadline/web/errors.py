"""The one error of the web room: its message is fit to show the user and the model as is."""

from __future__ import annotations


class WebError(Exception):
    """A search or a page could not be had; ``user_message`` says why and, where it can, what to do."""

    def __init__(self, user_message: str) -> None:
        super().__init__(user_message)
        self.user_message = user_message
