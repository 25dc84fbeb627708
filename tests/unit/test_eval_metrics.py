"""Metrics of `tansuo eval` on cases small enough to compute by hand."""

from __future__ import annotations

import math

import pytest

from services.evaluation.metrics import (
    METRICS,
    ndcg,
    query_scores,
    recall,
    reciprocal_rank,
    summarise,
)


def test_first_relevant_at_rank_three():
    s = query_scores(["a", "b", "r", "c"], {"r"})
    assert s["mrr@10"] == pytest.approx(1 / 3)
    # One relevant URL at rank 3: DCG = 1/log2(4) = 0.5, ideal = 1.
    assert s["ndcg@10"] == pytest.approx(0.5)
    assert s["recall@10"] == 1.0 and s["recall@100"] == 1.0
    assert s["p@1"] == 0.0


def test_two_relevant_one_found_first():
    s = query_scores(["r1", "x", "y"], {"r1", "r2"})
    assert s["mrr@10"] == 1.0 and s["p@1"] == 1.0
    assert s["recall@10"] == 0.5
    # DCG = 1; ideal with two relevant = 1 + 1/log2(3).
    assert s["ndcg@10"] == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_relevant_beyond_ten_counts_only_for_recall_at_100():
    ranked = [f"x{i}" for i in range(10)] + ["r"]
    s = query_scores(ranked, {"r"})
    assert s["mrr@10"] == 0.0 and s["ndcg@10"] == 0.0 and s["recall@10"] == 0.0
    assert s["recall@100"] == 1.0


def test_nothing_returned_scores_zero():
    assert all(v == 0.0 for v in query_scores([], {"r"}).values())


def test_a_url_returned_twice_gains_once():
    assert ndcg(["r", "r"], {"r", "s"}) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert recall(["r", "r"], {"r", "s"}, 10) == 0.5


def test_reciprocal_rank_cut_off():
    assert reciprocal_rank(["a", "r"], {"r"}, k=1) == 0.0
    assert reciprocal_rank(["a", "r"], {"r"}, k=2) == 0.5


def test_summary_is_the_mean_over_queries():
    s = summarise([query_scores(["r"], {"r"}), query_scores(["a", "r"], {"r"})])
    assert s.queries == 2
    assert s.means["mrr@10"] == pytest.approx(0.75)
    assert s.means["p@1"] == pytest.approx(0.5)
    assert set(s.means) == set(METRICS)
