"""The chat view: the painted conversation, its rows, Markdown, formulas, wide tables and message keys."""
