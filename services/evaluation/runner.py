"""Runs judged queries through every ranker and keeps each query's outcome."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from services.evaluation.judgments import Judgment
from services.evaluation.metrics import Summary, query_scores, summarise

DEPTH = 100
OVERALL = "overall"

Search = Callable[[str, int], list[str]]


@dataclass(frozen=True)
class QueryOutcome:
    judgment: Judgment
    ranked: tuple[str, ...]  # the first DEPTH URLs returned
    scores: dict[str, float]

    @property
    def first_relevant(self) -> int:
        """1-based rank of the first relevant URL, 0 when none was returned."""
        rel = set(self.judgment.relevant)
        return next((i for i, u in enumerate(self.ranked, start=1) if u in rel), 0)


@dataclass(frozen=True)
class EvalResult:
    types: tuple[str, ...]  # query types in first-seen order, then "overall"
    rankers: tuple[str, ...]
    outcomes: dict[str, list[QueryOutcome]]  # ranker -> one outcome per judgment
    summaries: dict[str, dict[str, Summary]]  # ranker -> type -> means


def evaluate(judgments: Sequence[Judgment], rankers: Mapping[str, Search], progress: bool = False) -> EvalResult:
    """Every judgment through every ranker, then means per query type and overall."""
    types = tuple(dict.fromkeys(j.qtype for j in judgments)) + (OVERALL,)
    outcomes: dict[str, list[QueryOutcome]] = {}
    summaries: dict[str, dict[str, Summary]] = {}
    for name, search in rankers.items():
        rows = []
        for n, j in enumerate(judgments, start=1):
            ranked = tuple(search(j.query, DEPTH)[:DEPTH])
            rows.append(QueryOutcome(j, ranked, query_scores(ranked, j.relevant)))
            if progress and (n % 200 == 0 or n == len(judgments)):
                print(f"\r{name}: {n}/{len(judgments)} queries", end="", file=sys.stderr, flush=True)
        if progress:
            print(file=sys.stderr)
        outcomes[name] = rows
        summaries[name] = {t: summarise([o.scores for o in rows if t in (OVERALL, o.judgment.qtype)]) for t in types}
    return EvalResult(types, tuple(rankers), outcomes, summaries)
