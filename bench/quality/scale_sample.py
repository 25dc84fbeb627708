"""A held-out site for search quality: a sample of the million-page corpus, indexed.

``bench/sites/scale_corpus.py`` makes pages of real Chinese text (People's Daily of
January 1998, Tang and Song poems in traditional script); nobody tuned the ranking on
them. This indexes the first ``--pages`` of them (embedded index, no crawl: the pages
are what the crawler would publish) so that ``tansuo eval --data DIR`` measures there,
and ``--generate`` makes its query sets like any crawled site's.

    python -m bench.quality.scale_sample DIR [--pages 20000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def build(data_dir: Path, pages: int, batch: int = 500) -> int:
    """Index pages ``0 … pages-1`` into ``data_dir/index`` unless it is there; the count."""
    from bench.sites.scale_corpus import load_corpus, page_event
    from services.common.bootstrap import build_search_index
    from services.common.config import Settings
    from services.indexer.document_builder import build_document

    cfg = Settings(data_dir=data_dir)
    if (data_dir / "index").exists():
        index = build_search_index(cfg, read_only=True)
        return index.count()
    corpus = load_corpus()
    index = build_search_index(cfg)
    started = time.monotonic()
    for start in range(0, pages, batch):
        docs = [build_document(page_event(corpus, i, pages)) for i in range(start, min(pages, start + batch))]
        index.upsert(docs)
        index.commit()
        print(f"\r{start + len(docs):,}/{pages:,} pages, {time.monotonic() - started:.0f} s", end="", file=sys.stderr)
    print(file=sys.stderr)
    count = index.count()
    index.close(finish_merges=True)
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quality.scale_sample", description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--pages", type=int, default=20_000)
    args = parser.parse_args(argv)
    print(f"{build(args.data_dir, args.pages):,} pages indexed in {args.data_dir / 'index'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
