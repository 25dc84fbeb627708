"""Session fixture for an Elasticsearch 8 API: noida-db (a Rust re-implementation of
the Elasticsearch 8.15 REST API, see INFRA notes) on a free loopback port.

The binary inside the package is started directly: its console-script wrapper
would leave the server running when killed. Each test takes a fresh alias from
``es_alias`` and its indices and template are deleted afterwards.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch, NotFoundError

from tests.servers.net import LoggedProcess, free_port, wait_for_http_ok, wait_for_port


def noida_binary() -> Path:
    noida_db = pytest.importorskip("noida_db", reason="pip install noida-db==0.2.3 for Elasticsearch tests")
    return Path(noida_db.__file__).parent / "noida-db"


class EsServer(LoggedProcess):
    """One noida-db process on a free loopback port, data in ``workdir``."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        super().__init__()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        binary = noida_binary()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._log = open(self.workdir / "server.log", "wb")  # closed in stop()
        self.proc = subprocess.Popen(
            [
                str(binary), "start", "--only", "elasticsearch", "--elasticsearch-port", str(self.port),
                "--host", "127.0.0.1", "--data-dir", str(self.workdir / "data"),
            ],  # fmt: skip
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for_port(self.port, self.proc)
            wait_for_http_ok(self.url, self.proc)
        except BaseException:
            self.stop()
            raise


@pytest.fixture(scope="session")
def es_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a running Elasticsearch-API server."""
    server = EsServer(tmp_path_factory.mktemp("noida-db"))
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def es_client(es_url: str) -> Iterator[Elasticsearch]:
    client = Elasticsearch(es_url, request_timeout=60)
    yield client
    client.close()


def drop_alias(es: Elasticsearch, alias: str) -> None:
    """Delete an alias's concrete indices and its index template (by name: wildcard
    deletes are refused, as on a real cluster with destructive_requires_name)."""
    names = list(es.indices.get(index=f"{alias}-*", expand_wildcards="all").body)
    if names:
        es.indices.delete(index=",".join(names), ignore_unavailable=True)
    try:
        es.indices.delete_index_template(name=alias)
    except NotFoundError:
        pass


@pytest.fixture
def es_alias(es_client: Elasticsearch) -> Iterator[str]:
    """A fresh alias name, cleaned up after the test."""
    alias = f"tansuo-test-{uuid.uuid4().hex[:12]}"
    yield alias
    drop_alias(es_client, alias)


@pytest.fixture
def es_index_url(es_url: str, es_alias: str) -> str:
    """A TANSUO_INDEX URL for a fresh alias on the test server."""
    return es_url.replace("http://", "elasticsearch://", 1) + "/" + es_alias
