"""The sidebar: the session list model, search results, and the sidebar widget."""
