"""The lines `tansuo crawl` ends with."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.cli.commands import MERGE_HINT_DOCUMENTS, print_summary
from services.cli.embedded_crawl import CrawlProgress, CrawlSummary


def _summary(documents: int, finished: bool = True) -> CrawlSummary:
    progress = CrawlProgress(fetched=documents, queued=0, in_flight=0, errors=0, indexed=documents, elapsed_s=1.0)
    return CrawlSummary(finished=finished, progress=progress, documents=documents, pagerank_nodes=documents)


def test_a_large_finished_index_is_pointed_at_the_merge(capsys: pytest.CaptureFixture[str]) -> None:
    print_summary(_summary(MERGE_HINT_DOCUMENTS), Path("/srv/tansuo"))
    assert "tansuo force-merge --data /srv/tansuo" in capsys.readouterr().err


def test_a_small_or_unfinished_crawl_is_not(capsys: pytest.CaptureFixture[str]) -> None:
    print_summary(_summary(MERGE_HINT_DOCUMENTS - 1), Path("d"))
    print_summary(_summary(MERGE_HINT_DOCUMENTS, finished=False), Path("d"))  # resuming comes first
    err = capsys.readouterr().err
    assert "crawl finished: " in err and "crawl stopped (run the same command to resume)" in err
    assert "force-merge" not in err
