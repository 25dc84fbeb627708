"""`tansuo search` says what the web UI says above the results: the correction it
searched (and how to search as typed), and it takes the API's sort and as_typed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.config import Settings
from services.indexer.document_builder import build_document
from tests.search_pages import page_events

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("cli-search") / "data"
    index = TantivySearchIndex(data / "index", Settings(data_dir=data))
    index.upsert([build_document(event) for event in page_events()])
    index.commit()
    index.close()
    return data


def _search(data: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "services.cli.main", "search", *args, "--data", str(data)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_a_mistyped_query_says_which_correction_it_searched(data: Path) -> None:
    out = _search(data, "防火墙配制")
    assert out.returncode == 0, out.stderr
    assert "showing results for 防火墙配置" in out.stdout and "--as-typed" in out.stdout


def test_a_query_of_initials_names_the_words_it_was_read_as(data: Path) -> None:
    out = _search(data, "xz")
    assert out.returncode == 0, out.stderr
    assert "showing results for the words it may spell: 选择, 下载, 寻找, 选中, 卸载" in out.stdout
    assert " OR " not in out.stdout


def test_as_typed_and_sort_are_the_apis(data: Path) -> None:
    out = _search(data, "防火墙配制", "--as-typed", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["did_you_mean"] is None
    out = _search(data, "防火墙", "--sort", "date", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["sort"] == "date"
    bad = _search(data, "防火墙", "--sort", "oldest")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr and "Traceback" not in bad.stderr


def test_an_unclosed_quote_is_said(data: Path) -> None:
    out = _search(data, '"防火墙')
    assert out.returncode == 0 and "note: a quote was not closed" in out.stdout
