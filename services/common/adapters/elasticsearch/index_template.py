"""The Elasticsearch index template behind a Tansuo alias: settings and mappings.

Text reaches Elasticsearch already segmented by the indexer (``IndexDoc.*_tokens``),
so the only analyzer is a whitespace tokenizer plus lower-casing: no analysis
plugin (smartcn, IK, ICU) is needed, and the template works on every
Elasticsearch version and on hosted clusters that allow no plugins. The fields
mirror the tantivy schema in ``search_index_tantivy.py`` one for one.
"""

from __future__ import annotations

from typing import Any

from services.common.domain.documents import DISPLAY_FIELDS, LINK_GRAMS

# Bump when the settings or mappings change: an index built from an older
# template keeps working, and the adapter logs that a reindex would apply the
# new one (``ElasticsearchSearchIndex.reindex_into_new_index``).
MAPPING_VERSION = 6
ANALYZER = "tansuo_tokens"
# Above the priority 100 of Elasticsearch's built-in templates (logs-*-*, ...), which
# a pattern such as "logs-*" would otherwise overlap; equal priorities may not overlap.
TEMPLATE_PRIORITY = 500

# Stored for display and snippets, never searched: the segmented twins are.
_TOKEN_FIELDS = ("title_tokens", "headings_tokens", "body_tokens", "anchors_tokens", "title_grams", "body_grams")
# Every field ANALYZER splits (and lower-cases) at index time.
ANALYZED_FIELDS = frozenset((*_TOKEN_FIELDS, "subword_tokens", LINK_GRAMS))


def index_pattern(alias: str) -> str:
    """Concrete indices are ``<alias>-000001``, ``<alias>-000002``, ... The ``0`` keeps
    the patterns of two deployments on one cluster apart: Elasticsearch rejects
    templates of equal priority whose patterns overlap, and ``tansuo-*`` would
    overlap ``tansuo-staging-*`` where ``tansuo-0*`` does not."""
    return f"{alias}-0*"


def added_fields(version: int | None) -> dict[str, Any]:
    """Mappings of the fields that versions after ``version`` added: Elasticsearch
    lets a live index gain fields, so an older index keeps taking writes."""
    token_text = {"type": "text", "analyzer": ANALYZER}
    added: dict[str, Any] = {}
    if (version or 0) < 3:
        added.update({"title_grams": dict(token_text), "body_grams": dict(token_text)})
    if (version or 0) < 4:
        added.update(_PAGE_FIELDS)
    if (version or 0) < 5:
        added.update(_DOCUMENT_FIELDS)
    if (version or 0) < 6:
        added.update({LINK_GRAMS: dict(token_text)})
    return added


# Added in version 4: the page's date (sort by date), the page store's key of its raw
# page (the cached copy), and a page of links' own text (its reanalysis).
_PAGE_FIELDS: dict[str, Any] = {
    "modified_at": {"type": "date", "format": "epoch_second"},
    "store_key": {"type": "keyword", "index": False, "doc_values": False},
    "own_text": {"type": "text", "index": False},
}

# Added in version 5: a document's format (the filetype: filter), and its size and
# pages, shown only.
_DOCUMENT_FIELDS: dict[str, Any] = {
    "filetype": {"type": "keyword"},
    "doc_size": {"type": "long", "index": False, "doc_values": False},
    "doc_pages": {"type": "integer", "index": False, "doc_values": False},
}


def index_template(alias: str, shards: int, replicas: int) -> dict[str, Any]:
    """Keyword arguments for ``indices.put_index_template``."""
    token_text = {"type": "text", "analyzer": ANALYZER}
    properties: dict[str, Any] = {
        "url": {"type": "keyword"},
        "site": {"type": "keyword"},
        "content_hash": {"type": "keyword"},
        # MinHash signature: read back for near-duplicate checks, never searched.
        "minhash": {"type": "long", "index": False, "doc_values": False},
        "minhash_bands": {"type": "keyword"},
        **{name: {"type": "text", "index": False} for name in DISPLAY_FIELDS},
        # Positions, as in tantivy, so words and bigrams serve phrase queries.
        **{name: dict(token_text) for name in _TOKEN_FIELDS},
        # Sub-words only ever get term queries: frequencies are enough.
        "subword_tokens": {**token_text, "index_options": "freqs"},
        "fetched_at": {"type": "date", "format": "epoch_second"},
        **_PAGE_FIELDS,
        "pagerank": {"type": "float"},
        # rank_feature keeps 9 significant bits of the value (Lucene's FeatureField),
        # about 0.4% precision; _source still returns the value as written.
        "rank": {"type": "rank_feature"},
        **_DOCUMENT_FIELDS,
        # Added in version 6: a page of links' shown text, for quoted phrases only.
        LINK_GRAMS: dict(token_text),
    }
    return {
        "name": alias,
        "index_patterns": [index_pattern(alias)],
        "priority": TEMPLATE_PRIORITY,
        "meta": {"managed_by": "tansuo", "mapping_version": MAPPING_VERSION},
        "template": {
            "settings": {
                "index": {
                    "number_of_shards": shards,
                    "number_of_replicas": replicas,
                    # Searches see writes only after commit() refreshes, as the port
                    # promises; a periodic refresh would show half an indexer batch.
                    "refresh_interval": "-1",
                    # fsync the translog before a bulk request is acknowledged: an
                    # acknowledged write survives a crash, so commit() need not flush.
                    "translog": {"durability": "request"},
                    "analysis": {
                        "analyzer": {
                            ANALYZER: {"type": "custom", "tokenizer": "whitespace", "filter": ["lowercase"]}
                        }
                    },
                }
            },
            "mappings": {
                # A typo in a field name fails the write instead of adding a field.
                "dynamic": "strict",
                "_meta": {"mapping_version": MAPPING_VERSION},
                "properties": properties,
            },
        },
    }
