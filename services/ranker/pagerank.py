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
    """PageRank by URL, plus how the iteration went; see ``pagerank_of_ids``."""
    index: dict[str, int] = {}
    for node in nodes:
        index.setdefault(node, len(index))
    rows: list[int] = []
    cols: list[int] = []
    for src, dst in edges:
        i, j = index.get(src), index.get(dst)
        if i is not None and j is not None:
            rows.append(i)
            cols.append(j)
    ranked = pagerank_of_ids(len(index), np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64),
                             damping, tol, max_iter)  # fmt: skip
    scores = dict(zip(index, ranked.scores.tolist(), strict=True))
    return PageRankResult(scores, ranked.iterations, ranked.converged, ranked.edges)


@dataclass(frozen=True)
class IdRankResult:
    scores: np.ndarray  # by node position; non-negative, sums to 1
    iterations: int
    converged: bool
    edges: int  # distinct edges, self-loops included


def pagerank_of_ids(
    n: int, src: np.ndarray, dst: np.ndarray, damping: float = 0.85, tol: float = 1e-6, max_iter: int = 200
) -> IdRankResult:
    """PageRank of nodes ``0 … n-1`` over the edges ``src[k] → dst[k]`` (duplicates allowed).

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
    if n == 0:
        return IdRankResult(np.empty(0), 0, True, 0)
    inbound = inbound_matrix(n, src, dst)
    out_degree = np.bincount(inbound.indices, minlength=n)
    x, iterations, converged = _iterate(inbound, out_degree, damping, tol, max_iter)
    return IdRankResult(x, iterations, converged, int(inbound.nnz))


def inbound_matrix(n: int, src: np.ndarray, dst: np.ndarray) -> sp.csr_array:
    """The adjacency matrix transposed (row = target, column = source), each distinct
    edge once: a DiGraph keeps one edge however often a page links a target.

    Built straight in CSR from the id arrays (scipy's COO → CSR is a counting sort), so
    the graph costs its ids and 12 bytes an edge, never a Python object per edge."""
    index_type = np.int32 if n < 2**31 and len(src) < 2**31 else np.int64
    ones = np.ones(len(src), dtype=np.float64)
    matrix = sp.coo_array((ones, (dst.astype(index_type, copy=False), src.astype(index_type, copy=False))),
                          shape=(n, n)).tocsr()  # fmt: skip
    matrix.sum_duplicates()
    matrix.data[:] = 1.0  # duplicates were summed; a DiGraph keeps one edge
    return matrix


def _iterate(
    inbound: sp.csr_array, out_degree: np.ndarray, damping: float, tol: float, max_iter: int
) -> tuple[np.ndarray, int, bool]:
    n = len(out_degree)
    dangling = out_degree == 0
    inv_degree = np.zeros(n)
    inv_degree[~dangling] = 1.0 / out_degree[~dangling]
    threshold = tol * (1.0 - damping) / damping
    teleport = (1.0 - damping) / n
    x = np.full(n, 1.0 / n)
    converged = False
    iterations = 0
    while iterations < max_iter and not converged:
        iterations += 1
        previous = x
        # Each source's rank split over its outlinks, summed per target: one CSR mat-vec.
        x = damping * (inbound @ (x * inv_degree)) + (damping * x[dangling].sum() / n + teleport)
        converged = bool(np.abs(x - previous).sum() < threshold)
    if not converged:
        log.warning("PageRank did not converge in %d iterations (%d nodes); using the last iterate", max_iter, n)
    return x / x.sum(), iterations, converged  # undo float drift: the scores sum to 1 (to rounding)


def pagerank(
    nodes: Sequence[str],
    edges: Iterable[tuple[str, str]],
    damping: float = 0.85,
    tol: float = 1e-6,
    max_iter: int = 200,
) -> dict[str, float]:
    """PageRank of every node; see ``compute_pagerank`` for the graph model and ``tol``."""
    return compute_pagerank(nodes, edges, damping, tol, max_iter).scores
