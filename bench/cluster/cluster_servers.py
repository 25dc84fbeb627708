"""The four servers a cluster crawl needs (Redis, a Kafka-protocol broker, an S3 server,
an Elasticsearch-API server), started on free loopback ports for a benchmark.

The classes are the test suite's own (``tests/servers``): a benchmark that starts its
servers some other way would measure a different cluster from the one the tests
check. They need the test install (``bash scripts/install.sh test``), which puts the
servers' binaries in the venv (INFRA.md has the versions and their quirks).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.cluster import cluster_env
from tests.servers.es_server import EsServer
from tests.servers.kafka_broker import KafkaBroker
from tests.servers.redis_server import RedisServer
from tests.servers.s3_server import S3Server


@dataclass(frozen=True)
class Servers:
    redis: RedisServer
    kafka: KafkaBroker
    s3: S3Server
    es: EsServer

    def cluster_env(self, workdir: Path) -> dict[str, str]:
        """The services' environment on these servers, as the cluster e2e tests set it."""
        return cluster_env(workdir, self.redis, self.kafka, self.s3.endpoint, self.es.url)


@contextmanager
def running_servers(workdir: Path) -> Iterator[Servers]:
    """All four servers running, each in its own directory under ``workdir``; each is
    stopped by PID on the way out, whatever happened."""
    with ExitStack() as stack:
        redis = RedisServer(workdir / "redis")
        s3 = S3Server(workdir / "s3")
        kafka = KafkaBroker(workdir / "tansu")
        es = EsServer(workdir / "noida-db")
        for server in (redis, s3, kafka, es):
            stack.callback(server.stop)
            server.start()
        yield Servers(redis, kafka, s3, es)
