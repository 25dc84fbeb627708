"""Search-quality floors of the findability issue, measured with `tansuo eval`.

Two real sites built from Debian packages (the demo site of Debian's Chinese manuals
and the GIMP manual in Simplified Chinese) are served on 127.0.0.1, crawled with
`tansuo crawl`, given a known-item query set by `tansuo eval --generate`, and measured.
Tansuo must reach the floors per query type and beat BM25, TF-IDF cosine and
PageRank + hits, run on the same index and tokens, on every type.

These floors are targets of the ranking work: on the search of the day they were
written they fail (docs/ranking.md, "Before", has the figures).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.sites.gimp_site import build_gimp_site
from services.cli.static_site_server import SiteServer
from services.evaluation.judgments import read_judgments

from .conftest import CACHE, run_cli

pytestmark = pytest.mark.e2e

FLOORS = {"title": 0.98, "title-words": 0.95, "body-quote": 0.97, "overall": 0.96}  # MRR@10
BASELINES = ("bm25", "bm25-grams", "tfidf", "pr-hits")
SEED = 1
HAND_JUDGED = Path(__file__).resolve().parents[2] / "bench" / "queries" / "demo-site.tsv"


def _site_root(name: str, docs_site_dir: Path) -> Path:
    if name == "demo":
        return docs_site_dir
    dest = CACHE / "zh-gimp-site"
    build_gimp_site(dest, cache=CACHE / "debs")
    return dest


@pytest.fixture(scope="module", params=["demo", "gimp"])
def measured(request, docs_site_dir, tmp_path_factory):
    """(site name, base URL, data dir, eval JSON) for one crawled site."""
    name = request.param
    site = SiteServer(_site_root(name, docs_site_dir)).start()
    try:
        data = tmp_path_factory.mktemp(f"quality-{name}")
        crawl = run_cli("crawl", site.url, "--data", str(data), "--delay", "0", "--allow-private-networks", "--no-progress",
                        timeout=1800)
        assert crawl.returncode == 0, crawl.stderr
        known = data / "known-items.tsv"
        gen = run_cli("eval", "--data", str(data), "--generate", str(known), "--seed", str(SEED), "--no-progress")
        assert gen.returncode == 0, gen.stderr
        result = run_cli("eval", str(known), "--data", str(data), "--json", "--no-progress", "--misses", str(data / "misses.tsv"),
                         timeout=1800)
        assert result.returncode == 0, result.stderr
        figures = json.loads(result.stdout)
        yield name, site.url, data, figures
    finally:
        site.stop()


def _row(figures: dict, ranker: str, qtype: str) -> dict:
    return figures["rankers"][ranker][qtype]


@pytest.mark.parametrize("qtype", list(FLOORS))
def test_known_item_floor(measured, qtype):
    name, _, data, figures = measured
    got = _row(figures, "tansuo", qtype)
    assert got["queries"] > 0
    assert got["mrr@10"] >= FLOORS[qtype], (
        f"{name} {qtype}: MRR@10 {got['mrr@10']:.3f} < {FLOORS[qtype]} over {got['queries']} queries; "
        f"misses in {data / 'misses.tsv'}"
    )


@pytest.mark.parametrize("qtype", ["title", "title-words", "body-quote"])
def test_ahead_of_every_baseline(measured, qtype):
    name, _, _, figures = measured
    ours = _row(figures, "tansuo", qtype)
    for baseline in BASELINES:
        theirs = _row(figures, baseline, qtype)
        for metric in ("mrr@10", "ndcg@10"):
            assert ours[metric] >= theirs[metric], (
                f"{name} {qtype}: Tansuo {metric} {ours[metric]:.3f} < {baseline} {theirs[metric]:.3f}"
            )


def test_the_generated_set_has_all_three_types(measured):
    _, _, data, figures = measured
    assert figures["types"] == ["title", "title-words", "body-quote", "overall"]
    judgments = read_judgments(data / "known-items.tsv")
    assert len({j.query for j in judgments if j.qtype == "title"}) == sum(j.qtype == "title" for j in judgments)


@pytest.fixture(scope="module")
def hand_judged(measured):
    """The demo site's hand-written queries, run on its crawl (None on other sites)."""
    name, base, data, _ = measured
    if name != "demo":
        pytest.skip("the hand-judged set is written for the demo site")
    result = run_cli("eval", str(HAND_JUDGED), "--data", str(data), "--base-url", base, "--json")
    assert result.returncode == 0, result.stderr
    return result.stderr, json.loads(result.stdout)


def test_hand_judged_urls_are_all_in_the_demo_index(hand_judged):
    """The hand-written set stays valid: every page it names is crawled and indexed."""
    stderr, figures = hand_judged
    assert "not in the index" not in stderr
    assert figures["rankers"]["tansuo"]["overall"]["queries"] >= 50
    assert {"question", "topic", "mixed", "traditional", "typo"} <= set(figures["types"])


# P@1 of the query model before soft conjunction (docs/ranking.md, "Before"): two- and
# three-word topics and mixed Chinese/English queries were already precise under
# strict AND, and a softer conjunction must not cost them that.
PRECISION_BEFORE = {"topic": 1.0, "mixed": 1.0}


@pytest.mark.parametrize("qtype", list(PRECISION_BEFORE))
def test_short_queries_keep_their_precision(hand_judged, qtype):
    _, figures = hand_judged
    got = _row(figures, "tansuo", qtype)
    assert got["p@1"] >= PRECISION_BEFORE[qtype], f"{qtype}: P@1 {got['p@1']:.3f} over {got['queries']} queries"


def test_hand_judged_queries_rank_ahead_of_every_baseline(hand_judged):
    _, figures = hand_judged
    ours = _row(figures, "tansuo", "overall")
    for baseline in BASELINES:
        theirs = _row(figures, baseline, "overall")
        for metric in ("mrr@10", "ndcg@10", "p@1"):
            assert ours[metric] >= theirs[metric], f"{metric}: Tansuo {ours[metric]:.3f} < {baseline} {theirs[metric]:.3f}"


# What people type slightly wrong (issue 36), generated on the demo site: at least the
# bigram BM25 (Elasticsearch's CJK bigrams with folding) on each type, and quoted
# spans copied across a break found as the floor of body quotes asks.
FORGIVING = ("typo-title", "regional", "quoted", "quoted-across")


@pytest.fixture(scope="module")
def forgiving(measured):
    name, _, data, _ = measured
    if name != "demo":
        pytest.skip("measured on the demo site; docs/ranking.md has the other sites")
    queries = data / "forgiving.tsv"
    gen = run_cli("eval", "--data", str(data), "--generate", str(queries), "--seed", str(SEED), "--no-progress",
                  "--types", ",".join((*FORGIVING, "typo-line")))  # fmt: skip
    assert gen.returncode == 0, gen.stderr
    result = run_cli("eval", str(queries), "--data", str(data), "--json", "--no-progress", timeout=1800)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("qtype", FORGIVING)
def test_forgiving_queries_rank_at_least_as_the_bigram_bm25(forgiving, qtype):
    ours, theirs = _row(forgiving, "tansuo", qtype), _row(forgiving, "bm25-grams", qtype)
    assert ours["queries"] > 0
    for metric in ("mrr@10", "ndcg@10"):
        assert ours[metric] >= theirs[metric], f"{qtype}: Tansuo {metric} {ours[metric]:.3f} < bm25-grams {theirs[metric]:.3f}"
    if qtype.startswith("quoted"):
        assert ours["mrr@10"] >= FLOORS["body-quote"]


@pytest.mark.xfail(reason="issue 36: on this generated set a line with one wrong character still ranks a hair "
                   "below the bigram BM25 (demo 0.978 against 0.981 at fb6d0a9: one line whose 可以 makes it a "
                   "question, docs/ranking.md's known gaps; above it on the held-out sites)", strict=False)  # fmt: skip
def test_a_line_with_one_wrong_character_ranks_at_least_as_the_bigram_bm25(forgiving):
    ours, theirs = _row(forgiving, "tansuo", "typo-line"), _row(forgiving, "bm25-grams", "typo-line")
    assert ours["mrr@10"] >= theirs["mrr@10"]
