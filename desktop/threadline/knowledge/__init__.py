"""Knowledge bases: the user's folders indexed locally, searched by keyword and vector (no Qt).

Reading files (``reading``), cutting them along their structure (``chunking``), the
local index file (``index``), bringing it up to date (``indexer``), hybrid search
(``retrieval``), embeddings from an OpenAI-compatible server (``embedding``). Why it
is built this way: docs/knowledge.md.
"""

from threadline.knowledge.chunking import Chunk, chunk_text
from threadline.knowledge.index import KnowledgeIndex, StoredChunk
from threadline.knowledge.indexer import IndexReport, Progress, index_base
from threadline.knowledge.reading import FileProblem
from threadline.knowledge.retrieval import Hit, SearchResult, fuse, search
from threadline.knowledge.vectors import Embedder, EmbeddingError, vector_support

__all__ = [
    "Chunk",
    "Embedder",
    "EmbeddingError",
    "FileProblem",
    "Hit",
    "IndexReport",
    "KnowledgeIndex",
    "Progress",
    "SearchResult",
    "StoredChunk",
    "chunk_text",
    "fuse",
    "index_base",
    "search",
    "vector_support",
]
