"""Cluster search index: Elasticsearch 8 behind an alias.

``TANSUO_INDEX=elasticsearch://[user:pass@]host[:9200][,host2...]/<alias>`` (plain
HTTP) or ``elasticsearchs://...`` (HTTPS, like ``rediss://``; ``?ca_certs=/path``
names a private CA, ``?verify_certs=false`` skips verification). Searches and
writes go to the alias, which points at one concrete index ``<alias>-000001``,
``<alias>-000002``, ...: a full rebuild fills the next one and swaps the alias in
one atomic ``_aliases`` request, so searches never see an empty or half-built index.

Scoring is the tantivy adapter's, node for node: the search service's query tree
(``services/common/domain/query_tree.py``) becomes ``bool``, ``term`` and ``match_phrase``
queries, where tantivy builds BooleanQuery, TermQuery and PhraseQuery; filters score
nothing, and ``weight * rank / (rank + pivot)`` is a ``rank_feature`` saturation
clause. Elasticsearch's BM25 keeps the ``(k1 + 1)`` factor that tantivy has, so the two
backends give the same scores, except where their statistics differ:

- Lucene counts, for a field's idf and average length, only the documents with at
  least one token in that field; tantivy counts every document. A marker token in
  every field (``token_fields.py``) makes the counts equal.
- The two store field lengths with different precision (scores agree to about 1e-3).
- A ``rank_feature`` keeps 9 significant bits of the rank (about 0.4%).
- tantivy adds the rank feature within its rescore window only; here every hit gets it.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from elasticsearch import ApiError, Elasticsearch, NotFoundError

from services.common.adapters import token_fields
from services.common.adapters.elasticsearch import index_template as template
from services.common.adapters.elasticsearch.bulk_buffer import BulkBuffer, IndexWriteError
from services.common.adapters.elasticsearch.request_count import counting_node
from services.common.adapters.link_title import link_title
from services.common.config import Settings
from services.common.domain import minhash
from services.common.domain.documents import (
    IndexDoc,
    LinkFields,
    MergeReport,
    index_doc_from,
)
from services.common.domain.messages import url_fingerprint
from services.common.domain.query_tree import Node, Phrase, Term, can_match
from services.common.domain.search_types import SearchHit, SearchHits, SearchQuery
from services.common.errors import IndexUnavailable

log = logging.getLogger(__name__)

SCHEMES = {"elasticsearch": "http", "elasticsearchs": "https"}
DEFAULT_PORT = 9200
_LINK_FIELDS = ("pagerank", "rank", "anchors", "anchors_tokens")
_CONTENT_FIELDS = (
    "url", "site", "title", "headings", "body", "content_hash",
    "title_tokens", "headings_tokens", "body_tokens", "subword_tokens", "title_grams", "body_grams", "link_grams",
    "fetched_at", "store_key", "filetype", "doc_size", "doc_pages",
)  # fmt: skip
_CONTENT_TOKEN_FIELDS = (
    "title_tokens", "headings_tokens", "body_tokens", "subword_tokens", "title_grams", "body_grams", "link_grams",
)  # fmt: skip
_HIT_FIELDS = ["url", "site", "title", "headings", "body", "pagerank", "content_hash", "minhash", "fetched_at",
               "modified_at", "filetype", "doc_size", "doc_pages", "anchors"]  # fmt: skip
_MAX_SITES = 10_000
# Newest first; a document indexed before dates were kept has none and comes last.
_DATE_SORT: list[str | Mapping[str, Any]] = [
    {"modified_at": {"order": "desc", "missing": "_last", "unmapped_type": "date"}},
    {"url": "asc"},
]
_SCAN_PAGE = 1_000
# Content hashes a duplicate lookup asks for at once (one hit each, collapsed).
_HASHES_PER_SEARCH = 1_000
# Another process's partial update of the same page (the ranker's link fields
# against the indexer's upsert) makes a version conflict; the update just re-reads.
_RETRY_ON_CONFLICT = 5
# Lucene's FeatureField rejects zero, negatives and subnormals: such a rank is stored
# as null, which the rank_feature query treats as "no boost", tantivy's reading too.
_MIN_RANK = 1.1754943508222875e-38
# Index names: lower-case, no path or wildcard characters (Elasticsearch's own rules).
_ALIAS_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,200}$")


def _check_alias(alias: str) -> str:
    if not _ALIAS_RE.match(alias) or alias in (".", ".."):
        raise ValueError(
            f"TANSUO_INDEX: {alias!r} is not a valid index alias "
            "(lower-case letters, digits, '.', '_' and '-'; not starting with '.', '_' or '-')"
        )
    return alias


def parse_url(url: str) -> tuple[list[str], str, dict[str, Any]]:
    """``(node URLs, alias, client options)`` from a TANSUO_INDEX URL."""
    parts = urlsplit(url)
    http = SCHEMES.get(parts.scheme)
    if http is None:
        raise ValueError(f"TANSUO_INDEX: unknown scheme {parts.scheme!r} (expected one of {sorted(SCHEMES)})")
    userinfo, _, hostlist = parts.netloc.rpartition("@")
    nodes = []
    for host in hostlist.split(","):
        host = host.strip()
        if not host:
            continue
        # "[::1]" or "name" has no port; "[::1]:9201" or "name:9201" has one.
        has_port = re.search(r":\d+$", host) is not None and (not host.startswith("[") or "]:" in host)
        nodes.append(f"{http}://{host}" if has_port else f"{http}://{host}:{DEFAULT_PORT}")
    if not nodes:
        raise ValueError("TANSUO_INDEX: no Elasticsearch host in the URL")
    alias = _check_alias(parts.path.strip("/"))
    options: dict[str, Any] = {}
    if userinfo:
        user, _, password = userinfo.partition(":")
        options["basic_auth"] = (unquote(user), unquote(password))
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    if "ca_certs" in query:
        options["ca_certs"] = query.pop("ca_certs")
    if "verify_certs" in query:
        options["verify_certs"] = query.pop("verify_certs").lower() not in ("0", "false", "no")
    if query:
        raise ValueError(f"TANSUO_INDEX: unknown URL parameters {sorted(query)} (known: ca_certs, verify_certs)")
    return nodes, alias, options


def _rank_value(rank: float) -> float | None:
    return float(rank) if rank >= _MIN_RANK else None


def _has_link_fields(doc: IndexDoc) -> bool:
    return bool(doc.pagerank or doc.rank or doc.anchors or doc.anchors_tokens)


def _link_source(pagerank: float, rank: float, anchors: str, anchors_tokens: str) -> dict[str, Any]:
    return {
        "pagerank": float(pagerank),
        "rank": _rank_value(rank),
        "anchors": anchors,
        "anchors_tokens": token_fields.stored(anchors_tokens),
    }


def _content_source(doc: IndexDoc) -> dict[str, Any]:
    source: dict[str, Any] = {name: getattr(doc, name) for name in _CONTENT_FIELDS}
    for name in _CONTENT_TOKEN_FIELDS:
        source[name] = token_fields.stored(source[name])
    source["fetched_at"] = float(doc.fetched_at)
    source["modified_at"] = float(doc.modified_at or doc.fetched_at)
    if doc.own_text is not None:
        source["own_text"] = doc.own_text
    source["minhash"] = list(doc.minhash)
    source["minhash_bands"] = minhash.bands(doc.minhash)
    return source


_TITLE_TOKEN_FIELDS = ("title_tokens", "title_grams")


def _link_title_source(filetype: str, title: str, anchors: str) -> dict[str, str] | None:
    fields = link_title(filetype, title, anchors)
    if fields is None:
        return None
    return {"title_tokens": token_fields.stored(fields[0]), "title_grams": token_fields.stored(fields[1])}


def _from_source(src: Mapping[str, Any]) -> IndexDoc:
    def display(name: str) -> str:
        value = src.get(name)
        return "" if value is None else str(value)

    def text(name: str) -> str:
        # Token fields only: a title may well start with the marker character itself.
        return token_fields.read(display(name))

    def number(name: str) -> float:
        value = src.get(name)
        return 0.0 if value is None else float(value)

    def string(name: str) -> str:
        return display(name) if name == "store_key" else text(name)

    doc = index_doc_from(string, display, number, tuple(int(v) for v in src.get("minhash") or ()))
    own_text = src.get("own_text")
    return doc if own_text is None else dataclasses.replace(doc, own_text=str(own_text))


def _generation(alias: str, index: str) -> int | None:
    m = re.fullmatch(re.escape(alias) + r"-(\d{6,})", index)
    return int(m.group(1)) if m else None


class ElasticsearchSearchIndex:
    """The SearchIndex port on an Elasticsearch alias.

    Instances are thread-safe. Writes are held in order and sent in ``_bulk``
    requests bounded by count and bytes (``bulk_buffer.py``), the last of them at
    ``commit``, which also refreshes so that searches see them; Elasticsearch makes a
    request durable before answering it. Many processes may write at once;
    per-document partial updates keep the indexer's and the ranker's fields apart.
    """

    def __init__(
        self,
        client: Elasticsearch,
        alias: str,
        cfg: Settings,
        read_only: bool = False,
        *,
        _target: str | None = None,
        _owns_client: bool = True,
    ) -> None:
        self._es = client
        self._alias = _check_alias(alias)
        self._cfg = cfg
        self._read_only = read_only
        self._owns_client = _owns_client
        self._closed = False
        self._write_lock = threading.Lock()  # one writer at a time keeps the held writes in order
        self._writes = BulkBuffer(client)
        # Reads and writes name the alias, so a swap redirects them at once; an
        # index being rebuilt is addressed by its concrete name until it is swapped in.
        self._target = _target or alias
        if _target is None:
            self._open()

    @classmethod
    def from_url(
        cls, url: str, cfg: Settings, read_only: bool = False, count_request: Callable[[str], None] | None = None
    ) -> ElasticsearchSearchIndex:
        """``count_request(endpoint)`` is called for every HTTP request the client sends
        (``request_count.py``)."""
        nodes, alias, options = parse_url(url)
        if count_request is not None:
            options["node_class"] = counting_node(count_request)
        client = Elasticsearch(
            nodes,
            request_timeout=cfg.index_timeout_s,
            retry_on_timeout=True,
            max_retries=3,
            **options,
        )
        try:
            return cls(client, alias, cfg, read_only=read_only)
        except BaseException:
            client.close()
            raise

    # --- the alias and its concrete indices

    @property
    def alias(self) -> str:
        return self._alias

    @property
    def target(self) -> str:
        """What reads and writes name: the alias, or a rebuild's concrete index."""
        return self._target

    def concrete_indices(self) -> list[str]:
        """The concrete indices the alias points at (one, except by hand-editing)."""
        try:
            return sorted(self._es.indices.get_alias(name=self._alias).body)
        except NotFoundError:
            return []

    def _open(self) -> None:
        if self._read_only:
            if not self.concrete_indices():
                raise IndexUnavailable(
                    f"no search index: alias {self._alias!r} does not exist; "
                    "crawl something first, or check TANSUO_INDEX"
                )
            return
        self._put_template()
        for _ in range(5):
            if self.concrete_indices():
                break
            # exists() is also true for an alias, which another process may just
            # have created: only a name that is still no alias is a concrete index.
            if self._es.indices.exists(index=self._alias) and not self.concrete_indices():
                raise IndexUnavailable(
                    f"{self._alias!r} is a concrete index, not an alias: Tansuo needs the name "
                    "for an alias so that a rebuild can swap it (reindex into a new name first)"
                )
            # Two processes starting together race here: the loser's create fails
            # with resource_already_exists and the next pass finds the winner's alias.
            if self._create_generation(with_alias=True) is not None:
                break
        else:
            raise IndexUnavailable(f"could not create an index for alias {self._alias!r}")
        self._warn_if_outdated()

    def _put_template(self) -> None:
        shards = int(getattr(self._cfg, "index_shards", 1))
        replicas = int(getattr(self._cfg, "index_replicas", 1))
        try:
            self._es.indices.put_index_template(**template.index_template(self._alias, shards, replicas))
        except ApiError as exc:
            raise IndexUnavailable(f"cannot install the index template {self._alias!r}: {exc}") from exc

    def _create_generation(self, with_alias: bool) -> str | None:
        """Create the next ``<alias>-NNNNNN`` index (settings and mappings from the
        template); None when another process created that name first, or (for the
        first index) already put an index behind the alias."""
        existing = self._es.indices.get(index=template.index_pattern(self._alias), expand_wildcards="all").body
        if with_alias and any(self._alias in (body.get("aliases") or {}) for body in existing.values()):
            # Another process created the first index meanwhile (index and alias come
            # in one request, so seeing the index means seeing the alias too).
            return None
        generations = [g for g in (_generation(self._alias, name) for name in existing) if g is not None]
        name = f"{self._alias}-{max(generations, default=0) + 1:06d}"
        try:
            self._es.indices.create(index=name, aliases={self._alias: {}} if with_alias else None)
        except ApiError as exc:
            if exc.error == "resource_already_exists_exception":
                return None
            raise
        log.info("created search index %s%s", name, f" behind alias {self._alias}" if with_alias else "")
        return name

    def _warn_if_outdated(self) -> None:
        """An index from an older mapping gains the fields added since (so writes of
        this version's documents succeed), and the log says that a rebuild fills them
        for the documents indexed before."""
        for name, body in self._es.indices.get_mapping(index=self._alias).body.items():
            version = (body.get("mappings", {}).get("_meta") or {}).get("mapping_version")
            if version == template.MAPPING_VERSION:
                continue
            added = template.added_fields(version)
            if added and not self._read_only:
                self._es.indices.put_mapping(index=name, properties=added)
            log.warning(
                "search index %s has mapping version %s, this Tansuo writes version %s: "
                "rebuild it (reindex_into_new_index) or re-crawl so that every document has the new fields",
                name, version, template.MAPPING_VERSION,
            )  # fmt: skip

    def begin_rebuild(self) -> ElasticsearchSearchIndex:
        """A new, empty concrete index, not yet behind the alias, to fill (by
        re-indexing the page store, or ``copy_from_alias``) while searches keep using
        the current one; ``finish_rebuild`` swaps it in, ``abandon_rebuild`` drops it.

        Writes that other processes make to the alias meanwhile land in the old
        index only: stop the indexer and the ranker, or replay ``pages.fetched``
        and rerun the ranker after the swap (upserts are idempotent).
        """
        self._require_writable()
        for _ in range(5):
            name = self._create_generation(with_alias=False)
            if name is not None:
                return ElasticsearchSearchIndex(self._es, self._alias, self._cfg, _target=name, _owns_client=False)
        raise IndexUnavailable(f"could not create a new index for alias {self._alias!r}")

    def copy_from_alias(self, timeout_s: float = 3600.0) -> None:
        """Copy every document of the alias into this (rebuilt) index with the
        server-side ``_reindex`` API, which applies this index's mappings. The alias
        is refreshed first, so acknowledged but uncommitted writes come along."""
        if self._target == self._alias:
            raise IndexUnavailable("copy_from_alias is for an index from begin_rebuild()")
        self._es.indices.refresh(index=self._alias)
        result = self._es.options(request_timeout=timeout_s).reindex(
            source={"index": self._alias}, dest={"index": self._target}, wait_for_completion=True
        )
        if result.get("failures"):
            raise IndexWriteError(f"reindex into {self._target} failed: {result['failures'][:3]}")

    def finish_rebuild(self, rebuilt: ElasticsearchSearchIndex, delete_old: bool = True, grace_s: float = 5.0) -> None:
        """Point the alias at ``rebuilt`` in one atomic ``_aliases`` request, then
        delete the indices it left (after ``grace_s``, so that searches that resolved
        the alias just before the swap can finish)."""
        self._require_writable()
        new = rebuilt._target
        if new == self._alias or _generation(self._alias, new) is None:
            raise IndexUnavailable(f"{new!r} is not an index built by begin_rebuild() for {self._alias!r}")
        rebuilt.commit()
        old = [name for name in self.concrete_indices() if name != new]
        # must_exist makes the whole request fail, changing nothing, if another
        # process swapped the alias since we read it.
        actions: list[dict[str, Any]] = [
            {"remove": {"index": name, "alias": self._alias, "must_exist": True}} for name in old
        ]
        actions.append({"add": {"index": new, "alias": self._alias}})
        result = self._es.indices.update_aliases(actions=actions)
        if result.get("errors"):
            raise IndexUnavailable(f"alias swap to {new} reported errors: {result.body}")
        log.info("alias %s now points at %s (was %s)", self._alias, new, ", ".join(old) or "nothing")
        if delete_old and old:
            time.sleep(grace_s)
            self._es.indices.delete(index=",".join(old), ignore_unavailable=True)

    def abandon_rebuild(self, rebuilt: ElasticsearchSearchIndex) -> None:
        """Delete an index from ``begin_rebuild`` that will not be swapped in."""
        if rebuilt._target in self.concrete_indices() or _generation(self._alias, rebuilt._target) is None:
            raise IndexUnavailable(f"{rebuilt._target!r} is not a rebuild in progress for {self._alias!r}")
        self._es.indices.delete(index=rebuilt._target, ignore_unavailable=True)
        rebuilt.close()

    def reindex_into_new_index(self, timeout_s: float = 3600.0, grace_s: float = 5.0) -> str:
        """Copy the alias's documents into a new index built from the current
        template and swap the alias to it; returns the new index's name."""
        rebuilt = self.begin_rebuild()
        try:
            rebuilt.copy_from_alias(timeout_s)
        except BaseException:
            self.abandon_rebuild(rebuilt)
            raise
        self.finish_rebuild(rebuilt, grace_s=grace_s)
        return rebuilt._target

    # --- reading

    def get(self, url: str) -> IndexDoc | None:
        """The committed document with this URL (``realtime=False``: not a write
        that no commit has made visible yet)."""
        try:
            found = self._es.get(index=self._target, id=url_fingerprint(url), realtime=False)
        except NotFoundError as exc:
            if isinstance(exc.body, dict) and exc.body.get("found") is False:
                return None
            raise
        doc = _from_source(found["_source"])
        return doc if doc.url == url else None

    def url_for_hash(self, content_hash: str) -> str | None:
        if not content_hash:
            return None
        result = self._es.search(
            index=self._target,
            query={"term": {"content_hash": content_hash}},
            # Two URLs may share a hash after a race; the smallest is a stable answer.
            sort=[{"url": "asc"}],
            size=1,
            source=False,
        )
        hits = result["hits"]["hits"]
        return str(hits[0]["sort"][0]) if hits else None

    def urls_for_hashes(self, content_hashes: Collection[str]) -> dict[str, str]:
        """One search a thousand hashes: a ``terms`` query collapsed on the hash, each
        group's first hit in URL order being ``url_for_hash``'s answer."""
        wanted = sorted({h for h in content_hashes if h})
        owners: dict[str, str] = {}
        for i in range(0, len(wanted), _HASHES_PER_SEARCH):
            part = wanted[i : i + _HASHES_PER_SEARCH]
            result = self._es.search(
                index=self._target,
                query={"terms": {"content_hash": part}},
                collapse={"field": "content_hash"},
                sort=[{"url": "asc"}],
                size=len(part),
                source_includes=["url", "content_hash"],
                track_total_hits=False,
            )
            for hit in result["hits"]["hits"]:
                owners[str(hit["_source"]["content_hash"])] = str(hit["_source"]["url"])
        return owners

    def fetch_times(self, urls: Collection[str]) -> dict[str, float]:
        """One ``_mget`` of the committed documents (``realtime=False``, as ``get``)."""
        wanted = sorted(set(urls))
        if not wanted:
            return {}
        found = self._es.mget(
            index=self._target, ids=[url_fingerprint(u) for u in wanted], source=["url", "fetched_at"], realtime=False
        )
        times: dict[str, float] = {}
        for url, doc in zip(wanted, found["docs"], strict=True):
            src = doc.get("_source") if doc.get("found") else None
            if src is not None and src.get("url") == url:  # a fingerprint is a hash: check the URL
                times[url] = float(src.get("fetched_at") or 0.0)
        return times

    def near_duplicates(self, signature: Sequence[int]) -> list[tuple[str, tuple[int, ...]]]:
        terms = minhash.bands(signature)
        if not terms:
            return []
        result = self._es.search(
            index=self._target,
            query={"terms": {"minhash_bands": terms}},
            source=["url", "minhash"],  # type: ignore[arg-type]  # a field list is valid _source; the client types only bool or a dict
            size=100,
        )
        found = [
            (str(h["_source"]["url"]), tuple(int(v) for v in h["_source"].get("minhash") or ()))
            for h in result["hits"]["hits"]
        ]
        return sorted(found)

    def view_version(self) -> None:
        """Unknown without a request: writes become visible at each refresh."""
        return None

    def term_stats(self, terms: Sequence[tuple[str, str]]) -> tuple[int, list[int]]:
        """One ``_msearch`` of counts: all documents, then each term's."""
        queries: list[dict[str, Any]] = [{"match_all": {}}] + [{"term": {f: _as_indexed(f, t)}} for f, t in terms]
        searches: list[dict[str, Any]] = []
        for q in queries:
            searches += [{}, {"size": 0, "track_total_hits": True, "query": q}]
        try:
            responses = self._es.msearch(index=self._target, searches=searches)["responses"]
        except ApiError as exc:
            raise IndexUnavailable(f"term statistics failed: {exc}") from exc
        counts = [int(r["hits"]["total"]["value"]) if "hits" in r else 0 for r in responses]
        return counts[0], counts[1:]

    def count(self) -> int:
        return int(self._es.count(index=self._target)["count"])

    def sites(self) -> list[str]:
        result = self._es.search(
            index=self._target, size=0, aggs={"sites": {"terms": {"field": "site", "size": _MAX_SITES}}}
        )
        return sorted(b["key"] for b in result["aggregations"]["sites"]["buckets"] if b["key"])

    def urls(self) -> list[str]:
        return list(self._scan_urls())

    def _scan_urls(self) -> Iterator[str]:
        """Every URL in URL order, through a point in time so that a concurrent
        refresh neither skips nor repeats a page."""
        pit = self._es.open_point_in_time(index=self._target, keep_alive="1m")["id"]
        try:
            after: list[Any] | None = None
            while True:
                result = self._es.search(
                    pit={"id": pit, "keep_alive": "1m"},
                    sort=[{"url": "asc"}],
                    size=_SCAN_PAGE,
                    source=False,
                    track_total_hits=False,
                    search_after=after,
                )
                pit = result.get("pit_id", pit)
                hits = result["hits"]["hits"]
                for hit in hits:
                    yield str(hit["sort"][0])
                if len(hits) < _SCAN_PAGE:
                    return
                after = hits[-1]["sort"]
        finally:
            self._es.close_point_in_time(id=pit)

    def ping(self) -> None:
        """Raise unless the cluster answers and the alias has a searchable index."""
        self._es.count(index=self._target)

    def force_merge(self, progress: Callable[[int, int], None] | None = None, timeout_s: float = 3600.0) -> MergeReport:
        """``POST /<index>/_forcemerge?max_num_segments=1`` on the index behind the
        alias, after a refresh. Elasticsearch merges on the server, so there is no
        progress to report; its docs advise it only for indices no longer written to,
        since a merged segment of deleted documents is not merged again soon."""
        self._require_writable()
        self._es.indices.refresh(index=self._target)
        self._es.options(request_timeout=timeout_s).indices.forcemerge(index=self._target, max_num_segments=1)
        return MergeReport(documents=self.count(), segments_before=None, segments_after=None)

    # --- writing

    def _require_writable(self) -> None:
        if self._read_only or self._closed:
            raise IndexUnavailable("search index opened read-only" if self._read_only else "search index is closed")

    def _update_of(self, url: str) -> dict[str, Any]:
        return {
            "update": {"_index": self._target, "_id": url_fingerprint(url), "retry_on_conflict": _RETRY_ON_CONFLICT}
        }

    def _hold(self, action: dict[str, Any], source: dict[str, Any] | None, missing_ok: bool) -> None:
        """Hold one write for the next bulk request; the caller holds the write lock."""
        self._require_writable()
        self._writes.add(action, source, missing_ok)

    def upsert(self, docs: Sequence[IndexDoc]) -> None:
        """Partial updates: Elasticsearch merges the content fields into the stored
        document under its per-document lock, so link fields written meanwhile by
        another process survive, and a redelivered page is a no-op (``detect_noop``).
        A new document is created from ``upsert``, with empty link fields, so that
        every document holds every token field (see ``token_fields``)."""
        with self._write_lock:
            for doc in docs:
                source = _content_source(doc)
                links = _link_source(doc.pagerank, doc.rank, doc.anchors, doc.anchors_tokens)
                if _has_link_fields(doc):
                    source.update(links)
                    source.update(_link_title_source(doc.filetype, doc.title, doc.anchors) or {})
                # An untitled document keeps the title fields its links' text gave it
                # (services/common/adapters/link_title.py) until its links change again.
                keep_title = doc.filetype and not doc.title and not _has_link_fields(doc)
                partial = {k: v for k, v in source.items() if not (keep_title and k in _TITLE_TOKEN_FIELDS)}
                self._hold(self._update_of(doc.url), {"doc": partial, "upsert": {**source, **links}}, missing_ok=False)

    def delete(self, urls: Iterable[str]) -> None:
        """A URL that is not indexed answers 404, which is ignored."""
        with self._write_lock:
            for url in urls:
                self._hold({"delete": {"_index": self._target, "_id": url_fingerprint(url)}}, None, missing_ok=True)

    def set_link_fields(self, fields: Mapping[str, LinkFields]) -> None:
        """Partial updates without upsert: a URL that is not indexed answers 404,
        which is ignored. An untitled document's title fields follow its anchor text
        (services/common/adapters/link_title.py): which documents those are is read
        first, in one request."""
        with self._write_lock:
            self._require_writable()
            if len(self._writes):
                # Documents upserted since the last send must be readable to the lookup
                # (a get is real-time; only a search waits for a refresh).
                self._writes.send(refresh=False)
            untitled = self._untitled_documents(list(fields))
            for url, new in fields.items():
                source = _link_source(new.pagerank, new.rank, new.anchors, new.anchors_tokens)
                if url in untitled:
                    source |= _link_title_source(untitled[url], "", new.anchors) or {}
                self._hold(self._update_of(url), {"doc": source}, missing_ok=True)

    def _untitled_documents(self, urls: list[str]) -> dict[str, str]:
        """URL -> format of each of ``urls`` that is a document without a title of its own."""
        if not urls:
            return {}
        found = self._es.mget(index=self._target, ids=[url_fingerprint(u) for u in urls],
                              source_includes=["url", "title", "filetype"])  # fmt: skip
        out = {}
        for doc in found["docs"]:
            src = doc.get("_source") or {}
            if doc.get("found") and src.get("filetype") and not src.get("title"):
                out[str(src["url"])] = str(src["filetype"])
        return out

    def commit(self) -> None:
        """Send the writes held and refresh. A request is durable once answered
        (translog fsync per request), so the refresh is all that makes them
        searchable; it rides on the request when that is the only one since the
        last refresh (a refresh on a bulk request covers the shards it wrote)."""
        with self._write_lock:
            self._require_writable()
            alone = not self._writes.sent_since_refresh
            if self._writes.send(refresh=alone):
                return
            self._es.indices.refresh(index=self._target)
            self._writes.sent_since_refresh = False

    def searched_at(self) -> float | None:
        """Not told: a cluster's searches run in other pods, so the indexers refresh
        at their interval whoever searches (the index's ``refresh_interval`` is -1:
        Elasticsearch's own search-idle rule does not apply to explicit refreshes)."""
        return None

    def close(self, finish_merges: bool = False) -> None:
        """Release the connections. Writes still held are dropped, as tantivy drops
        what was not committed; those already sent were durable once acknowledged,
        and the next commit anywhere shows them. The server merges on its own, so
        ``finish_merges`` has nothing to wait for."""
        with self._write_lock:
            dropped = self._writes.drop()
        if dropped:
            log.info("search index %s closed with %d uncommitted writes, dropped", self._target, dropped)
        self._closed = True
        if self._owns_client:
            self._es.close()

    # --- searching

    def _query(self, query: SearchQuery) -> dict[str, Any]:
        """The Elasticsearch query for a SearchQuery: its tree, plus the rank feature,
        which only adds score (nested beside the tree, never a match on its own)."""
        cfg = self._cfg
        body: dict[str, Any] = {"must": [_translate(query.tree)]}
        if cfg.search_pagerank_weight > 0 and cfg.search_pagerank_pivot > 0:
            body["should"] = [
                {
                    "rank_feature": {
                        "field": "rank",
                        "saturation": {"pivot": cfg.search_pagerank_pivot},
                        "boost": cfg.search_pagerank_weight,
                    }
                }
            ]
        return {"bool": body}

    def search(self, query: SearchQuery) -> SearchHits:
        limit = max(0, query.limit)
        offset = max(0, query.offset)
        if not can_match(query.tree) or limit == 0:
            return SearchHits(total=0, hits=[])
        es_query = self._query(query)
        result = self._es.search(
            index=self._target,
            query=es_query,
            from_=offset,
            size=limit,
            # Equal scores (or dates) in URL order, so that paging is deterministic.
            sort=_DATE_SORT if query.sort == "date" else [{"_score": "desc"}, {"url": "asc"}],
            track_scores=True,
            track_total_hits=True,
            source_includes=_HIT_FIELDS,
            # Index-wide term statistics when there are several shards, so BM25 does
            # not depend on which shard a page landed on (a no-op with one shard).
            search_type="dfs_query_then_fetch",
        )
        hits = []
        for hit in result["hits"]["hits"]:
            src = hit["_source"]
            hits.append(
                SearchHit(
                    url=src["url"],
                    site=src.get("site") or "",
                    title=src.get("title") or "",
                    headings=src.get("headings") or "",
                    body=src.get("body") or "",
                    score=float(hit["_score"]),
                    pagerank=float(src.get("pagerank") or 0.0),
                    content_hash=src.get("content_hash") or "",
                    minhash=tuple(int(v) for v in src.get("minhash") or ()),
                    fetched_at=float(src.get("fetched_at") or 0.0),
                    modified_at=float(src.get("modified_at") or 0.0),
                    filetype=src.get("filetype") or "",
                    doc_size=int(src.get("doc_size") or 0),
                    doc_pages=int(src.get("doc_pages") or 0),
                    anchors=src.get("anchors") or "",
                )
            )
        return SearchHits(total=int(result["hits"]["total"]["value"]), hits=hits)


def _as_indexed(field: str, token: str) -> str:
    """A token as the template's analyzer indexed it: lower-cased, which a term query
    does not do. The analysis folds with ``casefold``, which leaves every script lower
    case but Cherokee (whose case folding is to capitals): unmatched, no Cherokee word
    was ever found."""
    return token.lower() if field in template.ANALYZED_FIELDS else token


def _translate(node: Node) -> dict[str, Any]:
    """One query-tree node as Elasticsearch query DSL (see services/common/domain/query_tree.py).

    ``term``, not ``match``: the tokens are already analysed and must not be analysed
    again; ``match_phrase`` with the whitespace analyzer splits exactly what we joined.
    """
    if isinstance(node, Term):
        return {"term": {node.field: {"value": _as_indexed(node.field, node.value), "boost": node.boost}}}
    if isinstance(node, Phrase):
        if node.prefix:
            prefix = {"match_phrase_prefix": {node.field: {"query": " ".join(node.values)}}}
            return prefix if node.boost == 1.0 else {"bool": {"must": [prefix], "boost": node.boost}}
        if len(node.values) == 1:
            return {"term": {node.field: {"value": _as_indexed(node.field, node.values[0]), "boost": node.boost}}}
        phrase = {"match_phrase": {node.field: {"query": " ".join(node.values)}}}
        # The boost on a wrapping bool: Elasticsearch reads match_phrase's own boost too,
        # but not every server that speaks its API does (noida-db ignores it).
        return phrase if node.boost == 1.0 else {"bool": {"must": [phrase], "boost": node.boost}}
    body: dict[str, Any] = {}
    for name in ("must", "should", "must_not", "filter"):
        children = getattr(node, name)
        if children:
            body[name] = [_translate(n) for n in children]
    if not node.must and not node.should and not node.filter:
        body["must"] = [{"match_all": {"boost": 0.0}}]
    if node.should:
        body["minimum_should_match"] = node.minimum_should_match
    if node.boost != 1.0:
        body["boost"] = node.boost
    return {"bool": body}
