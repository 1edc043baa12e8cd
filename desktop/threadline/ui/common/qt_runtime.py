"""Process-wide Qt runtime settings that the window's budgets depend on (docs/design.md §5).

PySide6 replaces ``__import__`` to support its opt-in ``from __feature__ import
snake_case`` syntax. As a side effect, every module imported after PySide6 is
passed to ``shibokensupport.feature._mod_uses_pyside``, which reads the module's
whole source with ``inspect.getsource`` to look for the word "PySide6", and leaves
that source in ``linecache``. For the engine (SQLAlchemy, SQLModel, pydantic,
the SDKs, imported after the first paint) that costs CPU time and memory that is never
given back (docs/performance.md; the same tax is reported in napari/napari#8584).

Threadline never selects a ``__feature__``, so which modules "use PySide" does not
matter: the answer only decides whether a module takes part in feature switching.
We answer from the module name instead of its source. If a PySide6 release changes
these private names, nothing is patched and everything still works, only slower.
"""

from __future__ import annotations

import logging
import sys
from types import ModuleType

log = logging.getLogger("threadline.ui.common.qt_runtime")

_QT_PREFIXES = ("PySide6", "shiboken6", "threadline.ui", "threadline.app", "qasync", "pytestqt", "__main__")


def _uses_pyside(module: ModuleType) -> bool:
    name = getattr(module, "__name__", "")
    return isinstance(name, str) and name.startswith(_QT_PREFIXES)


def tame_pyside_import_hook() -> bool:
    """Replace the source-reading check of PySide6's import hook; True if it was patched."""
    import PySide6.QtCore  # noqa: F401  (installs the hook and its support module)

    feature = sys.modules.get("shibokensupport.feature")
    if feature is None or not callable(getattr(feature, "_mod_uses_pyside", None)):
        log.info("PySide6's feature hook not found; imports keep their source check")
        return False
    setattr(feature, "_mod_uses_pyside", _uses_pyside)  # noqa: B010 (a private name, checked above)
    return True
