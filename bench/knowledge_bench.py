"""Knowledge bases: index throughput, memory while indexing, re-index of one change, query p95 at scale.

    python bench/knowledge_bench.py [--files 2000] [--kb-per-file 10 | --total-mb 1000]
        [--chunks 1000000] [--queries 200]

``throughput`` writes ``--files`` Markdown and source files in a temporary folder (``TMPDIR``
chooses where): ``--kb-per-file`` sections each (about 6 KB a file on average at 10), or, with
``--total-mb``, sections added to each file until the folder holds about that many MB of text.
It indexes them keyword-only, then again from scratch with an in-process fake embedder (a
deterministic word-hash vector, so embedding costs next to nothing and the figure is
Threadline's own work), printing files/s, MB/s, chunks, the peak of Python memory
(``tracemalloc``, which also slows the run somewhat) and the process's peak resident memory
during that run (Linux: ``VmHWM``, reset before each run; elsewhere the process's peak so far).
It then changes one file and re-indexes, printing how many files were read.
``query`` fills an index with ``--chunks`` passages drawn from a Zipf-like vocabulary (bulk
insert, as a long indexing would leave it) and times ``--queries`` hybrid searches (keyword,
plus vectors where ``sqlite-vec`` loads), printing p50/p95/max. Figures: docs/performance.md,
"Knowledge bases". Vectors need a Python whose ``sqlite3`` can load extensions; the bench says
when it is keyword-only.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import math
import os
import random
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path

from threadline.knowledge import KnowledgeIndex, index_base, search, vector_support
from threadline.knowledge.driver import connect, driver_name

WORDS = [f"w{n}" for n in range(50_000)]
WEIGHTS = [1 / (rank + 1) ** 1.07 for rank in range(len(WORDS))]
CUMULATIVE = list(itertools.accumulate(WEIGHTS))  # choices() would add up WEIGHTS at every call


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
    words = rng.choices(WORDS, cum_weights=CUMULATIVE, k=chars // 6)
    lines = [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
    return "\n\n".join("\n".join(lines[i : i + 5]) for i in range(0, len(lines), 5))


def _sections(rng: random.Random, n: int, code: bool, count: int, size: int) -> str:
    """``count`` sections, or as many as reach ``size`` characters when ``size`` is given."""
    parts: list[str] = []
    length = 0
    while (len(parts) < count) if not size else (length < size):
        i = len(parts)
        if code:
            parts.append(f"def function_{n}_{i}(x):\n    return x  # {_paragraphs(rng, 200)}")
        else:
            parts.append(f"## Part {i}\n\n{_paragraphs(rng, 900)}")
        length += len(parts[-1]) + 3
    return ("\n\n\n" if code else "\n\n").join(parts)


def write_folder(root: Path, files: int, kb_per_file: int, total_mb: float = 0.0) -> int:
    """The folder; with ``total_mb`` each file is filled to its share of that size."""
    rng = random.Random(7)
    total = 0
    share = int(total_mb * 1e6 / files) if total_mb else 0
    for n in range(files):
        sub = root / f"d{n % 50:02}"
        sub.mkdir(parents=True, exist_ok=True)
        code = n % 5 == 4
        body = _sections(rng, n, code, kb_per_file * 2 if code else kb_per_file, share)
        path = sub / (f"f{n}.py" if code else f"f{n}.md")
        path.write_text(f"# Document {n}\n\n{body}\n", encoding="utf-8")
        total += path.stat().st_size
    return total


def _reset_peak_rss() -> bool:
    """Start the process's peak resident memory afresh (Linux 4.0+); False where it cannot."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _peak_rss_mb() -> float:
    """The process's peak resident memory: ``VmHWM`` on Linux, else ``ru_maxrss``."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1e6 if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB elsewhere


def throughput(files: int, kb_per_file: int, total_mb: float = 0.0) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        start = time.perf_counter()
        size = write_folder(folder, files, kb_per_file, total_mb)
        took = time.perf_counter() - start
        print(f"folder: {files:,} files, {size / 1e6:.1f} MB of text (written in {took:.0f} s)", flush=True)
        for label, embedder in (("keyword-only", None), ("with fake embedder", HashEmbedder())):
            index = KnowledgeIndex(Path(tmp) / f"{label}.sqlite3")
            fresh = _reset_peak_rss()
            tracemalloc.start()
            start = time.perf_counter()
            report = index_base(index, "bench", [folder], embedder=embedder)
            seconds = time.perf_counter() - start
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            rss = _peak_rss_mb()
            _files, chunks, _chars = index.totals("bench")
            print(
                f"{label}: {seconds:.1f} s, {files / seconds:,.0f} files/s, {size / 1e6 / seconds:.1f} MB/s, "
                f"{chunks:,} chunks, {report.progress.embedded:,} embedded, peak Python memory "
                f"{peak / 1e6:.1f} MB, peak resident memory {rss:.0f} MB"
                f"{' (this run)' if fresh else ' (process so far)'}"
                f"{'; ' + report.embedding_notice if report.embedding_notice else ''}",
                flush=True,
            )
            changed = next(folder.rglob("*.md"))
            changed.write_text(changed.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
            start = time.perf_counter()
            again = index_base(index, "bench", [folder], embedder=embedder)
            print(
                f"  re-index after one file changed: {time.perf_counter() - start:.2f} s, "
                f"{again.progress.files_read} file(s) read of {again.progress.files_total:,}",
                flush=True,
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
    parser.add_argument("--kb-per-file", type=int, default=10, help="sections a file (about 6 KB at 10)")
    parser.add_argument("--total-mb", type=float, default=0.0, help="fill the files to about this much text")
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="the query part's index file: filled once, then reused")
    args = parser.parse_args()
    if args.part in ("throughput", "all"):
        throughput(args.files, args.kb_per_file, args.total_mb)
    if args.part in ("query", "all"):
        query(args.chunks, args.queries, args.keep)


if __name__ == "__main__":
    main()
