"""The index and search baseline: SQLite FTS5 over the same segmented text.

It gets the words from the same segmenter as Tansuo, ranks with FTS5's bm25() under
the same field weights, and searches the way SearchService does (every word
required; if nothing matches, any word or its search-mode parts), so that the ratios
measure the engines and not two different ideas of a word.

It is simpler than the product in ways that favour it: it keeps no raw text for
display (snippets are cut from the segmented text, spaces and all), no link fields
and no phrase boost.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.common.analysis import analyze_as_text, concat_token_texts
from services.common.analysis.stop_words import STOP_WORDS
from services.common.analysis.words import segment, subwords
from services.common.domain.messages import PageEvent

# unicode61 would split "apt-get" and "c++" at the punctuation; the segmenter already
# decided what a word is, so only spaces may separate tokens here.
_SCHEMA = (
    "CREATE VIRTUAL TABLE docs USING fts5(url UNINDEXED, title_raw UNINDEXED, title, headings, body, subwords, "
    "tokenize = \"unicode61 remove_diacritics 0 tokenchars '-._#+'\")"
)
# bm25() takes one weight per column, UNINDEXED ones included; these are Settings'
# defaults for title, headings, body and sub-words.
_BM25 = "bm25(docs, 0, 0, 3.0, 2.0, 1.0, 0.3)"
_BODY_COLUMN = 4
_SNIPPET_TOKENS = 32


@dataclass(frozen=True)
class Fts5Row:
    """One page, segmented: what gets inserted."""

    rowid: int
    url: str
    title: str
    title_tokens: str
    headings_tokens: str
    body_tokens: str
    subword_tokens: str


def segmented(event: PageEvent) -> Fts5Row:
    """The same words and sub-words build_document makes, by the same function
    (``analyze_as_text``, which makes the bigrams in the same pass; FTS5 leaves them out)."""
    title = analyze_as_text(event.title)
    headings = analyze_as_text("\n".join(h for h in event.headings if h))
    body = analyze_as_text(event.body)
    return Fts5Row(
        rowid=rowid_of(event.url),
        url=event.url,
        title=event.title,
        title_tokens=title.words,
        headings_tokens=headings.words,
        body_tokens=body.words,
        subword_tokens=concat_token_texts(title.subwords, headings.subwords, body.subwords),
    )


def rowid_of(url: str) -> int:
    # A stable id per URL makes an upsert a delete and an insert by rowid, as tantivy
    # deletes by the url term; an UNINDEXED url column could only be found by a scan.
    return int(hashlib.sha1(url.encode("utf-8")).hexdigest()[:15], 16)


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


class Fts5Index:
    """One FTS5 table in a database file, with SQLite's default (durable) settings."""

    def __init__(self, path: Path) -> None:
        self._conn = sqlite3.connect(path)
        if not self._conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'docs'").fetchone():
            self._conn.execute(_SCHEMA)
            self._conn.commit()

    def upsert(self, rows: Sequence[Fts5Row]) -> None:
        self._conn.executemany("DELETE FROM docs WHERE rowid = ?", [(r.rowid,) for r in rows])
        self._conn.executemany(
            "INSERT INTO docs (rowid, url, title_raw, title, headings, body, subwords) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(r.rowid, r.url, r.title, r.title_tokens, r.headings_tokens, r.body_tokens, r.subword_tokens)
             for r in rows],
        )

    def commit(self) -> None:
        self._conn.commit()

    def close(self) -> None:
        self._conn.close()

    def count(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM docs").fetchone()[0])

    def search(self, q: str, size: int = 10) -> dict[str, Any]:
        """Top ``size`` by bm25 with a snippet, and the total; same fallback as SearchService."""
        words = segment(q)
        terms = tuple(w for w in dict.fromkeys(words) if w not in STOP_WORDS) or tuple(dict.fromkeys(words))
        if not terms:
            return {"total": 0, "results": []}
        total, results = self._match(" ".join(_quoted(t) for t in terms), size)
        if total == 0:
            extras = tuple(w for w in dict.fromkeys(subwords(q)) if w not in STOP_WORDS and w not in terms)
            if len(terms) > 1 or extras:
                total, results = self._match(" OR ".join(_quoted(t) for t in terms + extras), size)
        return {"total": total, "results": results}

    def _match(self, expression: str, size: int) -> tuple[int, list[dict[str, Any]]]:
        # The total is a second query, as the product's API also returns one.
        total = int(self._conn.execute("SELECT count(*) FROM docs WHERE docs MATCH ?", (expression,)).fetchone()[0])
        if total == 0:
            return 0, []
        rows = self._conn.execute(
            f"SELECT url, title_raw, snippet(docs, {_BODY_COLUMN}, '<em>', '</em>', '…', {_SNIPPET_TOKENS}), "
            f"{_BM25} AS score FROM docs WHERE docs MATCH ? ORDER BY score LIMIT ?",
            (expression, size),
        ).fetchall()
        # bm25() is lower-is-better; flip it so that scores read like the product's.
        return total, [{"url": u, "title": t, "snippet": s, "score": -score} for u, t, s, score in rows]
