"""Hits made from the fold-key columns answer exactly as whole hits, and read fewer
documents; an index built before the columns keeps working as it is."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest
import tantivy
from hypothesis import given, settings
from hypothesis import strategies as st

from services.common.adapters.tantivy import fold_keys
from services.common.adapters.tantivy.search_index import (
    _LAYOUTS,
    TantivySearchIndex,
    _schema,
)
from services.common.config import Settings
from services.common.domain import minhash
from services.common.domain.documents import IndexDoc, LinkFields
from services.search.search_service import SearchService
from tests.page_events import index_doc

CFG = Settings(search_rescore_window=50, search_results_per_site=2)
SITES = ("a.example.cn", "b.example.cn", "c.example.cn")
QUERIES = ("共同", "共同 主题", "主题", "共同 副本")


def _pages() -> list[IndexDoc]:
    """36 pages on three sites holding 共同: near-copies (one word changed), exact copies
    (one content hash), short pages without a signature, and distinct pages."""
    rng = random.Random(7)
    vocabulary = [f"词{n}" for n in range(400)]
    docs = []
    for n in range(36):
        words = rng.sample(vocabulary, 60)
        if n % 6 == 1:  # a near-copy of the page before it
            words = docs[-1].body_tokens.split()[2:]
            words[5] = "副本"
        body = " ".join(["共同", *words[:5 if n % 9 == 4 else 60]])  # every ninth is short
        site = SITES[n % 3]
        hash_ = "c0ffee" * 6 + "abcd" if n in (10, 20) else ""  # two exact copies
        doc = index_doc(f"https://{site}/p{n}", title="主题" if n % 4 == 0 else "页面", body=body, site=site,
                        content_hash=hash_)  # fmt: skip
        docs.append(_signed(doc))
    return docs


def _signed(doc: IndexDoc) -> IndexDoc:
    return dataclasses.replace(doc, minhash=minhash.signature(doc.body_tokens.split()))


def _filled(path: Path, docs: list[IndexDoc]) -> TantivySearchIndex:
    index = TantivySearchIndex(path, CFG)
    index.upsert(docs)
    index.commit()
    return index


def _answers(index: TantivySearchIndex) -> list[dict[str, object]]:
    service = SearchService(CFG, index)
    out = []
    for q in QUERIES:
        for page in (1, 2, 3):
            answer = service.search(q, page=page, size=10)
            answer.pop("took_ms")
            out.append(answer)
    return out


@pytest.fixture
def legacy_path(tmp_path: Path) -> Path:
    """An index directory created with the layout before the fold keys."""
    path = tmp_path / "legacy"
    path.mkdir()
    tantivy.Index(_schema(*_LAYOUTS[-1]), path=str(path))
    return path


def test_hits_from_the_columns_answer_as_whole_hits(tmp_path: Path, legacy_path: Path) -> None:
    docs = _pages()
    new, old = _filled(tmp_path / "new", docs), _filled(legacy_path, docs)
    assert new._fold_keys and not old._fold_keys
    answers = _answers(new)
    assert answers == _answers(old)
    # The fixture really folds and spreads: copies under a lead, sites moved on.
    assert any(r["similar"] for a in answers for r in a["results"])  # type: ignore[union-attr]
    assert any(a["more_from_sites"] for a in answers)
    new.close()
    old.close()


def test_a_search_reads_only_the_documents_it_shows(tmp_path: Path, legacy_path: Path) -> None:
    # One length, the word n+1 times: different scores, so no tie is read to order it by
    # URL; words of its own for the rest, so no page folds into another.
    bodies = [["共同"] * (n + 1) + [f"填{n}_{i}" for i in range(60 - n)] for n in range(40)]
    docs = [_signed(index_doc(f"https://a.example.cn/{n}", body=" ".join(words))) for n, words in enumerate(bodies)]
    new, old = _filled(tmp_path / "new", docs), _filled(legacy_path, docs)
    for index in (new, old):
        SearchService(CFG, index).search("共同", page=1, size=10)
    assert len(new._hits) == 10  # the ten shown
    assert len(old._hits) == 30  # the whole window: the first page and 20 more
    new.close()
    old.close()


@pytest.mark.parametrize("layout", _LAYOUTS[1:], ids=["before link_grams", "before the documents", "before the page dates", "before own_text", "before the fold keys"])
def test_an_index_of_an_older_layout_stays_writable_in_it(tmp_path: Path, layout: tuple[bool, ...]) -> None:
    legacy_path = tmp_path / "legacy"
    legacy_path.mkdir()
    tantivy.Index(_schema(*layout), path=str(legacy_path))
    before = json.loads((legacy_path / "meta.json").read_text())["schema"]
    index = TantivySearchIndex(legacy_path, CFG)
    assert (index._fold_keys, index._own_text, index._dates, index._documents, index._link_grams) == layout
    index.upsert([_signed(index_doc("https://a.example.cn/1", body="共同 一")), index_doc("https://a.example.cn/2", body="共同")])
    index.commit()
    index.set_link_fields({"https://a.example.cn/1": LinkFields(pagerank=0.5, rank=2.0, anchors="", anchors_tokens="")})
    index.delete(["https://a.example.cn/2"])
    index.commit()
    reader = TantivySearchIndex(legacy_path, CFG, read_only=True)
    assert [r["url"] for r in SearchService(CFG, reader).search("共同")["results"]] == ["https://a.example.cn/1"]
    assert SearchService(CFG, reader).search('"共同"')["total"] == 1  # a quoted phrase asks for link_grams too
    assert json.loads((legacy_path / "meta.json").read_text())["schema"] == before
    reader.close()
    index.close()


_signatures = st.one_of(st.just(()), st.lists(st.integers(0, 2**32 - 1), min_size=64, max_size=64).map(tuple))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.text(max_size=12), st.sampled_from(["", "a" * 40, "0f" * 20]), _signatures), min_size=1, max_size=8))
def test_the_columns_give_back_each_key(pages: list[tuple[str, str, tuple[int, ...]]]) -> None:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("t")
    fold_keys.add_schema_fields(sb)
    index = tantivy.Index(sb.build())
    writer = index.writer()
    for n, (site, content_hash, signature) in enumerate(pages):
        doc = tantivy.Document(t=f"d{n}")
        fold_keys.add_to(doc, site, content_hash, signature)
        writer.add_document(doc)
    writer.commit()
    index.reload()
    searcher = index.searcher()
    addresses = [searcher.search(tantivy.Query.term_query(index.schema, "t", f"d{n}")).hits[0][1] for n in range(len(pages))]
    keys = fold_keys.read(searcher, addresses)
    for (site, content_hash, _signature), k in zip(pages, keys, strict=True):
        assert k.site == fold_keys.key(site)
        assert bool(k.copy) == bool(content_hash)
    assert len({k.copy for (_, h, _), k in zip(pages, keys, strict=True) if h}) == len({h for _, h, _ in pages if h})
    # The band columns hold 16 bits of each band term the index stores, the first band highest.
    columns = [searcher.fast_field_values(name, addresses) for name in fold_keys.BAND_FIELDS]
    for (_, _, signature), row in zip(pages, zip(*columns, strict=True), strict=True):
        terms = [int(t.split(":")[1][:4], 16) for t in minhash.bands(signature)]
        assert list(row) == ([sum(v << (48 - 16 * (i % 4)) for i, v in enumerate(terms[j : j + 4])) for j in range(0, 16, 4)] if terms else [None] * 4)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(st.integers(0, 3), min_size=16, max_size=16).map(tuple)), max_size=10))
def test_hits_sharing_a_band_are_those_that_can_fold(bands: list[tuple[int, ...] | None]) -> None:
    rows = [fold_keys.pack(b) if b else [None] * 4 for b in bands]
    columns = [list(column) for column in zip(*rows, strict=True)] if rows else []
    expected = {
        n for n, a in enumerate(bands) for m, b in enumerate(bands)
        if n != m and a and b and any(x == y for x, y in zip(a, b, strict=True))
    }  # fmt: skip
    assert fold_keys.sharing_a_band(columns) == expected


def _siblings(path: Path) -> list[str]:
    """The directory's entries but the searches' stamp (``SearchMarker``), which stays."""
    return [p.name for p in path.parent.iterdir() if not p.name.endswith(".searched")]


def test_force_merge_brings_an_older_index_to_the_current_fields(legacy_path: Path) -> None:
    docs = _pages()
    old = _filled(legacy_path, docs)
    reader = TantivySearchIndex(legacy_path, CFG, read_only=True)  # as `tansuo serve` beside it
    before = _answers(old)
    report = old.force_merge()
    assert report.new_layout and report.documents == len(docs)
    assert old._fold_keys and set(fold_keys.FIELDS) <= {f["name"] for f in json.loads((legacy_path / "meta.json").read_text())["schema"]}
    assert _answers(old) == before
    assert _siblings(legacy_path) == [legacy_path.name]  # no staged copy left
    assert _answers(reader) == before  # a reader open across the swap still answers
    assert TantivySearchIndex(legacy_path, CFG, read_only=True)._fold_keys  # a new one uses the columns
    old.upsert([_signed(index_doc("https://a.example.cn/new", body="共同 新"))])
    old.commit()
    assert old.count() == len(docs) + 1
    reader.close()
    old.close()


def test_a_stopped_copy_leaves_the_older_index_as_it_was(legacy_path: Path) -> None:
    old = _filled(legacy_path, _pages())
    before = _answers(old)

    def stop(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        old.force_merge(stop)
    old.close()
    again = TantivySearchIndex(legacy_path, CFG)
    assert not again._fold_keys and _answers(again) == before
    assert _siblings(legacy_path) == [legacy_path.name]
    again.close()


def test_a_swap_stopped_between_its_renames_is_finished_on_open(legacy_path: Path) -> None:
    old = _filled(legacy_path, _pages())
    before = _answers(old)
    old.close()
    staged = legacy_path.with_name("legacy.next")  # a committed copy, as the merge writes it
    new = _filled(staged, _pages())
    new.close()
    legacy_path.rename(legacy_path.with_name("legacy.previous"))  # the first rename, then a crash
    index = TantivySearchIndex(legacy_path, CFG, read_only=True)
    assert index._fold_keys and _answers(index) == before
    assert _siblings(legacy_path) == [legacy_path.name]
    index.close()


def test_an_index_from_before_the_page_dates_sorts_by_date_from_its_fetch_times(tmp_path: Path) -> None:
    from services.common.domain.search_types import SearchQuery
    from services.search.query_plan import words_query

    path = tmp_path / "legacy"
    path.mkdir()
    tantivy.Index(_schema(*_LAYOUTS[3]), path=str(path))
    index = TantivySearchIndex(path, CFG)
    assert not index._dates
    docs = [dataclasses.replace(index_doc(f"https://a.example.cn/{n}", body="共同"), fetched_at=t)
            for n, t in enumerate([3.0e9, 1.0e9, 2.0e9])]  # fmt: skip
    index.upsert(docs)
    index.commit()
    found = index.search(SearchQuery(tree=words_query(CFG, ["共同"]), limit=2, sort="date"))
    assert found.total == 3 and [h.url for h in found.hits] == ["https://a.example.cn/0", "https://a.example.cn/2"]
    index.close()
