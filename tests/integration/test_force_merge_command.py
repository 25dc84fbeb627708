"""`tansuo force-merge`: an index of many segments becomes one, and what cannot be
merged is refused with one clear line before anything is touched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import tantivy

from services.common.adapters.tantivy.search_index import (
    _LAYOUTS,
    TantivySearchIndex,
    _schema,
)
from services.common.config import Settings
from tests.page_events import index_doc


def _tansuo(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")}
    return subprocess.run([sys.executable, "-m", "services.cli.main", *args], capture_output=True, text=True, timeout=120, env=env)  # fmt: skip


def _index_of_segments(data: Path, n: int) -> TantivySearchIndex:
    index = TantivySearchIndex(data / "index", Settings(data_dir=data))
    for i in range(n):
        index.upsert([index_doc(f"https://docs.example.cn/{i}", f"第{i}章 安装", "安装 软件 步骤")])
        index.commit()
    return index


def test_force_merge_leaves_one_segment_and_every_page(tmp_path: Path) -> None:
    _index_of_segments(tmp_path, 4).close()
    out = _tansuo("force-merge", "--data", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "merged 4 documents: 4 segment(s) -> 1" in out.stderr
    reader = TantivySearchIndex(tmp_path / "index", Settings(data_dir=tmp_path), read_only=True)
    assert reader._searcher().num_segments == 1 and reader.count() == 4


def test_force_merge_refuses_while_a_crawl_writes(tmp_path: Path) -> None:
    writer = _index_of_segments(tmp_path, 2)  # holds the writer lock, as a running crawl does
    try:
        out = _tansuo("force-merge", "--data", str(tmp_path))
    finally:
        writer.close()
    assert out.returncode == 2
    assert "already open for writing" in out.stderr and "stop the crawl" in out.stderr


def test_force_merge_without_an_index_says_so(tmp_path: Path) -> None:
    out = _tansuo("force-merge", "--data", str(tmp_path / "none"))
    assert out.returncode == 2 and "no search index" in out.stderr
    assert not (tmp_path / "none").exists()  # nothing created on the way


@pytest.mark.parametrize("layout", _LAYOUTS[1:], ids=["before link_grams", "before the documents", "before the page dates", "before own_text", "before the fold keys"])
def test_force_merge_says_when_it_brought_an_older_index_to_the_current_fields(
    tmp_path: Path, layout: tuple[bool, ...]
) -> None:
    (tmp_path / "index").mkdir()
    tantivy.Index(_schema(*layout), path=str(tmp_path / "index"))  # as an older Tansuo made it
    _index_of_segments(tmp_path, 2).close()
    out = _tansuo("force-merge", "--data", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "merged 2 documents: 2 segment(s) -> 1" in out.stderr and "current fields" in out.stderr
    merged = TantivySearchIndex(tmp_path / "index", Settings(data_dir=tmp_path), read_only=True)
    assert merged._fold_keys and merged._own_text and merged._dates and merged._link_grams
