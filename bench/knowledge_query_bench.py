"""Knowledge bases: hybrid query time by query kind, at any embedding size, and recall against exact rankings.

    python bench/knowledge_query_bench.py --keep FILE [--chunks 1000000] [--dims 64] [--queries 200]
        [--runs 3] [--recall]

Fills (once, with ``--keep``) an index of ``--chunks`` passages as ``knowledge_bench.py query`` does
(the same Zipf vocabulary and the same queries), embedded with ``--dims`` dimensions: 64 is that
bench's word-hash vector (non-negative, so its sign bits say which slots a text uses); any other
size is a *spread* embedder, where each word is a fixed random Gaussian direction weighted by its
rarity and a text is the normalised sum of its words — centred vectors whose neighbours share rare
words, as a real model's do (nomic-embed-text: 768). It prints the time to read the base's sign
bits into memory, then ``--runs`` timed passes over the queries (p50/p95/max overall and per kind,
with the load average), then with ``--recall`` how many of the exact top results the fast path
returns: the vector half against the cosine distance to every vector, the hybrid against the
fusion of that exact vector list and full BM25 over every matching chunk (no word left out).
Figures: docs/performance.md, "Knowledge bases". Run the same file against another checkout with
``PYTHONPATH=OTHER/desktop`` (it uses only what an older index offers when the newer calls are
missing).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from knowledge_bench import WEIGHTS, WORDS, HashEmbedder, fill

from threadline.knowledge import KnowledgeIndex, fuse, search
from threadline.knowledge.driver import driver_name
from threadline.knowledge.retrieval import CANDIDATES, VECTOR_CANDIDATES

KINDS = ("common words", "rare words", "own token", "six Zipf words")
RANK = {word: rank for rank, word in enumerate(WORDS)}


class SpreadEmbedder:
    """Each word a fixed random direction weighted by its rarity; a text the normalised sum."""

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self.model = f"spread-{dimensions}"
        self._vectors: dict[str, np.ndarray] = {}

    def _word(self, word: str) -> np.ndarray:
        vector = self._vectors.get(word)
        if vector is None:
            seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            weight = math.log(2 + RANK.get(word, len(WORDS)))
            vector = np.random.default_rng(seed).standard_normal(self.dimensions).astype(np.float32) * weight
            if word in RANK:
                self._vectors[word] = vector
        return vector

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            total = np.sum([self._word(word) for word in text.split()[:400]], axis=0)
            out.append((total / (np.linalg.norm(total) or 1.0)).tolist())
        return out


def queries(count: int, chunks: int) -> list[str]:
    """The same queries as ``knowledge_bench.py query``: four kinds in turn."""
    rng = random.Random(3)
    texts = []
    for n in range(count):
        kind = n % 4
        if kind == 0:
            texts.append(" ".join(rng.choices(WORDS[:50], k=3)))
        elif kind == 1:
            texts.append(" ".join(rng.choices(WORDS[1000:], k=2)))
        elif kind == 2:
            texts.append(f"tok{rng.randrange(chunks)}")
        else:
            texts.append(" ".join(rng.choices(WORDS, WEIGHTS, k=6)))
    return texts


def load() -> str:
    return "load average " + " / ".join(f"{x:.2f}" for x in os.getloadavg())


def figures(timings: list[float]) -> str:
    ordered = sorted(timings)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return f"p50 {statistics.median(ordered):5.1f} ms, p95 {p95:5.1f} ms, max {ordered[-1]:6.1f} ms"


def exact_vectors(index: KnowledgeIndex, vectors: np.ndarray, k: int) -> list[list[int]]:
    """Each query's ``k`` nearest chunks by cosine over every stored vector (one pass, in blocks)."""
    db = index._db
    best_ids = np.zeros((len(vectors), 0), dtype=np.int64)
    best = np.zeros((len(vectors), 0), dtype=np.float32)
    last = 0
    while rows := db.execute(
        "SELECT id, embedding FROM chunk_vectors WHERE id > ? ORDER BY id LIMIT 50000", (last,)
    ).fetchall():
        last = rows[-1][0]
        ids = np.array([row[0] for row in rows], dtype=np.int64)
        block = np.frombuffer(b"".join(row[1] for row in rows), dtype="<f4").reshape(len(rows), -1)
        block = block / np.maximum(np.linalg.norm(block, axis=1, keepdims=True), 1e-12)
        scores = vectors @ block.T  # (queries, rows)
        merged = np.concatenate((best, scores), axis=1)
        merged_ids = np.concatenate((best_ids, np.broadcast_to(ids, scores.shape)), axis=1)
        keep = np.argsort(-merged, axis=1, kind="stable")[:, :k]
        best = np.take_along_axis(merged, keep, axis=1)
        best_ids = np.take_along_axis(merged_ids, keep, axis=1)
    return [[int(i) for i in row] for row in best_ids]


def exact_keywords(index: KnowledgeIndex, text: str, k: int) -> list[int]:
    """Full BM25 over every chunk matching any word of ``text`` (no word left out)."""
    from threadline.knowledge.index import _any_of, query_words

    words = query_words(text)
    rows = index._db.execute(
        "SELECT rowid FROM chunk_words WHERE chunk_words MATCH ? ORDER BY rank LIMIT ?", (_any_of(words), k)
    ).fetchall()
    return [int(row[0]) for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", type=Path, required=True, help="the index file: filled once, then reused")
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--dims", type=int, default=64)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--recall", action="store_true")
    args = parser.parse_args()
    embedder = HashEmbedder() if args.dims == 64 else SpreadEmbedder(args.dims)
    print(f"SQLite: {driver_name()}; {args.chunks:,} chunks, {args.dims} dimensions ({embedder.model})")
    if not args.keep.exists():
        KnowledgeIndex(args.keep).close()
        start = time.perf_counter()
        fill(args.keep, args.chunks)
        index = KnowledgeIndex(args.keep)
        while batch := index.chunks_to_embed("bench", 5000):
            vectors = embedder.embed([text for _id, text in batch])
            index.store_vectors(
                "bench", embedder.model, [(i, v) for (i, _), v in zip(batch, vectors, strict=True)]
            )
        index.close()
        print(f"filled and embedded in {time.perf_counter() - start:.1f} s")
    index = KnowledgeIndex(args.keep)
    texts = queries(args.queries, args.chunks)
    read = getattr(index, "read_vectors_into_memory", None)
    if read is not None:
        start = time.perf_counter()
        read("bench")
        print(f"sign bits read into memory in {time.perf_counter() - start:.2f} s ({load()})")
    for text in texts[:10]:
        search(index, "bench", text, embedder=embedder)  # warm
    for run in range(args.runs):
        by_kind: dict[str, list[float]] = {kind: [] for kind in KINDS}
        for n, text in enumerate(texts):
            start = time.perf_counter()
            search(index, "bench", text, limit=8, embedder=embedder)
            by_kind[KINDS[n % 4]].append((time.perf_counter() - start) * 1000)
        every = [t for kind in KINDS for t in by_kind[kind]]
        print(f"run {run + 1}: {len(texts)} hybrid searches: {figures(every)} ({load()})")
        for kind in KINDS:
            print(f"    {kind:15} {figures(by_kind[kind])}")
    if args.recall:
        query_vectors = np.array(embedder.embed(texts), dtype=np.float32)
        query_vectors /= np.maximum(np.linalg.norm(query_vectors, axis=1, keepdims=True), 1e-12)
        start = time.perf_counter()
        saved = args.keep.with_name(args.keep.name + f".exact-{len(texts)}.json")
        if saved.exists():  # the exact lists of an earlier run on this very index
            exact_near, exact_words_of = json.loads(saved.read_text())
        else:
            exact_near = exact_vectors(index, query_vectors, VECTOR_CANDIDATES)
            exact_words_of = [exact_keywords(index, text, CANDIDATES) for text in texts]
            saved.write_text(json.dumps([exact_near, exact_words_of]))
        vector_recall, hybrid_recall, keyword_recall = [], [], []
        for n, text in enumerate(texts):
            vector = embedder.embed([text])[0]
            found = index.vector_ids("bench", vector, VECTOR_CANDIDATES)
            vector_recall.append(len(set(found[:8]) & set(exact_near[n][:8])) / 8)
            exact_words = exact_words_of[n]
            keyword_recall.append(
                len(set(index.keyword_ids("bench", text, CANDIDATES)[:8]) & set(exact_words[:8]))
                / max(1, min(8, len(exact_words)))
            )
            exact = [i for i, _ in fuse([exact_words, exact_near[n]])[:8]]
            hits = [hit.chunk.id for hit in search(index, "bench", text, limit=8, embedder=embedder).hits]
            hybrid_recall.append(len(set(hits) & set(exact)) / max(1, len(exact)))
        print(f"recall@8 against exact rankings ({time.perf_counter() - start:.0f} s to compute them):")
        for label, values in (
            ("vector half", vector_recall),
            ("keyword half", keyword_recall),
            ("hybrid", hybrid_recall),
        ):
            per_kind = ", ".join(
                f"{kind} {statistics.mean(values[i::4]):.3f}" for i, kind in enumerate(KINDS)
            )
            print(f"    {label:12} {statistics.mean(values):.3f} ({per_kind})")
    index.close()


if __name__ == "__main__":
    main()
