"""The search use case, shared by the JSON API, the web UI and the CLI.

It parses the user's query (``query_syntax``), plans the backend-neutral query tree
(``query_plan``), runs it (every clause first; if that finds nothing, any clause) and
shapes the answer. Input is validated here, once, so every entry point rejects the
same things the same way.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import re
import time
from typing import Any

from services.common.analysis import dictionary_version
from services.common.analysis.han import HAN
from services.common.config import Settings
from services.common.domain.query_tree import can_match
from services.common.domain.search_types import SearchHits, SearchQuery
from services.common.errors import BadInput
from services.common.ports import SearchIndex
from services.common.runtime.metrics import (
    SEARCH_CACHE_HITS,
    SEARCH_DURATION,
    SEARCH_REQUESTS,
)
from services.search.document_results import display_title, document_fields
from services.search.pinyin_query import PinyinReader
from services.search.query_plan import Plan, QueryPlanner
from services.search.query_syntax import (
    ParsedQuery,
    Part,
    QuerySyntaxError,
    clean_site,
    parse,
)
from services.search.reading_mix import MIX_HEAD, mix_own_rankings, own_in_query_order
from services.search.result_cache import ResultCache
from services.search.result_grouping import Page, Result, fold_near_duplicates, paginate
from services.search.searched_runs import SearchedRuns
from services.search.snippets import snippet_at, title_html
from services.search.spelling import Correction, SpellingCorrector
from services.search.term_stats_cache import CachedTermStats

MAX_QUERY_CHARS = 500
SORTS = ("relevance", "date")
# Deep paging costs the index a top-(offset+size) collection per request; ten
# thousand hits is also Elasticsearch's default max_result_window.
MAX_RESULT_WINDOW = 10_000


class BadQuery(BadInput):
    """The caller's parameters are invalid; the message says which and why, in a
    form fit to show to the user."""


def _as_int(name: str, value: int | str) -> int:
    if isinstance(value, bool):
        raise BadQuery(f"{name} must be an integer")
    if isinstance(value, int):
        return value
    text = str(value).strip()
    try:
        if "_" in text:  # int() reads 1_0 as 10: a typo, not a number
            raise ValueError(text)
        return int(text)
    except ValueError:
        raise BadQuery(f"{name} must be an integer, not {text[:20]!r}") from None


AS_TYPED_VALUES = {"1": True, "true": True, "0": False, "false": False}


def _as_flag(value: bool | str | None) -> bool:
    """``as_typed`` as the API documents it (1, true, 0, false; absent is false): any
    other value is refused, as for ``sort``, so a client's typo is not read as "no"."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if value not in AS_TYPED_VALUES:
        raise BadQuery(f"as_typed must be one of 1, 0, true, false, not {value[:20]!r}")
    return AS_TYPED_VALUES[value]


class SearchService:
    """Validate, segment, search, then build snippets for one page of results."""

    def __init__(self, cfg: Settings, index: SearchIndex, searched: SearchedRuns | None = None) -> None:
        """``searched``: what users search (``searched_runs``), for the did-you-mean;
        without it, corrections are weighed by the pages alone."""
        self._cfg = cfg
        self._searched = searched
        self._index = index
        # Words repeat across queries more than queries do: more entries than answers.
        term_stats = CachedTermStats(
            lambda terms: self._index.term_stats(terms),
            lambda: self._index.view_version(),
            16 * cfg.search_cache_entries,
            cfg.search_cache_ttl_s,
        )
        self._term_stats = term_stats
        self._planner = QueryPlanner(cfg, term_stats)
        self._corrector = SpellingCorrector(term_stats, self._phrase_count, searched.share if searched else None)
        self._pinyin = PinyinReader(term_stats, self._phrase_count)
        self._cache = ResultCache(cfg.search_cache_entries, cfg.search_cache_ttl_s)

    def validate(self, q: str, page: int | str, size: int | str, site: str) -> tuple[str, int, int, str]:
        """Clean parameters, or BadQuery. Strings are accepted so that the HTTP and
        command-line layers can pass raw input through."""
        q = (q or "").strip()
        if not q:
            raise BadQuery("q must not be empty")
        if len(q) > MAX_QUERY_CHARS:
            raise BadQuery(f"q is too long: at most {MAX_QUERY_CHARS} characters")
        page_n = _as_int("page", page)
        size_n = _as_int("size", size)
        if size_n < 1 or size_n > self._cfg.search_max_page_size:
            raise BadQuery(f"size must be between 1 and {self._cfg.search_max_page_size}")
        if page_n < 1:
            raise BadQuery("page must be 1 or more")
        # A page past the first MAX_RESULT_WINDOW results is empty, as a page past the
        # last one is: refusing it broke the contract (page has no maximum of its own).
        site = (site or "").strip().lower()
        if site:
            try:
                site = clean_site(site)
            except QuerySyntaxError as exc:
                raise BadQuery(str(exc)) from None
        return q, page_n, size_n, site

    def search(
        self,
        q: str,
        page: int | str = 1,
        size: int | str = 10,
        site: str = "",
        sort: str = "relevance",
        as_typed: bool | str | None = False,
    ) -> dict[str, Any]:
        """One page of results as a JSON-ready dict; ``sort`` "date" puts the newest
        pages first (the same matches, in date order, without the per-site limit).

        ``snippet`` and ``title_html`` are HTML: page text escaped, matches in ``<em>``.
        ``matched_all`` is False when no page had every word and the results are
        pages with any of them. ``did_you_mean`` is a correction of the query's typos
        (``{"query": ..., "shown": bool}``; shown: the results are the corrected
        query's, since it found much more) or None; ``as_typed`` asks for none. A query
        of initials read as several words adds ``readings``, those words, most held first.
        """
        started = time.perf_counter()
        try:
            result = self._search(started, q, page, size, site, sort, _as_flag(as_typed))
        except BadQuery:
            SEARCH_REQUESTS.labels(outcome="bad_request").inc()
            raise
        except Exception:
            SEARCH_REQUESTS.labels(outcome="error").inc()
            # Failures count in the latency too: a backend timing out is slow, not absent.
            SEARCH_DURATION.observe(time.perf_counter() - started)
            raise
        SEARCH_REQUESTS.labels(outcome="ok").inc()
        SEARCH_DURATION.observe(time.perf_counter() - started)
        return result

    def parse(self, q: str, site: str = "") -> ParsedQuery:
        """The parsed query, the ``site`` parameter OR'ed with its ``site:`` terms."""
        try:
            parsed = parse(q)
        except QuerySyntaxError as exc:
            raise BadQuery(str(exc)) from None
        if site and site not in parsed.sites:
            parsed = dataclasses.replace(parsed, sites=parsed.sites + (site,))
        return parsed

    def _run(self, plan: Plan, offset: int, limit: int, sort: str = "relevance") -> SearchHits:
        if not can_match(plan.tree):
            return SearchHits(total=0, hits=[])  # e.g. only punctuation: nothing to ask
        return self._index.search(SearchQuery(tree=plan.tree, offset=offset, limit=limit, sort=sort))

    def _search(
        self, started: float, q: str, page: int | str, size: int | str, site: str, sort: str, as_typed: bool
    ) -> dict[str, Any]:
        q, page_n, size_n, site = self.validate(q, page, size, site)
        sort = (sort or "relevance").strip()
        if sort not in SORTS:
            raise BadQuery(f"sort must be one of {', '.join(SORTS)}, not {sort[:20]!r}")
        # A new dictionary (synonyms, stop words, user words) plans the same query otherwise.
        key = (q, page_n, size_n, site, sort, as_typed, dictionary_version.current())
        # An answer holds for one view of the index and, its did-you-mean, of the search log.
        index_view = self._index.view_version()
        version = (index_view, self._searched.version) if self._searched and index_view is not None else index_view
        cached = self._cache.get(key, version)
        if cached is not None:
            SEARCH_CACHE_HITS.inc()
            return {**cached, "took_ms": round((time.perf_counter() - started) * 1000, 1)}
        answer = self._answer(started, q, page_n, size_n, site, sort, as_typed)
        self._cache.put(key, version, answer)
        return answer

    def _answer(
        self, started: float, q: str, page_n: int, size_n: int, site: str, sort: str, as_typed: bool
    ) -> dict[str, Any]:
        parsed = self.parse(q, site)
        # The window holds the pages before this one too: folding and site diversity
        # reorder across page boundaries, and each page must follow from the same order.
        margin = max(size_n, 20)
        window = min(MAX_RESULT_WINDOW, page_n * size_n + margin)
        plan, found, exact = self._find(parsed, window, sort)
        unquoted = False
        if found.total == 0 and any(p.quoted for p in parsed.parts):
            # The phrases in quotes are nowhere, even across a break: what do the same
            # words find without quotes? The answer says so (``unquoted``).
            plan, found, exact = self._find(without_quotes(parsed), window, sort)
            unquoted = found.total > 0
        did_you_mean = None
        if not as_typed and not unquoted:
            # Everywhere a bigram of the query is on no page; anywhere in a query that
            # finds few pages, holds a word no page does, or is one short word few pages
            # hold verbatim (建康 typed for 健康: the correction must be held by many
            # times the pages). A common word is left alone: most one-word queries are,
            # and trying each character's candidates is the costliest part of a correction.
            thorough = exact < self._cfg.search_typo_few or plan.unknown
            rare = int(self._cfg.search_typo_rare_share * self._term_stats([])[0]) if _one_short_run(q) else 0
            corrected = self._corrected(q, site, window, exact, thorough, rare, sort, size_n)
            if corrected is not None:
                did_you_mean, instead = corrected
                if instead is not None:
                    parsed, (plan, found, exact) = instead
        # Every hit in hand: every page is made, and counted (copies fold into one
        # result, so there may be fewer than total / size). Pages come out the same
        # however many are made (paginate), so page_n is the one asked for either way.
        in_hand = len(found.hits) >= found.total
        # By date, strictly newest first: no site is held back for diversity.
        per_site = 0 if sort == "date" else self._cfg.search_results_per_site
        pages = paginate(fold_near_duplicates(found.hits), size_n, per_site,
                         MAX_RESULT_WINDOW // size_n if in_hand else page_n, margin)  # fmt: skip
        shown = pages[page_n - 1] if len(pages) >= page_n else Page([], set())
        return {
            "query": q,
            "total": found.total,
            "took_ms": round((time.perf_counter() - started) * 1000, 1),
            "page": page_n,
            "size": size_n,
            "pages": len(pages) if in_hand else min(math.ceil(found.total / size_n), MAX_RESULT_WINDOW // size_n),
            "site": site,
            "sort": sort,
            "sites": list(parsed.sites),
            "terms": list(plan.highlight),
            "matched_all": plan.minimum >= plan.clauses and not unquoted,
            "unquoted": unquoted,
            "did_you_mean": did_you_mean,
            "notes": list(parsed.notes),
            "more_from_sites": sorted(shown.crowded),
            "results": [self._result(r, plan.highlight) for r in shown.results],
        }

    def _pinyin_like(self, q: str) -> bool:
        """Whether the query may be pinyin: letters only, no Chinese, and each of its
        words held by fewer than ``search_typo_rare_share`` of the pages (excel,
        linux, vlookup are searched as typed)."""
        words = q.lower().split()
        if not words or not all(w.isascii() and w.isalpha() for w in words):
            return False
        docs, dfs = self._term_stats([(f, w) for w in words for f in ("title_tokens", "body_tokens")])
        return max(dfs) < max(1, self._cfg.search_typo_rare_share * docs)

    def _phrase_count(self, grams: tuple[str, ...], titles_only: bool) -> int:
        """How many pages hold these bigrams in a row, in title or body (or in titles)."""
        tree = self._planner.exact_grams(grams, titles_only)
        return self._index.search(SearchQuery(tree=tree, offset=0, limit=1)).total

    def _corrected(
        self, q: str, site: str, window: int, exact: int, thorough: bool, rare: int, sort: str, size: int
    ) -> tuple[dict[str, Any], tuple[ParsedQuery, tuple[Plan, SearchHits, int]] | None] | None:
        """(the ``did_you_mean`` of the answer, the corrected query's search when its
        results are to be shown instead), or None when nothing is corrected.

        The corrected query's results are shown when its exact plan finds pages and
        the query as typed none, or at least ``search_typo_few`` and twice as many
        (Google's "Showing results for"), or when the correction is sure (a long run no
        page holds made one that pages hold verbatim: a line copied with a slip, whose
        words left as typed still find many pages); else it is only offered. A query of
        initials read as several words (jj: 经济 OR 解决 OR …) shares its first page
        among them (``reading_mix``)."""
        reading = self._pinyin.reading(q) if self._pinyin_like(q) else None
        if reading is not None:
            correction: Correction | None = Correction(reading.query, ((q, reading.query),))
        else:
            correction = self._corrector.correct(q, thorough, rare)
        if correction is None:
            return None
        try:
            parsed = self.parse(correction.query, site)
        except BadQuery:
            return None
        several = reading is not None and len(reading.words) > 1
        mixed = several and sort != "date"
        found = self._find(parsed, max(window, MIX_HEAD) if mixed else window, sort)
        if mixed and reading is not None:
            # Each reading's places on the first page go to its own best pages, those its
            # link on the correction line shows first, that hold it as written (a word's
            # search may rank first a page found through a synonym).
            plan, hits, count = found
            own = [self._find(self.parse(word, site), size, sort)[1].hits[:size] for word in reading.words]
            own = own_in_query_order(own, hits.hits, reading.words)
            found = plan, SearchHits(hits.total, mix_own_rankings(hits.hits, own, reading.pages, size)), count
        better = found[2] > 0 and (
            exact == 0 or correction.sure or found[2] >= max(self._cfg.search_typo_few, 2 * exact)
        )
        answer: dict[str, Any] = {"query": correction.query, "shown": better}
        if several and reading is not None:
            # The OR of the readings, searched as typed, ranks by score alone: the line
            # names each word, for a link that searches it alone (its pages first).
            answer["readings"] = list(reading.words)
        return answer, ((parsed, found) if better else None)

    def _find(self, parsed: ParsedQuery, window: int, sort: str) -> tuple[Plan, SearchHits, int]:
        """The plan that answered, its hits, and how many pages hold the query as typed:
        every clause first; if no page holds them all, any clause; if few pages hold
        the query as typed, the forgiving plan too, whose other pages come after the
        exact ones."""
        plan = self._planner.plan(parsed)
        exact = self._run(plan, 0, window, sort)
        quoted = any(p.quoted for p in parsed.parts)
        few = exact.total == 0 or (exact.total < self._cfg.search_typo_few and plan.unknown)
        if (few and plan.forgives) or (exact.total == 0 and quoted):
            # No page, or few and the query has a word no page holds: a page holding
            # most of its bigrams may be what was meant (one wrong character), and a
            # quoted phrase none holds may have been copied across a break of the page's
            # text. If none holds every clause, any of them (or a word's parts) will do.
            none = exact.total == 0
            first = exact
            if none and quoted:
                # Pages holding the whole phrase across a break come before those
                # holding most of its bigrams or its inner part alone.
                first = self._run(self._planner.plan(parsed, across=True), 0, window, sort)
            forgiving = self._planner.plan(parsed, any_clause=none, forgiving=True, across=none, inner=none)
            return forgiving, after_exact(first, self._run(forgiving, 0, window, sort)), exact.total
        if exact.total == 0 and plan.widens:
            # No page holds every clause: any of them (or a word's parts) will do, best first.
            plan = self._planner.plan(parsed, any_clause=True)
            return plan, self._run(plan, 0, window, sort), 0
        return plan, exact, exact.total

    @staticmethod
    def _result(result: Result, highlight: tuple[str, ...]) -> dict[str, Any]:
        hit = result.hit
        title = display_title(hit)
        snippet, at = snippet_at(hit.body or hit.headings, highlight)
        return {
            "url": hit.url,
            "title": title,
            "title_html": title_html(title or hit.url, highlight),
            "snippet": snippet,
            "score": round(hit.score, 6),
            "pagerank": hit.pagerank,
            "site": hit.site,
            **_dates(hit.modified_at, hit.fetched_at),
            "similar": [{"url": h.url, "title": display_title(h), "site": h.site} for h in result.similar],
            **document_fields(hit, at if hit.body else -1),
        }


def _iso(at: float) -> str | None:
    if at <= 0:
        return None
    return datetime.datetime.fromtimestamp(at, datetime.UTC).isoformat(timespec="seconds")


def _dates(modified_at: float, fetched_at: float) -> dict[str, Any]:
    """A result's date (its Last-Modified, else when it was fetched) and its fetch time,
    as ISO 8601 in UTC; None where the index does not know (pages indexed before)."""
    date = modified_at or fetched_at
    source = "last_modified" if modified_at and abs(modified_at - fetched_at) >= 1.0 else "fetched"
    return {"date": _iso(date), "date_source": source if date else None, "fetched_at": _iso(fetched_at)}


_SHORT_RUN = re.compile(f"[{HAN}]{{2,4}}")


def _one_short_run(q: str) -> bool:
    """Whether the query is one run of two to four Han characters and nothing else."""
    return _SHORT_RUN.fullmatch(q.strip()) is not None


def after_exact(exact: SearchHits, forgiving: SearchHits) -> SearchHits:
    """The pages of the exact query first, in its order, then the forgiving query's
    others: a page that holds the query as typed outranks one that holds most of it."""
    if not exact.hits:
        return forgiving
    seen = {h.url for h in exact.hits}
    hits = list(exact.hits) + [h for h in forgiving.hits if h.url not in seen]
    return SearchHits(total=max(forgiving.total, exact.total), hits=hits[: max(len(forgiving.hits), len(exact.hits))])


def without_quotes(parsed: ParsedQuery) -> ParsedQuery:
    """``parsed`` with every wanted phrase in quotes taken as free text."""
    groups = tuple(tuple(Part(p.text) for p in group) for group in parsed.groups)
    return dataclasses.replace(parsed, groups=groups)
