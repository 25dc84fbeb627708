"""The ranking functions of the systems Tansuo learned from, over the same tokens.

- ``bm25``: Okapi BM25 (k1 2.0, b 0.75, Lucene's idf) over one bag of title,
  headings and body tokens.
- ``tfidf``: cosine of log-tf·idf vectors, ``(1 + ln tf) · ln(N / df)``.
- ``bm25-grams``: the same BM25 over character bigrams of folded text (Lucene's CJK
  bigram analyser with traditional → simplified folding): the plain set-up a search
  of Chinese text starts from, and the one a typo (one wrong character leaves most
  bigrams intact) or a run-together query is measured against.
- ``pr-hits``: PageRank + 0.5·(title hits) + 0.1·(body hits), where a hit is one
  occurrence of a query word; PageRank is the index's scale-free rank (PR × N, 1.0 for
  an average page), since PR itself sums to 1 and would never count.

Each returns the documents holding at least one query token, best first, ties broken
by URL so runs repeat exactly. Matrices are scipy sparse, documents × terms in CSC
form, so one query costs a slice of its few columns, not a pass over the corpus.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy import sparse

from services.evaluation.corpus import CorpusDoc
from services.evaluation.tokens import bigrams, tokenize

BM25_K1 = 2.0
BM25_B = 0.75
PR_TITLE_WEIGHT = 0.5
PR_BODY_WEIGHT = 0.1
BASELINES = ("bm25", "bm25-grams", "tfidf", "pr-hits")

Ranker = Callable[[str, int], list[str]]


class BaselineRankers:
    """All three baselines over one corpus, built once."""

    def __init__(self, docs: Sequence[CorpusDoc]) -> None:
        self._urls = np.array([d.url for d in docs], dtype=object)
        self._order = np.argsort(self._urls)  # tie-break rank of each doc: URL order
        self._tie = np.empty(len(docs), dtype=np.int64)
        self._tie[self._order] = np.arange(len(docs))
        self._vocab: dict[str, int] = {}
        title = self._counts([d.title_tokens for d in docs])
        body = self._counts([d.body_tokens for d in docs])
        shape = (len(docs), len(self._vocab))
        self._title = _resize(title, shape)
        self._body = _resize(body, shape)
        both = (self._title + self._body).tocsc()
        self._bm25 = _bm25_weights(both)
        self._tfidf, self._idf = _tfidf_weights(both)
        self._rank = np.array([d.rank for d in docs], dtype=np.float64)
        self._grams = _GramBm25(docs)

    def _counts(self, bags: Sequence[Sequence[str]]) -> sparse.csc_matrix:
        rows, cols = [], []
        for i, bag in enumerate(bags):
            for tok in bag:
                rows.append(i)
                cols.append(self._vocab.setdefault(tok, len(self._vocab)))
        data = np.ones(len(rows), dtype=np.float64)
        # Duplicate (row, col) pairs sum on conversion: term counts.
        return sparse.coo_matrix((data, (rows, cols)), shape=(len(bags), max(len(self._vocab), 1))).tocsc()

    def rankers(self) -> dict[str, Ranker]:
        return {"bm25": self.bm25, "bm25-grams": self.bm25_grams, "tfidf": self.tfidf, "pr-hits": self.pr_hits}

    def bm25_grams(self, query: str, k: int = 100) -> list[str]:
        """BM25 over character bigrams (``_GramBm25``)."""
        cols = [self._grams.vocab[t] for t in dict.fromkeys(bigrams(query)) if t in self._grams.vocab]
        if not cols:
            return []
        weights = self._grams.weights[:, cols]
        scores = np.asarray(weights.sum(axis=1)).ravel()
        mask = np.zeros(len(self._urls), dtype=bool)
        mask[weights.tocoo().row] = True
        return self._top(scores, mask, k)

    def _columns(self, query: str) -> list[int]:
        return [self._vocab[t] for t in dict.fromkeys(tokenize(query)) if t in self._vocab]

    def bm25(self, query: str, k: int = 100) -> list[str]:
        cols = self._columns(query)
        if not cols:
            return []
        scores = np.asarray(self._bm25[:, cols].sum(axis=1)).ravel()
        return self._top(scores, self._matched(cols), k)

    def tfidf(self, query: str, k: int = 100) -> list[str]:
        toks = [t for t in tokenize(query) if t in self._vocab]
        if not toks:
            return []
        counts: dict[int, int] = {}
        for t in toks:
            counts[self._vocab[t]] = counts.get(self._vocab[t], 0) + 1
        cols = list(counts)
        q = np.array([(1.0 + np.log(counts[c])) * self._idf[c] for c in cols])
        norm = np.linalg.norm(q)
        if norm > 0:
            q = q / norm
        scores = self._tfidf[:, cols] @ q
        return self._top(np.asarray(scores).ravel(), self._matched(cols), k)

    def pr_hits(self, query: str, k: int = 100) -> list[str]:
        cols = self._columns(query)
        if not cols:
            return []
        title_hits = np.asarray(self._title[:, cols].sum(axis=1)).ravel()
        body_hits = np.asarray(self._body[:, cols].sum(axis=1)).ravel()
        scores = self._rank + PR_TITLE_WEIGHT * title_hits + PR_BODY_WEIGHT * body_hits
        return self._top(scores, (title_hits + body_hits) > 0, k)

    def _matched(self, cols: list[int]) -> np.ndarray:
        mask = np.zeros(len(self._urls), dtype=bool)
        mask[self._bm25[:, cols].tocoo().row] = True
        return mask

    def _top(self, scores: np.ndarray, mask: np.ndarray, k: int) -> list[str]:
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            return []
        # Highest score first, then smallest URL.
        order = np.lexsort((self._tie[idx], -scores[idx]))[:k]
        return [str(u) for u in self._urls[idx[order]]]


class _GramBm25:
    """BM25 weights of every document's bigrams (title, headings and body in one bag)."""

    def __init__(self, docs: Sequence[CorpusDoc]) -> None:
        self.vocab: dict[str, int] = {}
        rows, cols = [], []
        for i, d in enumerate(docs):
            for tok in bigrams(d.title) + bigrams(d.body):
                rows.append(i)
                cols.append(self.vocab.setdefault(tok, len(self.vocab)))
        data = np.ones(len(rows), dtype=np.float64)
        shape = (len(docs), max(len(self.vocab), 1))
        self.weights = _bm25_weights(sparse.coo_matrix((data, (rows, cols)), shape=shape).tocsc())


def _resize(m: sparse.csc_matrix, shape: tuple[int, int]) -> sparse.csc_matrix:
    m = m.tocsc()
    m.resize(shape)
    return m


def _bm25_weights(tf: sparse.csc_matrix) -> sparse.csc_matrix:
    n_docs = tf.shape[0]
    dl = np.asarray(tf.sum(axis=1)).ravel()
    avgdl = dl.mean() if n_docs and dl.mean() > 0 else 1.0
    df = np.diff(tf.indptr)  # CSC: nonzeros per column = document frequency
    idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
    coo = tf.tocoo()
    norm = BM25_K1 * (1.0 - BM25_B + BM25_B * dl[coo.row] / avgdl)
    data = idf[coo.col] * coo.data * (BM25_K1 + 1.0) / (coo.data + norm)
    return sparse.csc_matrix((data, (coo.row, coo.col)), shape=tf.shape)


def _tfidf_weights(tf: sparse.csc_matrix) -> tuple[sparse.csc_matrix, np.ndarray]:
    n_docs = tf.shape[0]
    df = np.diff(tf.indptr)
    idf = np.log(n_docs / np.maximum(df, 1))
    coo = tf.tocoo()
    data = (1.0 + np.log(coo.data)) * idf[coo.col]
    w = sparse.csr_matrix((data, (coo.row, coo.col)), shape=tf.shape)
    norms = np.sqrt(np.asarray(w.multiply(w).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    w = sparse.diags(1.0 / norms) @ w
    return w.tocsc(), idf
