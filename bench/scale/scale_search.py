"""Search at scale, and what the bigram fields cost.

The demo site's pages (and their line-dropped copies, ``corpus.repeated``) are
analysed once, then written again under new host names until the index holds
``docs`` documents; building documents is measured by the indexing benchmark, not
here. Three indexes of the same documents are searched with the same queries, in
turns: Tansuo with its bigram fields, Tansuo with the bigram fields empty and the
bigram weights at 0 (the query model before them), and SQLite FTS5 on the same tokens.
Index sizes on disk are reported beside the latencies.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

from bench.indexing.fts5_baseline import Fts5Index, Fts5Row, rowid_of, segmented
from bench.measure.resource_use import dir_bytes
from bench.serving.search_bench import Query, SearchComparison, run_search_bench
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from services.common.domain.documents import IndexDoc
from services.common.domain.messages import PageEvent
from services.indexer.document_builder import build_document

WITHOUT_GRAMS = {"search_gram_boost": 0.0, "search_gram_phrase_boost": 0.0}
_BATCH = 2_000


@dataclass(frozen=True)
class ScaleResults:
    docs: int
    with_grams: SearchComparison
    without_grams: SearchComparison
    bytes_with_grams: int
    bytes_without_grams: int
    bytes_fts5: int


def _copies(docs: Sequence[IndexDoc], rows: Sequence[Fts5Row], n: int) -> Iterator[tuple[IndexDoc, Fts5Row]]:
    """``n`` documents: the originals, then copies on hosts ``s<k>.<host>``."""
    k = made = 0
    while True:
        for doc, row in zip(docs, rows, strict=True):
            if made == n:
                return
            made += 1
            if k == 0:
                yield doc, row
            else:
                site = f"s{k}.{doc.site}"
                url = doc.url.replace(f"//{doc.site}/", f"//{site}/", 1)
                yield dataclasses.replace(doc, url=url, site=site), dataclasses.replace(row, url=url, rowid=rowid_of(url))
        k += 1


def _write(pages: Sequence[PageEvent], n: int, work: Path, log: Callable[[str], None]) -> tuple[Path, Path, Path]:
    docs = [build_document(p) for p in pages]
    rows = [segmented(p) for p in pages]
    with_dir, without_dir, fts5_path = work / "grams", work / "no-grams", work / "fts5.sqlite3"
    with_index = build_search_index(Settings(data_dir=with_dir))
    without_index = build_search_index(Settings(data_dir=without_dir))
    fts5 = Fts5Index(fts5_path)
    batch: list[tuple[IndexDoc, Fts5Row]] = []
    written = 0
    for pair in _copies(docs, rows, n):
        batch.append(pair)
        if len(batch) == _BATCH or written + len(batch) == n:
            with_index.upsert([d for d, _ in batch])
            without_index.upsert([dataclasses.replace(d, title_grams="", body_grams="") for d, _ in batch])
            fts5.upsert([r for _, r in batch])
            for index in (with_index, without_index, fts5):
                index.commit()
            written += len(batch)
            batch = []
            if written % 20_000 == 0:
                log(f"  scale: {written} documents written")
            if written == n:
                break
    for index in (with_index, without_index, fts5):
        index.close()
    return with_dir, without_dir, fts5_path


def run_scale_bench(pages: Sequence[PageEvent], n: int, queries: Sequence[Query], work: Path,
                    log: Callable[[str], None] = print) -> ScaleResults:  # fmt: skip
    with_dir, without_dir, fts5_path = _write(pages, n, work, log)
    log(f"  scale: searching {n} documents with the bigram fields")
    with_grams = run_search_bench(with_dir, fts5_path, queries, log)
    log(f"  scale: searching {n} documents without them")
    without_grams = run_search_bench(without_dir, fts5_path, queries, log, overrides=WITHOUT_GRAMS)
    return ScaleResults(
        docs=with_grams.docs,
        with_grams=with_grams,
        without_grams=without_grams,
        bytes_with_grams=dir_bytes(with_dir),
        bytes_without_grams=dir_bytes(without_dir),
        bytes_fts5=fts5_path.stat().st_size,
    )


def main(argv: list[str] | None = None) -> int:
    """Run this benchmark alone and put its section into docs/benchmarks.md."""
    import argparse
    import subprocess
    import tempfile
    from datetime import datetime

    from bench import report
    from bench.serving.search_bench import draw_queries
    from bench.sites.corpus import repeated, site_pages
    from services.cli.demo_site import build_demo_site, default_cache

    parser = argparse.ArgumentParser(prog="python -m bench.scale.scale_search", description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--site", type=Path, default=default_cache().parent / "zh-docs-site")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md")
    args = parser.parse_args(argv)
    build_demo_site(args.site, documents=False)
    corpus = site_pages(args.site)
    pages = repeated(corpus, 8)
    with tempfile.TemporaryDirectory(prefix="tansuo-scale-") as work:
        results = run_scale_bench(pages, args.docs, draw_queries(corpus, args.queries), Path(work))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = report.scale(results) + f"\nMeasured alone (`python -m bench.scale.scale_search`) on {when}, commit {commit}.\n"
    report.splice_section(args.out, section)
    print(section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
