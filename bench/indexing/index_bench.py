"""Indexing speed: Tansuo's document builder and tantivy index against SQLite FTS5,
on the same pages, in turns.

Both sides pay for segmentation (the same segmenter), then write and commit in
batches of ``indexer_batch_size``, as the indexer service does. Tansuo's time also
includes waiting for tantivy's background segment merges when the index is closed,
because FTS5 does its merging inside the inserts.

Each round also times the floors issue 12's targets rest on: rjieba alone cutting the
same texts (title, headings, body) in one call each, nothing else, which
``build_document`` is measured against; and tantivy alone writing the same documents,
built and converted beforehand, untimed. Together they are the least CPU a document
can cost with this segmenter and this index, whatever Tansuo's own code does.
"""

from __future__ import annotations

import shutil
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import rjieba
import tantivy

from bench.indexing.fts5_baseline import Fts5Index, segmented

# The adapter's own schema and conversion, so that the floor writes what the index writes.
from services.common.adapters.tantivy.search_index import (
    _WRITER_HEAP_BYTES,
    _WRITER_THREADS,
    _schema,
    _to_tantivy,
)
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from services.common.domain.messages import PageEvent
from services.indexer.document_builder import build_document


@dataclass(frozen=True)
class IndexRun:
    docs: int
    build_s: float  # building documents from page events: segmentation, mostly
    write_s: float  # upserts / inserts
    commit_s: float
    close_s: float  # closing the index (tantivy: waiting for merges)
    cpu_s: float = 0.0  # CPU of the whole process over the run (tantivy's threads included)

    @property
    def total_s(self) -> float:
        return self.build_s + self.write_s + self.commit_s + self.close_s

    @property
    def docs_per_s(self) -> float:
        return self.docs / self.total_s if self.total_s > 0 else 0.0


@dataclass(frozen=True)
class IndexComparison:
    tansuo: list[IndexRun]
    fts5: list[IndexRun]
    tansuo_data_dir: Path  # data dir holding the last run's index, for the search benchmark
    fts5_path: Path
    floor_s: list[float] = field(default_factory=list)  # rjieba alone on the same texts, a round each
    tantivy_floor_s: list[float] = field(default_factory=list)  # CPU of tantivy alone writing them, a round each
    field_floor_s: list[dict[str, float]] = field(default_factory=list)  # the same for FIELD_SETS, a round each

    @staticmethod
    def median(runs: Sequence[IndexRun], metric: Callable[[IndexRun], float]) -> float:
        return statistics.median(metric(r) for r in runs)

    @property
    def ratio(self) -> float:
        base = self.median(self.fts5, lambda r: r.docs_per_s)
        return self.median(self.tansuo, lambda r: r.docs_per_s) / base if base else 0.0


def _batches(pages: Sequence[PageEvent], size: int) -> Iterator[Sequence[PageEvent]]:
    for start in range(0, len(pages), size):
        yield pages[start : start + size]


def segment_floor(pages: Sequence[PageEvent]) -> float:
    """Seconds rjieba alone takes to cut each page's title, headings and body."""
    texts = [(event.title, "\n".join(h for h in event.headings if h), event.body) for event in pages]
    started = time.perf_counter()
    for title, headings, body in texts:
        rjieba.cut(title, hmm=True)
        rjieba.cut(headings, hmm=True)
        rjieba.cut(body, hmm=True)
    return time.perf_counter() - started


def tantivy_writes(
    docs: Sequence[tantivy.Document], path: Path, every: int, schema: tantivy.Schema | None = None
) -> tuple[float, int]:
    """CPU seconds tantivy alone takes to write ``docs`` into a new index at ``path``,
    with the index's schema (or ``schema``) and writer settings, committing every
    ``every`` documents and waiting for the merges; and the segments it leaves."""
    index = tantivy.Index(schema or _schema(), path=str(path))
    writer = index.writer(heap_size=_WRITER_HEAP_BYTES, num_threads=_WRITER_THREADS)
    cpu = time.process_time()
    for n, doc in enumerate(docs, 1):
        writer.add_document(doc)
        if n % every == 0:
            writer.commit()
    writer.commit()
    writer.wait_merging_threads()
    spent = time.process_time() - cpu
    index.reload()
    return spent, index.searcher().num_segments


def tantivy_floor(pages: Sequence[PageEvent], workdir: Path) -> float:
    """CPU seconds tantivy alone takes to write and commit the pages' documents, in the
    indexer's batches, with the index's schema and writer settings; the documents are
    built and converted first, untimed."""
    docs = [_to_tantivy(build_document(event)) for event in pages]
    path = workdir / "tantivy-floor"
    path.mkdir()
    spent, _ = tantivy_writes(docs, path, Settings(data_dir=workdir).indexer_batch_size)
    shutil.rmtree(path)
    return spent


# What the floor is made of: the word fields every search needs, and the bigram fields
# that find any phrase of a page (the findability issue), each set written alone.
FIELD_SETS = {
    "words": ("title_tokens", "headings_tokens", "body_tokens"),
    "words and bigrams": ("title_tokens", "headings_tokens", "body_tokens", "title_grams", "body_grams"),
}


def field_floors(pages: Sequence[PageEvent], workdir: Path) -> dict[str, float]:
    """CPU seconds tantivy alone takes to write only each of ``FIELD_SETS`` (with
    positions, nothing stored but the URL) for the pages, in the indexer's batches."""
    built = [build_document(event) for event in pages]
    every = Settings(data_dir=workdir).indexer_batch_size
    out = {}
    for name, fields in FIELD_SETS.items():
        sb = tantivy.SchemaBuilder()
        sb.add_text_field("url", stored=True, tokenizer_name="raw")
        for f in fields:
            sb.add_text_field(f, stored=False, tokenizer_name="whitespace", index_option="position")
        docs = []
        for doc in built:
            out_doc = tantivy.Document(url=doc.url)
            for f in fields:
                out_doc.add_text(f, getattr(doc, f))
            docs.append(out_doc)
        path = workdir / "tantivy-fields"
        path.mkdir()
        out[name], _ = tantivy_writes(docs, path, every, sb.build())
        shutil.rmtree(path)
    return out


def index_tansuo(pages: Sequence[PageEvent], data_dir: Path) -> IndexRun:
    cfg = Settings(data_dir=data_dir)
    index = build_search_index(cfg)  # opening a fresh index is not timed
    cpu = time.process_time()
    build_s = write_s = commit_s = 0.0
    for batch in _batches(pages, cfg.indexer_batch_size):
        t0 = time.perf_counter()
        docs = [build_document(event) for event in batch]
        t1 = time.perf_counter()
        index.upsert(docs)
        t2 = time.perf_counter()
        index.commit()
        t3 = time.perf_counter()
        build_s, write_s, commit_s = build_s + t1 - t0, write_s + t2 - t1, commit_s + t3 - t2
    t4 = time.perf_counter()
    index.close()
    close_s = time.perf_counter() - t4
    cpu_s = time.process_time() - cpu
    docs_indexed = build_search_index(cfg, read_only=True).count()
    return IndexRun(docs_indexed, build_s, write_s, commit_s, close_s, cpu_s)


def index_fts5(pages: Sequence[PageEvent], path: Path) -> IndexRun:
    index = Fts5Index(path)
    batch_size = Settings().indexer_batch_size
    build_s = write_s = commit_s = 0.0
    for batch in _batches(pages, batch_size):
        t0 = time.perf_counter()
        rows = [segmented(event) for event in batch]
        t1 = time.perf_counter()
        index.upsert(rows)
        t2 = time.perf_counter()
        index.commit()
        t3 = time.perf_counter()
        build_s, write_s, commit_s = build_s + t1 - t0, write_s + t2 - t1, commit_s + t3 - t2
    docs_indexed = index.count()
    t4 = time.perf_counter()
    index.close()
    return IndexRun(docs_indexed, build_s, write_s, commit_s, time.perf_counter() - t4)


def run_index_bench(pages: Sequence[PageEvent], workdir: Path, rounds: int,
                    log: Callable[[str], None] = print) -> IndexComparison:
    """``rounds`` fresh indexes of ``pages`` with each engine, alternating which goes
    first; the last of each stays in ``workdir`` for the search benchmark."""
    tansuo: list[IndexRun] = []
    fts5: list[IndexRun] = []
    floor: list[float] = []
    tantivy_alone: list[float] = []
    by_fields: list[dict[str, float]] = []
    tansuo_dir = fts5_path = workdir
    for n in range(rounds):
        if tansuo_dir != workdir:
            shutil.rmtree(tansuo_dir)
            fts5_path.unlink()
        tansuo_dir, fts5_path = workdir / f"tansuo-{n}", workdir / f"fts5-{n}.sqlite3"
        jobs = [("tansuo", lambda: tansuo.append(index_tansuo(pages, tansuo_dir))),
                ("fts5", lambda: fts5.append(index_fts5(pages, fts5_path)))]
        for name, job in jobs if n % 2 == 0 else jobs[::-1]:
            job()
            if name == "tansuo":
                floor.append(segment_floor(pages))  # right after, so that both see the same machine
                tantivy_alone.append(tantivy_floor(pages, workdir))
                by_fields.append(field_floors(pages, workdir))
            run = (tansuo if name == "tansuo" else fts5)[-1]
            if run.docs != len(pages):
                raise RuntimeError(f"{name} index holds {run.docs} documents, expected {len(pages)}")
            log(f"  index, {name}: {run.docs} docs in {run.total_s:.1f} s ({run.docs_per_s:.0f} docs/s)")
    return IndexComparison(tansuo, fts5, tansuo_dir, fts5_path, floor, tantivy_alone, by_fields)
