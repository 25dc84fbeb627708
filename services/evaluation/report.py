"""How an evaluation is shown: a Markdown table (readable in a terminal and
pasteable into docs), JSON for scripts, and a TSV of the queries Tansuo missed."""

from __future__ import annotations

from typing import Any

from services.evaluation.metrics import METRICS
from services.evaluation.runner import EvalResult

_HEADINGS = {"mrr@10": "MRR@10", "ndcg@10": "nDCG@10", "recall@10": "R@10", "recall@100": "R@100", "p@1": "P@1"}


def markdown_table(result: EvalResult) -> str:
    """One row per query type and ranker, types in file order, overall last."""
    head = ["type", "ranker", "queries", *(_HEADINGS[m] for m in METRICS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for qtype in result.types:
        for ranker in result.rankers:
            s = result.summaries[ranker][qtype]
            cells = [qtype, ranker, str(s.queries), *(f"{s.means[m]:.3f}" for m in METRICS)]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def as_json(result: EvalResult) -> dict[str, Any]:
    """``{"rankers": {name: {type: {"queries": n, metric: mean}}}}``."""
    return {
        "types": list(result.types),
        "rankers": {
            ranker: {t: {"queries": s.queries, **{m: round(v, 6) for m, v in s.means.items()}} for t, s in by_type.items()}
            for ranker, by_type in result.summaries.items()
        },
    }


def misses_tsv(result: EvalResult, ranker: str = "tansuo") -> str:
    """Queries whose first relevant URL is not first: type, query, its rank (0 = not in
    the top 100), the relevant URL, and what came first instead."""
    lines = ["# type\tquery\trank of first relevant (0 = not in top 100)\trelevant\tfirst result"]
    for o in result.outcomes.get(ranker, []):
        if o.first_relevant != 1:
            first = o.ranked[0] if o.ranked else ""
            lines.append("\t".join((o.judgment.qtype, o.judgment.query, str(o.first_relevant), o.judgment.relevant[0], first)))
    return "\n".join(lines) + "\n"
