"""Hybrid retrieval: keyword (BM25) and vector ranks fused by reciprocal rank.

Reciprocal rank fusion adds ``1 / (K + rank)`` from each list a chunk appears in. It
needs no calibration between BM25 scores and vector distances (which are on unrelated
scales) and a chunk found by both rises above one found by either alone. With no
embedding model, with no ``sqlite-vec``, or with the embedding server down, the
keyword list alone is the answer and ``notice`` says so (docs/knowledge.md).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache

from threadline.knowledge.index import KnowledgeIndex, StoredChunk
from threadline.knowledge.vectors import Embedder, EmbeddingError, vector_support

RRF_K = 60
CANDIDATES = 50
"""Chunks taken from the keyword list before fusing."""
VECTOR_CANDIDATES = 24
"""Chunks taken from the vector list: each one more costs the vector scan over every chunk
(docs/knowledge.md, "Vector search at scale")."""


@dataclass(frozen=True, slots=True)
class Hit:
    chunk: StoredChunk
    score: float


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: list[Hit]
    notice: str = ""
    """Why the search was keyword-only, when it was; "" when both lists were used."""


def search(
    index: KnowledgeIndex, base: str, query: str, *, limit: int = 8, embedder: Embedder | None = None
) -> SearchResult:
    """The base's best chunks for ``query``. With vectors, the keyword list is ranked on a helper
    thread while the query is embedded and its vector list found here: the two halves run side by
    side (each on its own connection), so a query costs the slower of them, not their sum."""
    vector: list[int] = []
    notice = ""
    if embedder is None:
        notice = "No embedding model for this knowledge base: keyword search only."
    elif not index.has_vectors:
        notice = f"Keyword search only: {vector_support()}."
    elif index.vector_model(base) is None:
        notice = "No vectors indexed yet: keyword search only."
    if notice or embedder is None:
        keyword = index.keyword_ids(base, query, CANDIDATES)
    else:
        keyword_list = _pool().submit(index.keyword_ids, base, query, CANDIDATES)
        try:
            vector = index.vector_ids(base, embedder.embed([query])[0], VECTOR_CANDIDATES)
        except EmbeddingError as err:
            notice = f"{err} Keyword search only."
        keyword = keyword_list.result()
    fused = fuse([keyword, vector])[:limit]
    chunks = index.chunks([chunk_id for chunk_id, _score in fused])
    return SearchResult([Hit(chunks[i], score) for i, score in fused if i in chunks], notice)


@cache
def _pool() -> ThreadPoolExecutor:
    """Threads for the keyword half of hybrid searches (made on the first one; daemon-like, idle after)."""
    return ThreadPoolExecutor(max_workers=2, thread_name_prefix="knowledge-keywords")


def fuse(rankings: list[list[int]]) -> list[tuple[int, float]]:
    """Ids by reciprocal rank fusion of ``rankings`` (best first), with their fused scores."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
