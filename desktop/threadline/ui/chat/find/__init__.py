"""Find in a chat (Ctrl+F): the bar, its keys, the order of matches and the text as shown."""
