"""The Models page: find GGUF models on the Hub, download them, manage the models folder.

Opened from the window's menu (Tools → Models…); it talks to ``engine.models`` only
(docs/local-models.md, "The Models page"). One widget per file: the search results, a
model's quantisations, one download's row, the downloaded list.
"""
