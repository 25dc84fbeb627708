"""`tansuo force-merge`: rewrite the search index into as few segments as it can hold.

An index written page by page, as a crawl writes it, ends up in many segments, and a
search sets up each query term once per segment (docs/serving.md, 'Segments: merge an
index that is done').
Once a crawl is done, or before serving an index that will not change for a while,
merging it makes every search cheaper; Elasticsearch calls this a force merge.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from services.common.bootstrap import Backends


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "force-merge",
        help="rewrite the search index into as few segments as it can hold (stop the crawl first)",
    )
    p.add_argument("--data", type=Path, default=Path("tansuo-data"),
                   help="data directory of an embedded crawl (ignored when TANSUO_INDEX names Elasticsearch)")  # fmt: skip
    p.add_argument("--no-progress", action="store_true", help="no progress lines")


def run(backends: Backends, args: argparse.Namespace) -> int:
    cfg = backends.settings
    from services.cli.commands import CommandError
    from services.common.bootstrap import embedded_index
    from services.common.errors import IndexWriterBusy

    if embedded_index(cfg):
        _check_embedded(cfg.data_dir / "index")
    try:
        index = backends.index
    except IndexWriterBusy as exc:
        raise CommandError(f"{exc}: stop the crawl or `tansuo run` that writes it, then merge") from None
    started = time.monotonic()
    report = index.force_merge(None if args.no_progress else _Progress(started))
    took = time.monotonic() - started
    if report.segments_before is None:
        print(f"merged {report.documents} documents in {took:.1f} s", file=sys.stderr)
    else:
        print(
            f"merged {report.documents} documents: {report.segments_before} segment(s) -> "
            f"{report.segments_after}, in {took:.1f} s",
            file=sys.stderr,
        )
    if report.new_layout:
        print("the index now has the current fields (docs/serving.md)", file=sys.stderr)
    return 0


def _check_embedded(path: Path) -> None:
    """Refuse before starting what could not finish: no index, or too little disk for
    the copy (the old segments stay until the new ones are committed)."""
    from services.cli.commands import CommandError

    if not (path / "meta.json").exists():
        raise CommandError(f"no search index at {path}: crawl something first (`tansuo crawl ... --data DIR`)")
    size = sum(f.stat().st_size for f in path.iterdir() if f.is_file())
    free = shutil.disk_usage(path).free
    if free < size:
        raise CommandError(
            f"the merge needs as much free disk as the index holds ({size / 1e9:.1f} GB), "
            f"and {path} has {free / 1e9:.1f} GB free"
        )


class _Progress:
    """A line every ten seconds: a large index takes minutes to merge."""

    def __init__(self, started: float) -> None:
        self._started = started
        self._last = started

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self._last < 10 and done < total:
            return
        self._last = now
        print(f"copied {done}/{total} documents ({now - self._started:.0f} s)", file=sys.stderr)
