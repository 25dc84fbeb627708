"""Baselines of `tansuo eval` on a corpus small enough to score by hand."""

from __future__ import annotations

import math

import pytest

from services.evaluation import baselines
from services.evaluation.baselines import BaselineRankers
from services.evaluation.corpus import CorpusDoc


def doc(url: str, title: list[str], body: list[str], rank: float = 1.0) -> CorpusDoc:
    return CorpusDoc(url, " ".join(title), "", " ".join(body), tuple(title), tuple(body), rank)


# Latin tokens segment to themselves, so each score below can be worked out on paper.
DOCS = [
    doc("http://a/1", ["apt"], ["apt", "apt", "kernel"]),
    doc("http://a/2", ["kernel"], ["kernel", "module", "x", "y"], rank=3.0),
    doc("http://a/3", ["intro"], ["apt", "guide", "z", "w", "v", "u"]),
    doc("http://a/4", ["other"], ["nothing"]),
]


def test_bm25_matches_the_formula():
    r = BaselineRankers(DOCS)
    assert r.bm25("apt") == ["http://a/1", "http://a/3"]
    # Check the weight of doc 1 for "apt" against the textbook formula.
    lengths = [4, 5, 7, 2]
    avgdl = sum(lengths) / 4
    idf = math.log(1 + (4 - 2 + 0.5) / (2 + 0.5))
    k1, b = baselines.BM25_K1, baselines.BM25_B
    want = idf * 3 * (k1 + 1) / (3 + k1 * (1 - b + b * 4 / avgdl))
    assert r._bm25[0, r._vocab["apt"]] == pytest.approx(want)


def test_tfidf_cosine_prefers_the_focused_page():
    r = BaselineRankers(DOCS)
    # Doc 1 is mostly "apt"; doc 3 mentions it once among five other words.
    assert r.tfidf("apt") == ["http://a/1", "http://a/3"]
    assert r.tfidf("nothing") == ["http://a/4"]


def test_pr_hits_is_rank_plus_weighted_hits():
    r = BaselineRankers(DOCS)
    # kernel: doc 1 = 1 + 0.1*1 = 1.1; doc 2 = 3 + 0.5*1 + 0.1*1 = 3.6.
    assert r.pr_hits("kernel") == ["http://a/2", "http://a/1"]
    # apt: doc 1 = 1 + 0.5 + 0.2 = 1.7; doc 3 = 1 + 0.1 = 1.1; doc 2 holds no "apt".
    assert r.pr_hits("apt") == ["http://a/1", "http://a/3"]


def test_unknown_words_and_depth():
    r = BaselineRankers(DOCS)
    assert r.bm25("zzz") == [] and r.tfidf("zzz") == [] and r.pr_hits("zzz") == []
    assert r.bm25("apt kernel", 1) == ["http://a/1"]


def test_ties_break_by_url():
    docs = [doc("http://a/b", [], ["same"]), doc("http://a/a", [], ["same"])]
    r = BaselineRankers(docs)
    for rank in r.rankers().values():
        assert rank("same", 10) == ["http://a/a", "http://a/b"]


def test_thirty_thousand_documents_build():
    docs = [doc(f"http://a/{i}", [f"t{i % 500}"], [f"w{(i * 7 + j) % 3000}" for j in range(60)]) for i in range(30_000)]
    r = BaselineRankers(docs)
    assert len(r.bm25("w1 w2", 100)) == 100


def test_bigram_bm25_finds_a_line_with_one_wrong_character_by_its_intact_bigrams():
    docs = [
        CorpusDoc("http://p/1", "静夜思", "", "床前明月光，疑是地上霜。", (), (), 1.0),
        CorpusDoc("http://p/2", "春晓", "", "春眠不觉晓，处处闻啼鸟。", (), (), 1.0),
        CorpusDoc("http://p/3", "靜夜", "", "明日", (), (), 1.0),
    ]
    r = BaselineRankers(docs)
    # 床前名月光: 名 for 明 leaves 床前 and 月光 intact; the word BM25 sees other words.
    assert r.bm25_grams("床前名月光") == ["http://p/1"]
    # Traditional script folds to the simplified bigrams the page is indexed by.
    assert r.bm25_grams("靜夜思")[0] == "http://p/1"
    assert "bm25-grams" in r.rankers()
