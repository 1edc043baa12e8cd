"""A reply's sources, opened, pinned and excluded from the chat tab (docs/knowledge.md, "In the chat")."""
