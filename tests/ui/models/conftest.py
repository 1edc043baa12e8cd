"""The fake Hub (``tests/support/fake_hub.py``) for the Models page's tests."""

from __future__ import annotations

from tests.support.fake_hub import hub, tiny_model  # noqa: F401  (fixtures)
