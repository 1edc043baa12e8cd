"""Global shortcuts: one module per platform, behind the small protocol in ``base.py`` (docs/quick-ask.md)."""
