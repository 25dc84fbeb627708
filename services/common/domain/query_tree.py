"""A backend-neutral query tree: what to match and how to score it, decided once.

The search service builds one tree per request; each index adapter only translates
its three node kinds into the backend's own queries (tantivy's BooleanQuery,
TermQuery and PhraseQuery; Elasticsearch's ``bool``, ``term`` and ``match_phrase``).
Both backends score the kinds alike (BM25 per term, phrase frequency × summed idf per
phrase, sums in a boolean, boosts as factors), so the query model lives in one place
and the backend-parity tests hold the adapters to it.

Semantics follow Elasticsearch's ``bool`` query, with ``minimum_should_match`` always
explicit: a document matches when it matches every ``must`` and ``filter`` clause, no
``must_not`` clause, and at least ``minimum_should_match`` of the ``should`` clauses.
Its score is the sum of its ``must`` and matching ``should`` scores, times ``boost``;
``filter`` clauses never score.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    """One token in one field."""

    field: str
    value: str
    boost: float = 1.0


@dataclass(frozen=True)
class Phrase:
    """Tokens at consecutive positions of one field; one token is a plain term. With
    ``prefix``, the last token matches any token it begins (for suggestions)."""

    field: str
    values: tuple[str, ...]
    boost: float = 1.0
    prefix: bool = False


@dataclass(frozen=True)
class Bool:
    must: tuple[Node, ...] = ()
    should: tuple[Node, ...] = ()
    must_not: tuple[Node, ...] = ()
    filter: tuple[Node, ...] = ()
    minimum_should_match: int = 0
    boost: float = 1.0


Node = Term | Phrase | Bool


def can_match(node: Node) -> bool:
    """False for a tree that matches nothing whatever the index holds (no positive
    clause at all), which adapters answer with no hits instead of a query."""
    if isinstance(node, Term):
        return bool(node.value)
    if isinstance(node, Phrase):
        return bool(node.values) and all(node.values)
    required = node.must + node.filter
    if not all(can_match(n) for n in required):
        return False
    matchable = sum(1 for n in node.should if can_match(n))
    if matchable < node.minimum_should_match:
        return False
    return bool(required) or matchable > 0
