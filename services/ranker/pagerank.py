"""PageRank by sparse power iteration (scipy), with networkx ``DiGraph`` semantics.

The graph model, chosen so that results equal ``networkx.pagerank(nx.DiGraph(edges))``:

- Duplicate edges count once (a ``DiGraph`` collapses them): a page that links to
  the same target ten times passes it no more rank than a single link would.
- A self-loop is an ordinary edge: it counts in its node's out-degree and sends it
  part of its own rank, as networkx does. (The ranker drops self-links before they
  get here, so on the web graph this case never arises.)
- Edges whose source or target is not in ``nodes`` are dropped: a link to a page we
  never fetched cannot hold rank.
- A dangling node (no outlinks) spreads its rank uniformly over every node, and the
  teleport is uniform.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PageRankResult:
    scores: dict[str, float]  # non-negative, sums to 1 (empty for an empty graph)
    iterations: int
    converged: bool
    edges: int  # distinct edges between known nodes, self-loops included


def compute_pagerank(
    nodes: Sequence[str],
    edges: Iterable[tuple[str, str]],
    damping: float = 0.85,
    tol: float = 1e-6,
    max_iter: int = 200,
) -> PageRankResult:
    """PageRank plus how the iteration went.

    ``tol`` bounds the L1 distance of the result from the exact PageRank vector. The
    iteration contracts by ``damping`` per step, so that bound holds once the L1 change
    of one step is below ``tol * (1 - damping) / damping``; we stop there rather than at
    a change of ``tol``, which could leave an error several times ``tol``.

    Not converging within ``max_iter`` returns the last iterate with ``converged=False``
    and a warning, instead of raising as networkx does: a nearly converged ranking is
    still useful, whereas an exception would leave every page without a rank.
    """
    if not 0 < damping < 1:
        raise ValueError(f"damping must be in (0, 1), got {damping}")
    index: dict[str, int] = {}
    for node in nodes:
        index.setdefault(node, len(index))
    n = len(index)
    if n == 0:
        return PageRankResult({}, 0, True, 0)

    rows: list[int] = []
    cols: list[int] = []
    for src, dst in edges:
        i, j = index.get(src), index.get(dst)
        if i is not None and j is not None:
            rows.append(i)
            cols.append(j)
    adj = sp.csr_array(
        (np.ones(len(rows)), (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
        shape=(n, n),
    )
    adj.sum_duplicates()
    adj.data[:] = 1.0  # duplicates were summed; a DiGraph keeps one edge
    out_degree = np.asarray(adj.sum(axis=1)).ravel()
    dangling = out_degree == 0
    inv_degree = np.zeros(n)
    inv_degree[~dangling] = 1.0 / out_degree[~dangling]
    # Row-normalise, then transpose once, so each step is one CSR mat-vec.
    transition_t = (sp.diags_array(inv_degree) @ adj).T.tocsr()

    threshold = tol * (1.0 - damping) / damping
    teleport = (1.0 - damping) / n
    x = np.full(n, 1.0 / n)
    converged = False
    iterations = 0
    while iterations < max_iter and not converged:
        iterations += 1
        previous = x
        x = damping * (transition_t @ x) + (damping * x[dangling].sum() / n + teleport)
        converged = bool(np.abs(x - previous).sum() < threshold)
    if not converged:
        log.warning(
            "PageRank did not converge in %d iterations (%d nodes); using the last iterate",
            max_iter,
            n,
        )
    x = x / x.sum()  # undo float drift so the scores sum to exactly 1 (to rounding)
    names = list(index)
    return PageRankResult(dict(zip(names, x.tolist(), strict=True)), iterations, converged, int(adj.nnz))


def pagerank(
    nodes: Sequence[str],
    edges: Iterable[tuple[str, str]],
    damping: float = 0.85,
    tol: float = 1e-6,
    max_iter: int = 200,
) -> dict[str, float]:
    """PageRank of every node; see ``compute_pagerank`` for the graph model and ``tol``."""
    return compute_pagerank(nodes, edges, damping, tol, max_iter).scores
