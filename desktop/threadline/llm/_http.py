"""The HTTP library the installed SDKs use: ``httpx2`` in current releases, ``httpx`` before.

Imported lazily like the SDKs; both have the same API for what we use
(``Timeout``, ``AsyncClient``, ``TimeoutException``, ``TransportError``).
"""

from __future__ import annotations

import importlib
from types import ModuleType


def httpx_module() -> ModuleType:
    try:
        return importlib.import_module("httpx2")
    except ImportError:
        return importlib.import_module("httpx")
