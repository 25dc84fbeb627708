"""Ranking metrics for binary relevance, per query and averaged.

Cut-offs follow common IR practice: MRR@10 and nDCG@10 look at the first page,
Recall@100 at how much a reranker could still recover, P@1 at the "I'm feeling lucky"
result. nDCG uses gain 1 for a relevant URL and the ideal ranking of all judged URLs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

METRICS = ("mrr@10", "ndcg@10", "recall@10", "recall@100", "p@1")


def reciprocal_rank(ranked: Sequence[str], relevant: set[str], k: int = 10) -> float:
    for i, url in enumerate(ranked[:k], start=1):
        if url in relevant:
            return 1.0 / i
    return 0.0


def ndcg(ranked: Sequence[str], relevant: set[str], k: int = 10) -> float:
    if not relevant:
        return 0.0
    seen: set[str] = set()
    dcg = 0.0
    for i, url in enumerate(ranked[:k], start=1):
        if url in relevant and url not in seen:  # a URL listed twice gains once
            seen.add(url)
            dcg += 1.0 / math.log2(i + 1)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(relevant), k) + 1))
    return dcg / ideal


def recall(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def precision_at_1(ranked: Sequence[str], relevant: set[str]) -> float:
    return 1.0 if ranked and ranked[0] in relevant else 0.0


def query_scores(ranked: Sequence[str], relevant: Iterable[str]) -> dict[str, float]:
    """Every metric of one query's ranked URLs against its relevant URLs."""
    rel = set(relevant)
    return {
        "mrr@10": reciprocal_rank(ranked, rel),
        "ndcg@10": ndcg(ranked, rel),
        "recall@10": recall(ranked, rel, 10),
        "recall@100": recall(ranked, rel, 100),
        "p@1": precision_at_1(ranked, rel),
    }


@dataclass(frozen=True)
class Summary:
    queries: int
    means: dict[str, float]


def summarise(per_query: Sequence[dict[str, float]]) -> Summary:
    """Arithmetic means over queries (every query weighs the same)."""
    n = len(per_query)
    means = {m: (sum(q[m] for q in per_query) / n if n else 0.0) for m in METRICS}
    return Summary(n, means)
