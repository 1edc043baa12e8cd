"""One chat tab: the chat view, its conversation model, the composer, Markdown, the model catalog."""
