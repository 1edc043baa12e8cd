"""Compare two branches side by side: the picker and the two-column view."""
