"""The sequence of queries the load benchmark sends: repeats and new queries mixed
as in a search log, so that the API's result cache is measured at a realistic hit
rate rather than at the 100% of a small query list sent round and round.

Published web-search logs have about 44% of queries occurring only once (Baeza-Yates
et al., "The impact of caching on search engines", SIGIR 2007), and the repeated
ones follow a power law. The stream draws half its queries new (a query of the pool
with another of its words added, never sent before) and the rest from the pool with
Zipf weights (exponent 1).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

FRESH_SHARE = 0.5


def stream(pool: Sequence[str], length: int, fresh_share: float = FRESH_SHARE, seed: int = 18) -> list[str]:
    """``length`` queries: a share of them new, the rest repeats from ``pool``."""
    rng = random.Random(seed)
    ranked = list(pool)
    rng.shuffle(ranked)
    weights = list(itertools.accumulate(1.0 / rank for rank in range(1, len(ranked) + 1)))
    words = sorted({w for q in pool for w in q.split()})
    sent: set[str] = set(pool)
    out: list[str] = []
    while len(out) < length:
        if rng.random() < fresh_share:
            query = f"{rng.choice(ranked)} {rng.choice(words)}"
            if query in sent:
                continue
            sent.add(query)
        else:
            query = rng.choices(ranked, cum_weights=weights)[0]
        out.append(query)
    return out


def repeat_share(queries: Sequence[str]) -> float:
    """The share of queries that an unbounded cache could answer: seen before."""
    seen: set[str] = set()
    repeats = 0
    for q in queries:
        repeats += q in seen
        seen.add(q)
    return repeats / max(1, len(queries))
