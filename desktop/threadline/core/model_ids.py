"""Model ids as vendors write them: one rule for what counts as "the same model"."""

from __future__ import annotations

import re

_SNAPSHOT_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$")


def base_model_id(model: str) -> str:
    """``gpt-4o-2024-08-06`` / ``claude-sonnet-4-20250514`` / ``gpt-4o-latest`` → the model they pin.

    Only a dated snapshot or ``-latest`` suffix is dropped, never another part of the
    name: ``o3-pro`` is not ``o3``, so published prices and windows apply only to the
    model they were published for.
    """
    return _SNAPSHOT_SUFFIX.sub("", model)
