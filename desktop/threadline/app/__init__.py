"""Start-up: the window's application and event loop (``start``), logging (``logging_setup``),
the installed resources (``resources``) and the self-test of an install (``self_test``).

Above the window (``ui``) and beside the command line (``cli``), which it does not import;
``threadline.__main__`` chooses between them. Importing this package costs nothing: each
start imports only the modules it needs, and ``start`` imports PySide6 (docs/design.md,
"Layers").
"""
