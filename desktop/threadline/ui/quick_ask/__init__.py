"""Quick ask: a small window above all others, and the global shortcut that opens it (docs/quick-ask.md)."""
