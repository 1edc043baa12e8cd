"""Fixtures for the local-model tests: a fake Hub on 127.0.0.1 holding a tiny GGUF model."""

from __future__ import annotations

from tests.support.fake_hub import hub, tiny_model  # noqa: F401  (fixtures)
