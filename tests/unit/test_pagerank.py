"""PageRank must equal networkx's on the same DiGraph, whatever the graph's shape."""

from __future__ import annotations

import random

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.ranker.pagerank import compute_pagerank, pagerank


def reference(nodes: list[str], edges: list[tuple[str, str]]) -> dict[str, float]:
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    known = set(nodes)
    graph.add_edges_from((s, t) for s, t in edges if s in known and t in known)
    return nx.pagerank(graph, alpha=0.85, tol=1e-12, max_iter=10_000)


def assert_matches_networkx(nodes: list[str], edges: list[tuple[str, str]]) -> None:
    ours = pagerank(nodes, edges)
    theirs = reference(nodes, edges)
    assert set(ours) == set(theirs)
    worst = max((abs(ours[n] - theirs[n]) for n in theirs), default=0.0)
    assert worst < 1e-6


def random_graph(seed: int, n: int, m: int) -> tuple[list[str], list[tuple[str, str]]]:
    rng = random.Random(seed)
    nodes = [f"https://example.cn/{i}" for i in range(n)]
    edges = [(rng.choice(nodes), rng.choice(nodes)) for _ in range(m)]
    return nodes, edges


def test_an_empty_graph_has_no_scores() -> None:
    assert pagerank([], []) == {}
    assert pagerank([], [("a", "b")]) == {}


def test_a_single_node_holds_all_the_rank() -> None:
    assert pagerank(["a"], []) == {"a": pytest.approx(1.0)}
    assert_matches_networkx(["a"], [("a", "a")])


def test_a_two_cycle_splits_the_rank_evenly() -> None:
    scores = pagerank(["a", "b"], [("a", "b"), ("b", "a")])
    assert scores == {"a": pytest.approx(0.5), "b": pytest.approx(0.5)}


def test_a_page_with_more_inlinks_ranks_higher() -> None:
    scores = pagerank(["hub", "a", "b", "c"], [("a", "hub"), ("b", "hub"), ("c", "hub"), ("hub", "a")])
    assert max(scores, key=scores.__getitem__) == "hub"


@pytest.mark.parametrize(
    "nodes, edges",
    [
        (["a", "b", "c"], [("a", "b"), ("b", "c")]),  # c dangles
        (["a", "b", "c", "d"], [("a", "b"), ("b", "a"), ("c", "d"), ("d", "c")]),  # two parts
        (["a", "b", "c"], [("a", "a"), ("a", "b"), ("b", "b"), ("c", "a")]),  # self-loops
        (["a", "b", "c"], [("a", "b")] * 5 + [("a", "c"), ("c", "a")]),  # duplicates count once
        (["a", "b"], [("a", "b"), ("a", "elsewhere"), ("nowhere", "b")]),  # unknown ends dropped
        (["a", "b", "c"], []),  # nothing but dangling nodes
        (["a", "b", "a", "c"], [("a", "b"), ("b", "c")]),  # a node listed twice
    ],
    ids=["dangling", "disconnected", "self-loops", "duplicates", "unknown", "no-edges", "dup-node"],
)
def test_small_graphs_match_networkx(nodes: list[str], edges: list[tuple[str, str]]) -> None:
    assert_matches_networkx(list(dict.fromkeys(nodes)), edges)
    assert pagerank(nodes, edges) == pagerank(list(dict.fromkeys(nodes)), edges)


@pytest.mark.parametrize("seed", range(8))
def test_seeded_random_graphs_match_networkx(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 300)
    # Sparse graphs have many dangling nodes; dense ones many duplicates and self-loops.
    nodes, edges = random_graph(seed, n, rng.choice([n // 2, 2 * n, 10 * n]))
    assert_matches_networkx(nodes, edges)


def test_a_five_thousand_node_graph_matches_networkx() -> None:
    nodes, edges = random_graph(2024, 5000, 40_000)
    dangling = set(nodes[:500])  # make a tenth of the pages link nowhere
    edges = [(s, t) for s, t in edges if s not in dangling]
    result = compute_pagerank(nodes, edges)
    assert result.converged
    theirs = reference(nodes, edges)
    assert max(abs(result.scores[n] - theirs[n]) for n in nodes) < 1e-6


def test_not_converging_returns_the_last_iterate_and_says_so() -> None:
    nodes, edges = random_graph(7, 50, 100)
    result = compute_pagerank(nodes, edges, max_iter=2)
    assert not result.converged
    assert result.iterations == 2
    assert sum(result.scores.values()) == pytest.approx(1.0)


def test_the_result_counts_distinct_edges_between_known_nodes() -> None:
    result = compute_pagerank(["a", "b"], [("a", "b"), ("a", "b"), ("b", "b"), ("b", "zzz")])
    assert result.edges == 2


graphs = st.integers(min_value=1, max_value=25).flatmap(
    lambda n: st.tuples(
        st.just([str(i) for i in range(n)]),
        st.lists(st.tuples(st.integers(0, n + 1), st.integers(0, n + 1)), max_size=80).map(
            lambda pairs: [(str(a), str(b)) for a, b in pairs]  # n and n+1 are unknown nodes
        ),
    )
)


@settings(max_examples=150, deadline=None)
@given(graphs)
def test_any_graph_matches_networkx(graph: tuple[list[str], list[tuple[str, str]]]) -> None:
    assert_matches_networkx(*graph)


@settings(max_examples=150, deadline=None)
@given(graphs, st.floats(min_value=0.05, max_value=0.95))
def test_scores_are_non_negative_and_sum_to_one(graph: tuple[list[str], list[tuple[str, str]]], damping: float) -> None:
    scores = pagerank(*graph, damping=damping)
    assert all(score >= 0 for score in scores.values())
    assert sum(scores.values()) == pytest.approx(1.0, abs=1e-9)
