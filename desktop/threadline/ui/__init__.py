"""Everything Qt. Importing this package first tames PySide6's import hook (see ``qt_runtime``)."""

from threadline.ui.common.qt_runtime import tame_pyside_import_hook

tame_pyside_import_hook()
