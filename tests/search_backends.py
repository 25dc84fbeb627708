"""A search service over the same documents in either index backend, for the tests
that hold both to one behaviour: a real tantivy index, or a fresh alias on the test
suite's Elasticsearch-API server (tests/servers/es_server.py)."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from services.common.adapters.elasticsearch.search_index import ElasticsearchSearchIndex
from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.config import Settings
from services.common.domain.documents import IndexDoc
from services.common.ports import SearchIndex
from services.search.search_service import SearchService
from tests.servers.es_server import drop_alias

# The ``params`` of a fixture that runs its tests on both backends.
BACKENDS = ["tantivy", pytest.param("elasticsearch", marks=pytest.mark.integration)]


@contextmanager
def service_over(request: pytest.FixtureRequest, docs: Sequence[IndexDoc], cfg: Settings) -> Iterator[SearchService]:
    """A SearchService over ``docs``, committed, in the backend ``request.param`` names;
    the index is closed and the alias dropped after."""
    with tempfile.TemporaryDirectory() as tmp:
        index: SearchIndex
        if request.param == "elasticsearch":
            alias = f"tansuo-test-{uuid.uuid4().hex[:12]}"
            es_url, client = request.getfixturevalue("es_url"), request.getfixturevalue("es_client")
            request.addfinalizer(lambda: drop_alias(client, alias))
            index = ElasticsearchSearchIndex.from_url(es_url.replace("http://", "elasticsearch://", 1) + "/" + alias, cfg)
        else:
            index = TantivySearchIndex(Path(tmp) / "index", cfg)
        index.upsert(list(docs))
        index.commit()
        try:
            yield SearchService(cfg, index)
        finally:
            index.close()
