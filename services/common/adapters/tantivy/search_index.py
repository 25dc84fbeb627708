"""Embedded search index: tantivy in a local directory.

Text arrives already segmented (``IndexDoc.*_tokens``), so every indexed text
field uses tantivy's plain ``whitespace`` tokenizer and queries are built from
terms directly: no tokenizer has to be registered, and another process can open
the same directory read-only and search it.

tantivy cannot update a field in place, so keeping link fields across an upsert
and ``set_link_fields`` both read the stored document and write it again. Every
field is therefore stored, token fields included (the adapter cannot re-segment:
segmentation belongs to the indexer). The raw display texts are stored as bytes
fields because tantivy has no stored-but-not-indexed text field.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import shutil
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path

import tantivy
from tantivy import Occur, Query

from services.common.adapters import token_fields
from services.common.adapters.link_title import with_link_title
from services.common.adapters.tantivy import fold_keys
from services.common.adapters.tantivy.deferred_hit import DeferredHit
from services.common.adapters.tantivy.mmap_advice import RandomAccessAdvice
from services.common.adapters.tantivy.recent_documents import RecentDocuments
from services.common.adapters.tantivy.search_marker import SearchMarker
from services.common.adapters.tantivy.stored_hit_cache import StoredHitCache
from services.common.analysis import document_grams, link_page_grams
from services.common.config import Settings
from services.common.domain import minhash
from services.common.domain.documents import (
    DISPLAY_FIELDS,
    LINK_GRAMS,
    IndexDoc,
    LinkFields,
    MergeReport,
    index_doc_from,
)
from services.common.domain.query_tree import Node, Phrase, Term, can_match
from services.common.domain.search_types import SearchHit, SearchHits, SearchQuery
from services.common.errors import IndexUnavailable, IndexWriterBusy

log = logging.getLogger(__name__)

_GRAM_FIELDS = ("title_grams", "body_grams")
_TOKEN_FIELDS = (
    "title_tokens", "headings_tokens", "body_tokens", "anchors_tokens", "subword_tokens", *_GRAM_FIELDS,
)  # fmt: skip
# The indexer and the ranker each write a few times a second at most: one
# indexing thread keeps the second core free for crawling, and 64 MB of heap
# holds a few thousand pages before tantivy flushes a segment on its own.
_WRITER_HEAP_BYTES = 64_000_000
_WRITER_THREADS = 1
_MAX_SITES = 10_000
# Pages of one date read past a date-sorted page's end to order them by URL: beyond
# this many, a longer run of equal dates keeps the index's order.
_DATE_TIES = 10_000


class IndexLocked(IndexUnavailable, IndexWriterBusy):
    """Another process holds the index writer; it is free again once that one exits."""


def _schema(
    with_fold_keys: bool = True, with_own_text: bool = True, with_dates: bool = True, with_documents: bool = True,
    with_link_grams: bool = True,
) -> tantivy.Schema:
    """The index's fields. An index keeps the layout it was made with (``_LAYOUTS``):
    without a page of links' ``link_grams``, also without the document fields
    (``filetype``, ``doc_size``, ``doc_pages``), also without the page dates (``modified_at``, ``store_key``), also without ``own_text``
    (before it was stored), or without it and the fold keys (``fold_keys``)."""
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("url", stored=True, tokenizer_name="raw")
    sb.add_text_field("site", stored=True, tokenizer_name="raw", fast=True)
    for name in DISPLAY_FIELDS:
        sb.add_bytes_field(name, stored=True, indexed=False)
    for name in _TOKEN_FIELDS:
        # Phrase queries need positions; the sub-word field only ever gets term queries.
        option = "freq" if name == "subword_tokens" else "position"
        # Bigrams are not stored: three times the text, read back only to rewrite a
        # document, where _with_grams rebuilds them from the stored text instead.
        stored = name not in _GRAM_FIELDS
        sb.add_text_field(name, stored=stored, tokenizer_name="whitespace", index_option=option)
    sb.add_text_field("content_hash", stored=True, tokenizer_name="raw")
    sb.add_bytes_field("minhash", stored=True, indexed=False)
    sb.add_text_field("minhash_bands", stored=False, tokenizer_name="raw")
    sb.add_float_field("fetched_at", stored=True)
    sb.add_float_field("pagerank", stored=True, fast=True)
    sb.add_float_field("rank", stored=True, fast=True)
    if with_fold_keys:
        fold_keys.add_schema_fields(sb)
    if with_own_text:
        # A page of links is indexed by its own text, not the body it shows: its
        # bigrams are rebuilt from this (stored for such pages only), not from the body.
        sb.add_bytes_field("own_text", stored=True, indexed=False)
    if with_dates:
        # The page's date, a fast field so that sort by date reads no stored document;
        # the page store's key of its raw page, for the cached copy.
        sb.add_float_field("modified_at", stored=True, fast=True)
        sb.add_bytes_field("store_key", stored=True, indexed=False)
    if with_documents:
        # A document's format (the filetype: filter), size and pages, for its result.
        sb.add_text_field("filetype", stored=True, tokenizer_name="raw")
        sb.add_integer_field("doc_size", stored=True, indexed=False)
        sb.add_integer_field("doc_pages", stored=True, indexed=False)
    if with_link_grams:
        # A page of links' shown text, for quoted phrases only: not stored, rebuilt
        # from the stored body like the other bigram fields (``_with_grams``).
        sb.add_text_field(LINK_GRAMS, stored=False, tokenizer_name="whitespace", index_option="position")
    return sb.build()


# Every layout a Tansuo release made, newest first (``_schema``'s arguments).
_LAYOUTS = (
    (True, True, True, True, True),
    (True, True, True, True, False),
    (True, True, True, False, False),
    (True, True, False, False, False),
    (True, False, False, False, False),
    (False, False, False, False, False),
)


def _field_names(path: Path) -> set[str]:
    """The fields an index on disk was created with (tantivy-py cannot list a schema's)."""
    meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    return {field["name"] for field in meta.get("schema", [])}


def _sibling(path: Path, suffix: str) -> Path:
    return path.with_name(f"{path.name}.{suffix}")


def _swap_in(path: Path, staged: Path) -> None:
    """Put the committed copy in ``staged`` where the index at ``path`` was. Stopped
    between the two renames, the next open finishes it (``_finish_swap``)."""
    previous = _sibling(path, "previous")
    shutil.rmtree(previous, ignore_errors=True)
    path.rename(previous)
    staged.rename(path)
    shutil.rmtree(previous, ignore_errors=True)


def _finish_swap(path: Path) -> None:
    """Complete a ``_swap_in`` that a crash stopped: with no index at ``path``, a staged
    copy there is a committed one (it is renamed only after its commit)."""
    staged = _sibling(path, "next")
    try:
        if not path.exists() and (staged / "meta.json").exists():
            staged.rename(path)
    except OSError:  # another process finished it first
        pass
    if path.exists():
        shutil.rmtree(_sibling(path, "previous"), ignore_errors=True)


def _to_tantivy(
    doc: IndexDoc,
    with_fold_keys: bool = True,
    with_own_text: bool = True,
    with_dates: bool = True,
    with_documents: bool = True,
    with_link_grams: bool = True,
) -> tantivy.Document:
    out = tantivy.Document()
    out.add_text("url", doc.url)
    out.add_text("site", doc.site)
    for name in DISPLAY_FIELDS:
        out.add_bytes(name, getattr(doc, name).encode("utf-8"))
    for name in _TOKEN_FIELDS:
        out.add_text(name, token_fields.stored(getattr(doc, name)))
    out.add_text("content_hash", doc.content_hash)
    out.add_bytes("minhash", minhash.pack(doc.minhash))
    for band in minhash.bands(doc.minhash):
        out.add_text("minhash_bands", band)
    out.add_float("fetched_at", float(doc.fetched_at))
    out.add_float("pagerank", float(doc.pagerank))
    out.add_float("rank", float(doc.rank))
    if with_fold_keys:
        fold_keys.add_to(out, doc.site, doc.content_hash, doc.minhash)
    if with_own_text and doc.own_text is not None:
        out.add_bytes("own_text", doc.own_text.encode("utf-8"))
    if with_dates:
        out.add_float("modified_at", float(doc.modified_at or doc.fetched_at))
        out.add_bytes("store_key", doc.store_key.encode("ascii"))
    if with_documents and doc.filetype:
        out.add_text("filetype", doc.filetype)
        out.add_integer("doc_size", int(doc.doc_size))
        out.add_integer("doc_pages", int(doc.doc_pages))
    if with_link_grams:
        out.add_text(LINK_GRAMS, token_fields.stored(doc.link_grams))
    return out


def _display(doc: tantivy.Document, name: str) -> str:
    """A display field, stored as UTF-8 bytes."""
    value = doc.get_first(name)
    return "" if value is None else bytes(value).decode("utf-8")


def _signature(doc: tantivy.Document) -> tuple[int, ...]:
    return minhash.unpack(bytes(doc.get_first("minhash") or b""))


def _from_tantivy(doc: tantivy.Document) -> IndexDoc:
    def text(name: str) -> str:
        value = doc.get_first(name)
        return "" if value is None else token_fields.read(str(value))

    def number(name: str) -> float:
        value = doc.get_first(name)
        return 0.0 if value is None else float(value)

    def string(name: str) -> str:
        return _display(doc, name) if name == "store_key" else text(name)

    own_text = doc.get_first("own_text")
    stored = index_doc_from(string, lambda name: _display(doc, name), number, _signature(doc))
    return stored if own_text is None else dataclasses.replace(stored, own_text=bytes(own_text).decode("utf-8"))


def _hit_from_tantivy(doc: tantivy.Document, score: float = 0.0) -> SearchHit:
    """Only what a result shows or folds by: a search loads dozens of documents per
    query, and rebuilding each whole IndexDoc (token fields, anchors) cost more than
    the search itself."""
    return SearchHit(
        url=str(doc.get_first("url") or ""),
        site=str(doc.get_first("site") or ""),
        title=_display(doc, "title"),
        headings=_display(doc, "headings"),
        body=_display(doc, "body"),
        score=score,
        pagerank=float(doc.get_first("pagerank") or 0.0),
        content_hash=str(doc.get_first("content_hash") or ""),
        minhash=_signature(doc),
        fetched_at=float(doc.get_first("fetched_at") or 0.0),
        modified_at=float(doc.get_first("modified_at") or 0.0),
        filetype=str(doc.get_first("filetype") or ""),
        doc_size=int(doc.get_first("doc_size") or 0),
        doc_pages=int(doc.get_first("doc_pages") or 0),
        anchors=_display(doc, "anchors"),
    )


def _with_grams(doc: IndexDoc, kept: RecentDocuments) -> IndexDoc:
    """A stored document with its bigram fields, which the index does not store: the
    ones this writer kept when it wrote the document, else built again from its text."""
    if doc.title_grams or doc.body_grams or not (doc.title or doc.headings or doc.body):
        return doc
    found = kept.grams_of(doc)
    if found is not None:
        return dataclasses.replace(doc, title_grams=found[0], body_grams=found[1], link_grams=found[2])
    body = doc.body if doc.own_text is None else doc.own_text
    title_grams, body_grams = document_grams(doc.title, doc.headings, body)
    links = link_page_grams(doc.body) if doc.own_text is not None else ""
    return dataclasses.replace(doc, title_grams=" ".join(title_grams), body_grams=" ".join(body_grams),
                               link_grams=links)  # fmt: skip


def _has_link_fields(doc: IndexDoc) -> bool:
    return bool(doc.pagerank or doc.rank or doc.anchors or doc.anchors_tokens)


def _same_link_fields(doc: IndexDoc, new: LinkFields) -> bool:
    # Near-equal floats count as equal: a recomputed PageRank that moved only by
    # float noise is not worth rewriting the whole document for.
    return (
        math.isclose(doc.pagerank, new.pagerank, rel_tol=1e-9, abs_tol=1e-15)
        and math.isclose(doc.rank, new.rank, rel_tol=1e-9, abs_tol=1e-12)
        and doc.anchors == new.anchors
        and doc.anchors_tokens == new.anchors_tokens
    )


def rank_feature(rank: float, weight: float, pivot: float) -> float:
    """The saturating rank feature ``weight * rank / (rank + pivot)``; the same
    formula as Elasticsearch's rank_feature saturation, so both backends agree."""
    if rank <= 0 or rank + pivot <= 0:
        return 0.0
    return weight * rank / (rank + pivot)


class TantivySearchIndex:
    """The SearchIndex port on a local tantivy directory.

    One instance may be shared by threads (the indexer and the ranker of one
    process): writes go through a single IndexWriter under a lock. A second
    process opens the directory with ``read_only=True`` and sees each commit.
    """

    def __init__(self, path: Path, cfg: Settings, read_only: bool = False) -> None:
        self._path = Path(path)
        self._cfg = cfg
        self._read_only = read_only
        self._write_lock = threading.RLock()
        self._read_lock = threading.Lock()
        # Upserts and deletes since the last commit, by URL (None = deleted): a second
        # upsert of a URL in the same batch must still see the first one's link fields.
        self._pending: dict[str, IndexDoc | None] = {}
        self._writer: tantivy.IndexWriter | None = None
        self._meta_stamp: tuple[int, int, int] | None = None
        self._views = 0  # searcher views loaded so far: the view_version
        self._stored_docs_of = (-1, 0)  # (view, documents stored in its segments)
        self._hits = StoredHitCache(cfg.search_doc_cache_entries)
        self._recent = RecentDocuments(0 if read_only else cfg.index_gram_cache_chars)
        # Readers only: a writer's merges read segments front to back.
        self._advice = RandomAccessAdvice(self._path) if read_only and cfg.index_random_access else None
        _finish_swap(self._path)
        if read_only:
            if not self._path.is_dir() or not tantivy.Index.exists(str(self._path)):
                raise IndexUnavailable(
                    f"no search index at {self._path}: crawl something first, or check TANSUO_DATA_DIR"
                )
            self._attach(tantivy.Index.open(str(self._path)))
        else:
            self._path.mkdir(parents=True, exist_ok=True)
            self._attach(self._open_for_writing())
            self._writer = self._open_writer(_WRITER_HEAP_BYTES)
        self._site_names = fold_keys.SiteNames(self.sites)
        self._marker = SearchMarker(_sibling(self._path, "searched"))
        self._reload()

    def _attach(self, index: tantivy.Index) -> None:
        """Search and write ``index`` from now on (when opened, and after a merge swapped
        in a copy with the current fields)."""
        self._index = index
        self._schema = index.schema
        fields = self._fields = _field_names(self._path)
        # An index built before the fold keys keeps its layout and reads its hits whole.
        self._fold_keys = set(fold_keys.FIELDS) <= fields
        # One built before own_text rebuilds a page of links' bigrams from its body.
        self._own_text = "own_text" in fields
        # One built before the page dates sorts by date from stored fetch times.
        self._dates = "modified_at" in fields
        # One built before documents were indexed has no filetype: filter to match.
        self._documents = "filetype" in fields
        # One built before link_grams finds no quoted phrase among a page's link texts.
        self._link_grams = LINK_GRAMS in fields
        # Reload explicitly (after our commits, or when meta.json changes) rather than
        # through tantivy's watcher thread, so a search right after commit() sees it.
        index.config_reader("manual")

    def _open_for_writing(self) -> tantivy.Index:
        """The index at the path (made there with the current fields if there is none),
        in whichever of the layouts of ``_LAYOUTS`` it was made with."""
        errors = []
        for layout in _LAYOUTS:
            try:
                return tantivy.Index(_schema(*layout), path=str(self._path))
            except ValueError as exc:
                errors.append(exc)
        raise IndexUnavailable(
            f"cannot open the search index at {self._path}: {errors[0]}. If an older Tansuo built it, "
            "its fields differ: move that directory away and crawl again"
        ) from errors[0]

    # --- reading

    def _open_writer(self, heap_bytes: int, threads: int = _WRITER_THREADS) -> tantivy.IndexWriter:
        """The index's one writer, or IndexLocked while another process holds it."""
        try:
            return self._index.writer(heap_size=heap_bytes, num_threads=threads)
        except ValueError as exc:
            raise IndexLocked(
                f"the search index at {self._path} is already open for writing (another tansuo process?): {exc}"
            ) from exc

    def _meta(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self._path / "meta.json")
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _reload(self) -> None:
        with self._read_lock:
            stamp = self._meta()
            try:
                if self._read_only and _field_names(self._path) != self._fields:
                    # A force merge swapped in a copy with more fields (``_copy_to_current_layout``):
                    # its documents hold fields this schema does not know.
                    self._attach(tantivy.Index.open(str(self._path)))
                self._index.reload()
            except (ValueError, OSError) as exc:
                # A writer in another process may garbage-collect a segment between our
                # reading meta.json and opening it; the old searcher still works.
                log.warning("search index reload failed, keeping the previous view: %s", exc)
                return
            self._meta_stamp = stamp
            self._views += 1
            if self._advice is not None:
                self._advice.apply()  # the new view's segments are mapped now

    def _refresh(self) -> None:
        # meta.json is replaced atomically on every commit, so a stat is enough to
        # notice another process's commit: cheap enough to do on every request.
        if self._read_only and self._meta() != self._meta_stamp:
            self._reload()

    def _searcher(self) -> tantivy.Searcher:
        return self._searcher_view()[0]

    def _searcher_view(self) -> tuple[tantivy.Searcher, int]:
        """A searcher and the number of its view, read together."""
        self._refresh()
        with self._read_lock:
            return self._index.searcher(), self._views

    def searched_at(self) -> float | None:
        """When any process last searched this index (``SearchMarker``); 0.0 if none
        has since the stamp file was made."""
        return self._marker.last() or 0.0

    def view_version(self) -> int:
        """The number of the searcher view the next search will use."""
        self._refresh()
        return self._views

    def _term(self, field: str, value: str) -> Query:
        return Query.term_query(self._schema, field, value)

    def _committed(self, url: str) -> IndexDoc | None:
        doc = self._stored(url)
        # The bigrams are rebuilt from the stored text, an untitled document's title ones
        # from its links' text, as they were indexed.
        return with_link_title(_with_grams(doc, self._recent)) if doc is not None else None

    def _stored(self, url: str) -> IndexDoc | None:
        """The committed document as stored, without the bigram fields (which are
        computed again from its text, the larger part of reading it)."""
        searcher = self._searcher()
        hits = searcher.search(self._term("url", url), limit=1).hits
        return _from_tantivy(searcher.doc(hits[0][1])) if hits else None

    def get(self, url: str) -> IndexDoc | None:
        """The committed document with this URL."""
        return self._committed(url)

    def url_for_hash(self, content_hash: str) -> str | None:
        if not content_hash:
            return None
        searcher = self._searcher()
        query = self._term("content_hash", content_hash)
        found = searcher.search(query, limit=10, count=True)
        # One text on many sites: every one is a candidate.
        if (found.count or 0) > len(found.hits):  # type: ignore[attr-defined]  # tantivy's stub omits SearchResult.count, which count=True fills
            found = searcher.search(query, limit=int(found.count or 0), count=False)  # type: ignore[attr-defined]  # tantivy's stub omits SearchResult.count, which count=True fills
        urls = [searcher.doc(addr).get_first("url") for _, addr in found.hits]
        # Two URLs may share a hash after a race, or the text is on several sites: the
        # smallest is a stable answer, and Elasticsearch's (sorted by URL).
        return min((str(u) for u in urls if u), default=None)

    def urls_for_hashes(self, content_hashes: Collection[str]) -> dict[str, str]:
        """A lookup each: a local search costs no round trip to save."""
        owners = {h: self.url_for_hash(h) for h in set(content_hashes) if h}
        return {h: url for h, url in owners.items() if url is not None}

    def fetch_times(self, urls: Collection[str]) -> dict[str, float]:
        searcher = self._searcher()
        times: dict[str, float] = {}
        for url in set(urls):
            hits = searcher.search(self._term("url", url), limit=1).hits
            if hits:
                times[url] = float(searcher.doc(hits[0][1]).get_first("fetched_at") or 0.0)
        return times

    def near_duplicates(self, signature: Sequence[int]) -> list[tuple[str, tuple[int, ...]]]:
        terms = minhash.bands(signature)
        if not terms:
            return []
        searcher = self._searcher()
        query = Query.boolean_query([(Occur.Should, self._term("minhash_bands", t)) for t in terms])
        found = []
        for _, addr in searcher.search(query, limit=100).hits:
            doc = searcher.doc(addr)
            found.append((str(doc.get_first("url")), minhash.unpack(bytes(doc.get_first("minhash") or b""))))
        return sorted(found)

    def count(self) -> int:
        return int(self._searcher().num_docs)

    def term_stats(self, terms: Sequence[tuple[str, str]]) -> tuple[int, list[int]]:
        """Counted as tantivy's BM25 counts them: a document frequency includes the
        versions a rewrite deleted (until a merge drops them), as in Lucene, and so does
        the number of documents here. With the live count beside it instead, a word on
        every page of an index the ranker had rewritten whole was held by twice as many
        documents as there were, and the planner's idf for it came out negative."""
        searcher = self._searcher()
        dfs = [int(searcher.doc_freq(field, token)) for field, token in terms]
        return max(int(searcher.num_docs), self._stored_docs()), dfs

    def _stored_docs(self) -> int:
        """Documents in the view's segments, deleted versions included (meta.json's
        ``max_doc``s; tantivy-py does not tell), read once per view."""
        views, count = self._stored_docs_of
        if views != self._views:
            try:
                meta = json.loads((self._path / "meta.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):  # mid-swap (a force merge's copy): the live count will do
                return 0
            count = sum(int(segment.get("max_doc", 0)) for segment in meta.get("segments", []))
            self._stored_docs_of = (self._views, count)
        return count

    def sites(self) -> list[str]:
        agg = {"sites": {"terms": {"field": "site", "size": _MAX_SITES}}}
        result = self._searcher().aggregate(Query.all_query(), agg)
        return sorted(b["key"] for b in result["sites"]["buckets"] if b["key"])

    def urls(self) -> list[str]:
        searcher = self._searcher()
        n = int(searcher.num_docs)
        if n == 0:
            return []  # tantivy panics on a zero limit
        hits = searcher.search(Query.all_query(), limit=n).hits
        return sorted(str(searcher.doc(addr).get_first("url")) for _, addr in hits)

    def ping(self) -> None:
        if not (self._path / "meta.json").exists():
            raise IndexUnavailable(f"search index at {self._path} is gone")
        self._searcher().num_docs  # noqa: B018 - opening a searcher is the check

    # --- writing

    def _require_writer(self) -> tantivy.IndexWriter:
        if self._writer is None:
            raise IndexUnavailable(
                "search index opened read-only" if self._read_only else "search index is closed"
            )
        return self._writer

    def _current(self, url: str) -> IndexDoc | None:
        return self._latest(url, self._committed)

    def _latest(self, url: str, read: Callable[[str], IndexDoc | None]) -> IndexDoc | None:
        """The document as this writer last left it: pending, else kept since its
        commit, else ``read`` from the index."""
        if url in self._pending:
            return self._pending[url]
        return self._recent.latest(url) or read(url)

    def _replace(self, writer: tantivy.IndexWriter, doc: IndexDoc) -> None:
        doc = with_link_title(doc)
        writer.delete_documents_by_term("url", doc.url)
        writer.add_document(
            _to_tantivy(doc, self._fold_keys, self._own_text, self._dates, self._documents, self._link_grams)
        )
        self._pending[doc.url] = doc

    def upsert(self, docs: Sequence[IndexDoc]) -> None:
        with self._write_lock:
            writer = self._require_writer()
            for doc in docs:
                # Only the old link fields are carried over, so the bigrams need not be rebuilt.
                old = self._latest(doc.url, self._stored)
                if old is not None and not _has_link_fields(doc):
                    doc = dataclasses.replace(
                        doc,
                        pagerank=old.pagerank,
                        rank=old.rank,
                        anchors=old.anchors,
                        anchors_tokens=old.anchors_tokens,
                    )
                self._replace(writer, doc)

    def delete(self, urls: Iterable[str]) -> None:
        with self._write_lock:
            writer = self._require_writer()
            for url in urls:
                writer.delete_documents_by_term("url", url)
                self._pending[url] = None

    def set_link_fields(self, fields: Mapping[str, LinkFields]) -> None:
        with self._write_lock:
            writer = self._require_writer()
            for url, new in fields.items():
                doc = self._current(url)
                if doc is None or _same_link_fields(doc, new):
                    continue
                self._replace(
                    writer,
                    dataclasses.replace(
                        doc,
                        pagerank=new.pagerank,
                        rank=new.rank,
                        anchors=new.anchors,
                        anchors_tokens=new.anchors_tokens,
                    ),
                )

    def commit(self) -> None:
        with self._write_lock:
            self._require_writer().commit()
            for url, doc in self._pending.items():
                if doc is None:
                    self._recent.forget(url)
                else:
                    self._recent.keep(doc)
            self._pending.clear()
            self._reload()

    def close(self, finish_merges: bool = False) -> None:
        """Drop uncommitted writes and release the writer lock. tantivy's rollback
        also discards the merges under way (their segment updater is killed), so a
        writer with nothing to drop and merges to finish is only waited for: left to
        a rollback, the benchmark's build kept 16 segments at 100,000 pages instead of 9."""
        with self._write_lock:
            writer, self._writer = self._writer, None
            if writer is not None:
                if self._pending or not finish_merges:
                    writer.rollback()
                writer.wait_merging_threads()
            self._pending.clear()

    def force_merge(self, progress: Callable[[int, int], None] | None = None) -> MergeReport:
        """Copy every committed document into new segments written by one writer with
        ``index_merge_heap_mb`` of memory, and drop the old ones in the same commit.

        tantivy-py has no merge call, and its merge policy leaves tens of segments on a
        large index; a search opens each query term once per segment, so one segment
        answers faster (docs/serving.md, 'Segments: merge an index that is done'). The
        copy is one commit: stopped before it (Ctrl-C, a crash) nothing changed. The
        old segments' files stay until it, so the disk needs the index's size free.
        """
        with self._write_lock:
            self._require_writer()
            self.commit()
            searcher = self._index.searcher()  # the view copied; its files stay readable
            if not (self._fold_keys and self._own_text and self._dates and self._documents and self._link_grams):
                return self._copy_to_current_layout(searcher, progress)
            self.close()  # one writer per index: the big one takes the lock
            try:
                # One thread: every thread writes segments of its own.
                writer = self._open_writer(self._cfg.index_merge_heap_mb * 1_000_000, threads=1)
                self._copy_all(searcher, writer, progress)
            finally:
                self._writer = self._open_writer(_WRITER_HEAP_BYTES)
            return self._merge_report(searcher)

    def _copy_to_current_layout(
        self, searcher: tantivy.Searcher, progress: Callable[[int, int], None] | None
    ) -> MergeReport:
        """The merge of an index made with an older layout (``_LAYOUTS``): tantivy cannot add fields
        to an index, so the copy goes to a sibling directory with the current fields,
        which then takes the index's place (``_swap_in``). This instance's writer
        holds the old index's lock until the copy is committed."""
        staged = _sibling(self._path, "next")
        shutil.rmtree(staged, ignore_errors=True)  # an earlier copy that was stopped
        staged.mkdir()
        writer = tantivy.Index(_schema(), path=str(staged)).writer(
            heap_size=self._cfg.index_merge_heap_mb * 1_000_000, num_threads=1
        )
        try:
            self._copy_all(searcher, writer, progress)
        except BaseException:
            shutil.rmtree(staged, ignore_errors=True)
            raise
        del writer
        self.close()  # before the swap: a writer's directory is its path, and it cleans up files there
        _swap_in(self._path, staged)
        self._attach(self._open_for_writing())
        self._writer = self._open_writer(_WRITER_HEAP_BYTES)
        return self._merge_report(searcher, new_layout=True)

    def _copy_all(
        self,
        searcher: tantivy.Searcher,
        writer: tantivy.IndexWriter,
        progress: Callable[[int, int], None] | None,
    ) -> None:
        """Every document of ``searcher``'s view into ``writer``, with the fold keys (a
        merge always leaves the current fields), committed at once; stopped, the
        writer is rolled back. Its merges are waited for either way."""
        total = searcher.num_docs
        try:
            writer.delete_all_documents()  # the documents added after it stay
            hits = searcher.search(Query.all_query(), limit=max(1, total), count=False).hits
            for done, (_, addr) in enumerate(hits, 1):
                doc = with_link_title(_with_grams(_from_tantivy(searcher.doc(addr)), self._recent))
                writer.add_document(_to_tantivy(doc))
                if progress is not None and (done % 1000 == 0 or done == total):
                    progress(done, total)
            writer.commit()
        except BaseException:
            writer.rollback()
            raise
        finally:
            writer.wait_merging_threads()

    def _merge_report(self, before: tantivy.Searcher, new_layout: bool = False) -> MergeReport:
        self._reload()
        after = self._index.searcher()
        return MergeReport(after.num_docs, before.num_segments, after.num_segments, new_layout)

    # --- searching

    def _translate(self, node: Node) -> Query:
        """One query-tree node as a tantivy query (see services/common/domain/query_tree.py)."""
        if isinstance(node, Term) and node.field == "filetype" and not self._documents:
            query = self._term("url", "")  # an index of an older layout holds no document: no URL is ""
        elif isinstance(node, (Term, Phrase)) and node.field == LINK_GRAMS and not self._link_grams:
            query = self._term("url", "")  # nor link_grams: a phrase there matches nothing
        elif isinstance(node, Term):
            query = self._term(node.field, node.value)
        elif isinstance(node, Phrase):
            if node.prefix:
                query = Query.phrase_prefix_query(self._schema, node.field, list(node.values))
            elif len(node.values) == 1:
                query = self._term(node.field, node.values[0])
            else:
                query = Query.phrase_query(self._schema, node.field, list(node.values))
        else:
            clauses = [(Occur.Must, self._translate(n)) for n in node.must]
            clauses += [(Occur.Should, self._translate(n)) for n in node.should]
            clauses += [(Occur.MustNot, self._translate(n)) for n in node.must_not]
            # A filter scores nothing: constant 0 beside the scoring clauses.
            clauses += [(Occur.Must, Query.const_score_query(self._translate(n), 0.0)) for n in node.filter]
            if not node.must and not node.should and not node.filter:
                clauses.insert(0, (Occur.Must, Query.const_score_query(Query.all_query(), 0.0)))
            minimum = node.minimum_should_match if node.should else None
            query = Query.boolean_query(clauses, minimum or None)
        boost = node.boost
        return query if boost == 1.0 else Query.boost_query(query, boost)

    def search(self, query: SearchQuery) -> SearchHits:
        """BM25 over the fields, then the rank feature added over a rescore window; or,
        sorted by date, the newest matching pages first."""
        limit = max(0, query.limit)
        offset = max(0, query.offset)
        self._marker.stamp()
        if not can_match(query.tree) or limit == 0:
            return SearchHits(total=0, hits=[])
        tq = self._translate(query.tree)
        cfg = self._cfg
        searcher, view = self._searcher_view()
        if query.sort == "date":
            return self._by_date(searcher, view, tq, offset, limit)
        window = max(offset + limit, cfg.search_rescore_window)
        result = searcher.search(tq, limit=window, count=True)
        total = int(result.count or 0)  # type: ignore[attr-defined]  # tantivy's stub omits SearchResult.count, which count=True fills
        if not result.hits:
            return SearchHits(total=total, hits=[])
        reachable = _reachable(result.hits, offset + limit, cfg.search_pagerank_weight)
        ranks = searcher.fast_field_values("rank", [addr for _, addr in reachable])
        scored = [
            (float(bm25) + rank_feature(float(r or 0.0), cfg.search_pagerank_weight, cfg.search_pagerank_pivot), addr)
            for (bm25, addr), r in zip(reachable, ranks, strict=True)
        ]
        scored.sort(key=lambda pair: -pair[0])
        hit = self._hit_maker(searcher, view, [addr for _, addr in scored[: offset + limit]])
        return SearchHits(total=total, hits=_page_with_url_ties(hit, scored, offset, limit))

    def _by_date(self, searcher: tantivy.Searcher, view: int, tq: Query, offset: int, limit: int) -> SearchHits:
        """Matching pages newest first, equal dates by URL. From the ``modified_at`` fast
        field, collecting until the run of equal dates at the page's end is whole (a
        site's static files often share one Last-Modified), up to ``_DATE_TIES`` more
        hits. An index made before the dates were kept reads every match's stored fetch
        time instead (`tansuo force-merge` brings it to the current fields)."""
        end = offset + limit
        if self._dates:
            want = end + 1
            while True:
                found = searcher.search(tq, limit=want, count=True, order_by_field="modified_at", order=tantivy.Order.Desc)
                total = int(found.count or 0)  # type: ignore[attr-defined]  # tantivy's stub omits SearchResult.count
                dated = [(float(key), addr) for key, addr in found.hits]
                if len(dated) < want or dated[-1][0] != dated[min(end, len(dated)) - 1][0] or want > end + _DATE_TIES:
                    break
                want = min(want * 4, end + _DATE_TIES + 1)
        else:
            found = searcher.search(tq, limit=max(1, int(searcher.num_docs)), count=True)
            total = int(found.count or 0)  # type: ignore[attr-defined]  # tantivy's stub omits SearchResult.count
            dated = sorted(((float(searcher.doc(addr).get_first("fetched_at") or 0.0), addr) for _, addr in found.hits),
                           key=lambda pair: -pair[0])  # fmt: skip

        def hit(date: float, addr: tantivy.DocAddress) -> SearchHit:
            return self._hits.get((view, addr.segment_ord, addr.doc), lambda: _hit_from_tantivy(searcher.doc(addr)))

        return SearchHits(total=total, hits=_page_with_url_ties(hit, dated, offset, limit))

    def _hit_maker(
        self, searcher: tantivy.Searcher, view: int, addresses: list[tantivy.DocAddress]
    ) -> Callable[[float, tantivy.DocAddress], SearchHit]:
        """How a hit is made: whole from the document store, or, where the index has
        fold keys, from them, with the stored fields read on first use (DeferredHit)."""

        def stored(addr: tantivy.DocAddress) -> SearchHit:
            return self._hits.get((view, addr.segment_ord, addr.doc), lambda: _hit_from_tantivy(searcher.doc(addr)))

        if not self._fold_keys:
            return lambda score, addr: dataclasses.replace(stored(addr), score=score)
        keys = {(a.segment_ord, a.doc): k for a, k in zip(addresses, fold_keys.read(searcher, addresses), strict=True)}

        def deferred(score: float, addr: tantivy.DocAddress) -> SearchHit:
            k = keys.get((addr.segment_ord, addr.doc))
            if k is None:  # past the window (a run of equal scores): read it, signature and all
                k = dataclasses.replace(fold_keys.read(searcher, [addr])[0], shares_a_band=True)
            site = self._site_names.name(k.site, view)
            # A hit no other one shares a band with cannot fold: it needs no signature.
            return DeferredHit(lambda: stored(addr), score, site, k.copy, None if k.shares_a_band else ())

        return deferred


def _reachable(hits: list[tuple[float, tantivy.DocAddress]], end: int, weight: float) -> list[tuple[float, tantivy.DocAddress]]:
    """The hits, best BM25 first, that the rank feature could still lift into the
    first ``end``: it adds less than ``weight``, so a hit that far below the
    ``end``-th BM25 score cannot pass it. Rescoring reads and scores only these; at a
    million pages that is a tenth of the rescoring window for a typical query."""
    if weight <= 0 or len(hits) <= end:
        return hits
    floor = float(hits[end - 1][0]) - weight - 1e-6  # margin: scores are f32
    keep = end
    while keep < len(hits) and float(hits[keep][0]) > floor:
        keep += 1
    return hits[:keep]


def _page_with_url_ties(
    hit: Callable[[float, tantivy.DocAddress], SearchHit],
    scored: list[tuple[float, tantivy.DocAddress]],
    offset: int,
    limit: int,
) -> list[SearchHit]:
    """The ``[offset, offset+limit)`` slice of hits sorted by score, equal scores
    ordered by URL so that paging is deterministic.

    Documents are loaded only for runs of equal scores that reach into the page,
    since loading means decompressing stored bodies.
    """
    end = offset + limit
    ordered: list[SearchHit | tuple[float, tantivy.DocAddress]] = []
    i = 0
    while i < len(scored) and i < end:
        j = i
        while j < len(scored) and scored[j][0] == scored[i][0]:
            j += 1
        if j > offset:
            run = [hit(s, a) for s, a in scored[i:j]]
            if len(run) > 1:  # a sort key is computed even for one item, and reads it
                run.sort(key=lambda hit: hit.url)
            ordered.extend(run)
        else:
            ordered.extend(scored[i:j])
        i = j
    return [hit for hit in ordered[offset:end] if isinstance(hit, SearchHit)]
