"""A slow search backend with one client gives slow answers, never "busy".

The issue's case: `tansuo api` over an Elasticsearch that answers in about a second,
one client sending known-item searches one after another, got 503 for most of them,
since the worker refused on arrival whenever its mean search time passed the
deadline, with every thread idle. Here the Elasticsearch-API test server sits behind
a proxy that holds every request for a while, the deadline is below one search's
time, and `tansuo eval --url` runs a known-item set through the api service: it must
finish without a single refusal (eval stops at the first non-200 answer).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from services.common.adapters.elasticsearch.search_index import ElasticsearchSearchIndex
from services.common.config import Settings
from services.indexer.document_builder import build_document
from tests.integration.test_api_under_load import Server, start  # noqa: F401  (the fixture)
from tests.search_pages import PAGES, page_events, url
from tests.servers.net import free_port

pytestmark = pytest.mark.integration

BACKEND_DELAY_S = 0.4  # every request to the backend; a search makes one or more
DEADLINE_S = 0.3


class DelayingProxy:
    """TCP proxy that holds each chunk a client sends for ``delay_s`` before passing
    it on: a backend that answers slowly, at any load."""

    def __init__(self, upstream_port: int, delay_s: float) -> None:
        self.port = free_port()
        self._upstream = upstream_port
        self._delay_s = delay_s
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self._upstream))
            threading.Thread(target=self._pipe, args=(client, upstream, self._delay_s), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, 0.0), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket, delay_s: float) -> None:
        try:
            while data := source.recv(65536):
                time.sleep(delay_s)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._listener.close()


@pytest.fixture
def slow_index_url(es_url: str, es_alias: str) -> Iterator[str]:
    index = ElasticsearchSearchIndex.from_url(
        es_url.replace("http://", "elasticsearch://", 1) + "/" + es_alias, Settings()
    )
    index.upsert([build_document(event) for event in page_events()])
    index.commit()
    index.close()
    proxy = DelayingProxy(int(es_url.rsplit(":", 1)[1]), BACKEND_DELAY_S)
    yield f"elasticsearch://127.0.0.1:{proxy.port}/{es_alias}"
    proxy.close()


def test_one_client_on_a_slow_backend_is_never_refused(
    start: Callable[..., Server], slow_index_url: str, tmp_path: Path
) -> None:
    server = start("api", TANSUO_INDEX=slow_index_url, TANSUO_API_WORKERS="1", TANSUO_API_QUEUE_DEADLINE_S=str(DEADLINE_S),
                   TANSUO_SEARCH_CACHE_ENTRIES="0")  # fmt: skip
    judged = tmp_path / "titles.tsv"
    judged.write_text("".join(f"title\t{title}\t{url(site, path)}\n" for site, path, title, _, _ in PAGES[:20]),
                      encoding="utf-8")  # fmt: skip

    done = subprocess.run(
        [sys.executable, "-m", "services.cli.main", "eval", str(judged), "--url", f"http://127.0.0.1:{server.port}",
         "--no-baselines", "--json", "--no-progress"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr[-2000:]  # a 503 would stop it: "answered 503"
    figures = json.loads(done.stdout)["rankers"]["tansuo"]["overall"]
    assert figures["queries"] == 20 and figures["mrr@10"] > 0.8
