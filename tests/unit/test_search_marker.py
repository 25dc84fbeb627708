"""The stamp a search leaves beside an embedded index, for the indexer's idle rule."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from services.common.adapters.tantivy.search_marker import SearchMarker


def test_a_search_is_stamped_once_a_second_at_most(tmp_path: Path) -> None:
    marker = SearchMarker(tmp_path / "index.searched")
    assert marker.last() is None
    marker.stamp()
    first = marker.last()
    assert first is not None and (tmp_path / "index.searched").exists()
    os.utime(tmp_path / "index.searched", (1.0, 1.0))
    marker.stamp()  # within the second: not written again
    assert marker.last() == 1.0
    assert SearchMarker(tmp_path / "index.searched").last() == 1.0  # another process reads the same


def test_a_stamp_that_cannot_be_written_is_skipped_and_said_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    marker = SearchMarker(tmp_path / "missing" / "index.searched")
    with caplog.at_level(logging.WARNING):
        marker.stamp()
        marker._stamped = float("-inf")
        marker.stamp()
    assert marker.last() is None
    assert len([r for r in caplog.records if "cannot record searches" in r.message]) == 1
