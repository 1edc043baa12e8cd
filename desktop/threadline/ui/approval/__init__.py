"""The inline approval bar a chat tab embeds, and one row per tool call."""
