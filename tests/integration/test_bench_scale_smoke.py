"""The million-page benchmark end to end on a few hundred pages of a tiny corpus:
build (and resume a stopped build), search in process and through `tansuo serve`,
render the report. No download: the parsed corpus is written where the benchmark
caches it (under XDG_CACHE_HOME)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.scale import scale_index, scale_million
from bench.sites.scale_corpus import PARSED, Article, Poem, cache_dir, write_parsed
from services.common.adapters.tantivy.search_index import TantivySearchIndex

ARTICLES = [
    Article(("铁路运输调整干线分工", "优化运能"),
            ("京广线以客运为主，兼顾货运，可以充分利用提速资源。", "京九线以货运为主，兼顾客运，沿线经济发达。",
             "铁路部门逐步实行分等级管理进行有益的探索。")),
    Article(("北京举行新年音乐会",), ("音乐会在人民大会堂举行，观众热烈鼓掌。", "指挥家表示明年还要再来北京演出。")),
    Article(("全国农村扶贫工作会议召开",), ("会议要求动员全社会力量打好扶贫攻坚战。", "各级政府全力组织抗灾力争降低灾害损失。")),
]  # fmt: skip
POEMS = [
    Poem("静夜思", "李白", ("床前明月光，疑是地上霜。", "举头望明月，低头思故乡。")),
    Poem("春晓", "孟浩然", ("春眠不觉晓，处处闻啼鸟。", "夜来风雨声，花落知多少。")),
    Poem("登鹳雀楼", "王之涣", ("白日依山尽，黄河入海流。", "欲穷千里目，更上一层楼。")),
    Poem("踏莎行", "韩绛", ("嵩峤云高，洛川波暖。", "举头乔木森无断。")),
]


@pytest.fixture
def tiny_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the build's processes inherit it
    cache_dir().mkdir(parents=True)
    write_parsed(cache_dir() / PARSED, ARTICLES, POEMS)
    return tmp_path


def test_a_stopped_build_goes_on_where_its_figures_were_last_saved(
    tiny_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    ranks = tiny_corpus / "ranks.npy"
    scale_index.ranks("600", str(ranks))
    monkeypatch.setattr(scale_index, "STATE_EVERY", 200)
    monkeypatch.setenv("TANSUO_INDEXER_BATCH_SIZE", "200")  # three commits: 200, 400 (the "at" copy), 600
    commit = TantivySearchIndex.commit
    commits = []

    def failing_commit(self: TantivySearchIndex) -> None:
        commits.append(1)
        if len(commits) == 2:
            raise KeyboardInterrupt  # Ctrl-C in the second batch
        commit(self)

    monkeypatch.setattr(TantivySearchIndex, "commit", failing_commit)
    data = tiny_corpus / "full"
    with pytest.raises(KeyboardInterrupt):
        scale_index.build("600", str(data), str(ranks), "400", str(tiny_corpus / "at"), "1")
    assert json.loads((data / "build-state.json").read_text())["done"] == 200

    monkeypatch.setattr(TantivySearchIndex, "commit", commit)
    result = scale_index.build("600", str(data), str(ranks), "400", str(tiny_corpus / "at"), "1")
    assert (result["docs"], result["runs"], result["at"]["docs"]) == (600, 2, 400)
    assert result["vmhwm_kib"] > 0 and result["build_cpu_s"] > 0


def measured_totals(work: Path) -> list[int]:
    return json.loads((work / "measure-300.json").read_text())["search"]["totals"]


def test_the_benchmark_builds_measures_and_reports_both_indexes(tiny_corpus: Path) -> None:
    work = tiny_corpus / "work"
    out = tiny_corpus / "benchmarks.md"
    args = ["--pages", "300", "--at", "100", "--queries", "20", "--builders", "1", "--work", str(work)]
    assert scale_million.main([*args, "--write", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "<!-- scale-million:start" in text
    for row in ("| 100 pages | 100 |", "| 300 pages | 300 |", "| 300 pages | SearchService |",
                "| 300 pages | bare tantivy query (the floor) |", "| 300 pages | **all processes** |"):  # fmt: skip
        assert row in text
    assert "20 × 200" in text  # every query answered over HTTP
    assert "### After `tansuo force-merge`" in text
    merge = json.loads((work / "merge-300.json").read_text())
    assert merge["docs"] == 300 and merge["segments_before"] >= 1 and merge["segments_after"] == 1
    assert f"| 300 pages | {merge['segments_before']} → 1 |" in text
    merged = json.loads((work / "measure-merged-300.json").read_text())
    assert merged["search"]["totals"] == measured_totals(work)  # the same queries find the same pages
    measured = json.loads((work / "measure-300.json").read_text())
    assert len(measured["search"]["service_ms"]) == len(measured["search"]["bare_ms"]) == 20
    assert scale_million.main([*args, "--step", "report"]) == 0  # renders again without measuring
