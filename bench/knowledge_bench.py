"""Knowledge bases: index throughput, memory while indexing, re-index of one change, query p95 at scale.

    python bench/knowledge_bench.py [--files 2000] [--kb-per-file 10] [--chunks 1000000] [--queries 200]

``throughput`` writes ``--files`` Markdown and source files of about ``--kb-per-file`` KB each
in a temporary folder and indexes them keyword-only, then again from scratch with an in-process
fake embedder (a deterministic word-hash vector, so embedding costs next to nothing and the
figure is Threadline's own work), printing files/s, MB/s and the peak of Python memory
(``tracemalloc``). It then changes one file and re-indexes, printing how many files were read.
``query`` fills an index with ``--chunks`` passages drawn from a Zipf-like vocabulary (bulk
insert, as a long indexing would leave it) and times ``--queries`` hybrid searches (keyword,
plus vectors where ``sqlite-vec`` loads), printing p50/p95/max. Figures: docs/performance.md,
"Knowledge bases". Vectors need a Python whose ``sqlite3`` can load extensions; the bench says
when it is keyword-only.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import random
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path

from threadline.knowledge import KnowledgeIndex, index_base, search, vector_support
from threadline.knowledge.driver import connect, driver_name

WORDS = [f"w{n}" for n in range(50_000)]
WEIGHTS = [1 / (rank + 1) ** 1.07 for rank in range(len(WORDS))]


class HashEmbedder:
    """Vectors from hashed words: deterministic, no server, no time of its own to speak of."""

    model = "hash-64"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            vector = [0.0] * 64
            for word in text.split()[:400]:
                vector[hashlib.blake2b(word.encode(), digest_size=2).digest()[0] % 64] += 1.0
            norm = math.sqrt(sum(x * x for x in vector)) or 1.0
            out.append([x / norm for x in vector])
        return out


def _paragraphs(rng: random.Random, chars: int) -> str:
    words = rng.choices(WORDS, WEIGHTS, k=chars // 6)
    lines = [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
    return "\n\n".join("\n".join(lines[i : i + 5]) for i in range(0, len(lines), 5))


def write_folder(root: Path, files: int, kb_per_file: int) -> int:
    rng = random.Random(7)
    total = 0
    for n in range(files):
        sub = root / f"d{n % 50:02}"
        sub.mkdir(parents=True, exist_ok=True)
        if n % 5 == 4:
            body = "\n\n\n".join(
                f"def function_{n}_{i}(x):\n    return x  # {_paragraphs(rng, 200)}"
                for i in range(kb_per_file * 2)
            )
            path = sub / f"f{n}.py"
        else:
            body = "\n\n".join(f"## Part {i}\n\n{_paragraphs(rng, 900)}" for i in range(kb_per_file))
            path = sub / f"f{n}.md"
        path.write_text(f"# Document {n}\n\n{body}\n", encoding="utf-8")
        total += path.stat().st_size
    return total


def throughput(files: int, kb_per_file: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        size = write_folder(folder, files, kb_per_file)
        print(f"folder: {files:,} files, {size / 1e6:.1f} MB of text")
        for label, embedder in (("keyword-only", None), ("with fake embedder", HashEmbedder())):
            index = KnowledgeIndex(Path(tmp) / f"{label}.sqlite3")
            tracemalloc.start()
            start = time.perf_counter()
            report = index_base(index, "bench", [folder], embedder=embedder)
            seconds = time.perf_counter() - start
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            _files, chunks, _chars = index.totals("bench")
            print(
                f"{label}: {seconds:.1f} s, {files / seconds:,.0f} files/s, {size / 1e6 / seconds:.1f} MB/s, "
                f"{chunks:,} chunks, {report.progress.embedded:,} embedded, peak Python memory "
                f"{peak / 1e6:.1f} MB{'; ' + report.embedding_notice if report.embedding_notice else ''}"
            )
            changed = next(folder.rglob("*.md"))
            changed.write_text(changed.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
            start = time.perf_counter()
            again = index_base(index, "bench", [folder], embedder=embedder)
            print(
                f"  re-index after one file changed: {time.perf_counter() - start:.2f} s, "
                f"{again.progress.files_read} file(s) read of {again.progress.files_total:,}"
            )
            index.close()


def fill(index_path: Path, chunks: int) -> None:
    """``chunks`` passages written in bulk (one file row per 100 chunks), then the keyword index."""
    rng = random.Random(11)
    db = connect(index_path)
    db.execute("PRAGMA synchronous = OFF")
    db.execute("BEGIN")
    batch = 100_000
    file_id = 0
    for start in range(0, chunks, batch):
        count = min(batch, chunks - start)
        words = rng.choices(WORDS, WEIGHTS, k=count * 60)
        rows = []
        files = []
        for i in range(count):
            n = start + i
            if n % 100 == 0:
                file_id += 1
                files.append((file_id, "bench", f"/bench/f{file_id}.md", 1, 1, "", "markdown", 0, ""))
            rows.append(
                (n + 1, file_id, n % 100, " ".join(words[i * 60 : (i + 1) * 60]) + f" tok{n}", None, "", 1, 5)
            )
        db.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", files)
        db.executemany(
            "INSERT INTO chunks (id, file_id, ordinal, text, page, heading, line_start, line_end)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        db.executemany(
            "INSERT INTO chunk_words (rowid, text, heading) VALUES (?, ?, '')", [(r[0], r[3]) for r in rows]
        )
        db.execute("COMMIT")
        db.execute("BEGIN")
        print(f"  {start + count:,} chunks written", flush=True)
    db.execute("INSERT INTO chunk_words (chunk_words) VALUES ('optimize')")
    db.execute("COMMIT")
    db.close()


def query(chunks: int, queries: int, keep: Path | None) -> None:
    reason = vector_support()
    print(f"SQLite: {driver_name()}; vectors: {'sqlite-vec loaded' if not reason else 'none, ' + reason}")
    with tempfile.TemporaryDirectory() as tmp:
        path = keep or Path(tmp) / "index.sqlite3"
        filled = path.exists()
        if not filled:
            KnowledgeIndex(path).close()  # the schema
            start = time.perf_counter()
            fill(path, chunks)
            print(f"filled {chunks:,} chunks in {time.perf_counter() - start:.1f} s")
        index = KnowledgeIndex(path)
        embedder = HashEmbedder() if not reason else None
        if embedder is not None and not filled:
            start = time.perf_counter()
            while batch := index.chunks_to_embed("bench", 5000):
                vectors = embedder.embed([text for _id, text in batch])
                index.store_vectors(
                    "bench", embedder.model, [(i, v) for (i, _), v in zip(batch, vectors, strict=True)]
                )
            print(f"embedded in {time.perf_counter() - start:.1f} s")
        if embedder is not None and hasattr(index, "read_vectors_into_memory"):
            start = time.perf_counter()
            index.read_vectors_into_memory("bench")  # else the first searches start the read
            print(f"sign bits read into memory in {time.perf_counter() - start:.2f} s")
        rng = random.Random(3)
        texts = []
        for n in range(queries):
            kind = n % 4
            if kind == 0:
                texts.append(" ".join(rng.choices(WORDS[:50], k=3)))  # common words
            elif kind == 1:
                texts.append(" ".join(rng.choices(WORDS[1000:], k=2)))  # rare words
            elif kind == 2:
                texts.append(f"tok{rng.randrange(chunks)}")  # one passage's own token
            else:
                texts.append(" ".join(rng.choices(WORDS, WEIGHTS, k=6)))  # a question's worth
        for text in texts[:10]:
            search(index, "bench", text, embedder=embedder)  # warm
        timings = []
        for text in texts:
            start = time.perf_counter()
            search(index, "bench", text, limit=8, embedder=embedder)
            timings.append((time.perf_counter() - start) * 1000)
        timings.sort()
        p95 = timings[int(0.95 * (len(timings) - 1))]
        print(
            f"{queries} searches over {chunks:,} chunks ({'hybrid' if embedder else 'keyword-only'}): "
            f"p50 {statistics.median(timings):.1f} ms, p95 {p95:.1f} ms, max {timings[-1]:.1f} ms"
            f" (load average {' / '.join(f'{x:.2f}' for x in os.getloadavg())})"
        )
        index.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("part", nargs="?", choices=["throughput", "query", "all"], default="all")
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--kb-per-file", type=int, default=10)
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="the query part's index file: filled once, then reused")
    args = parser.parse_args()
    if args.part in ("throughput", "all"):
        throughput(args.files, args.kb_per_file)
    if args.part in ("query", "all"):
        query(args.chunks, args.queries, args.keep)


if __name__ == "__main__":
    main()
