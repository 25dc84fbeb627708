"""A real Redis 7 for integration tests (INFRA.md): loopback only, no persistence, stopped by PID.

Tests share one session server and keep apart by key prefix, as scrapy-redis's tests
do: ``redis_url`` hands each test a fresh prefix and deletes its keys afterwards.
``redis_cluster`` is a Redis Cluster of three primaries made of the same Debian
``redis-server`` (``--cluster-enabled yes``, joined by ``redis-cli --cluster create``),
and ``redis_cluster_url`` a fresh prefix on it, for the code that must run on both.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.servers.net import free_port, stop_process, wait_for_port


class RedisServer:
    """One redis-server process; ``stop`` and ``start`` again keep the port, so a test
    can take Redis away from a client and give it back."""

    def __init__(self, workdir: Path, port: int | None = None, persistent: bool = False, cluster: bool = False) -> None:
        """``persistent`` keeps data across a restart (append-only file), as a production
        Redis holding a frontier must; ``cluster`` starts it as a node of a Redis Cluster."""
        self.port = port or free_port()
        self.workdir = workdir
        self.persistent = persistent
        self.cluster = cluster
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not Path(binary).exists():
            raise RuntimeError("redis-server is not installed: run scripts/install.sh test (apt-get install redis-server)")
        self.workdir.mkdir(parents=True, exist_ok=True)
        # In the foreground (no --daemonize), so the PID we hold is the server's own.
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes" if self.persistent else "no", "--appendfsync", "always",
             "--dir", str(self.workdir), "--logfile", str(self.workdir / "redis.log"),
             *(["--cluster-enabled", "yes", "--cluster-config-file", str(self.workdir / "nodes.conf"),
                "--cluster-node-timeout", "2000"] if self.cluster else [])],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for_port(self.port, self.proc)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None


def _cluster_port() -> int:
    """A free port whose cluster bus port (itself + 10,000) exists and is free too."""
    while True:
        port = free_port()
        if port + 10_000 >= 65_536:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 10_000))
            except OSError:
                continue
        return port


class RedisCluster:
    """Three primaries, no replicas, each slot on one of them (5,461 or so each)."""

    def __init__(self, workdir: Path, nodes: int = 3) -> None:
        self.nodes = [RedisServer(workdir / f"node{n}", port=_cluster_port(), cluster=True) for n in range(nodes)]

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{node.port}" for node in self.nodes) + "/0"

    def start(self) -> None:
        for node in self.nodes:
            node.start()
        cli = shutil.which("redis-cli") or "/usr/bin/redis-cli"
        subprocess.run([cli, "--cluster", "create", *(f"127.0.0.1:{node.port}" for node in self.nodes),
                        "--cluster-replicas", "0", "--cluster-yes"], check=True, capture_output=True, timeout=60)  # fmt: skip
        # create returns once the slots are assigned; every node must also agree.
        deadline = time.monotonic() + 30
        for node in self.nodes:
            while "cluster_state:ok" not in subprocess.run(
                [cli, "-p", str(node.port), "cluster", "info"], capture_output=True, text=True, timeout=10
            ).stdout:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"Redis Cluster node {node.port} never reported cluster_state:ok")
                time.sleep(0.1)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


def _delete_prefixed(ports: list[int], prefix: str) -> None:
    for port in ports:
        client = redis.Redis(host="127.0.0.1", port=port)
        try:
            keys = list(client.scan_iter(match=f"{prefix}:*", count=5000))
            for key in keys:  # one by one: a cluster node refuses a multi-key UNLINK across slots
                client.unlink(key)
        finally:
            client.close()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster]:
    cluster = RedisCluster(tmp_path_factory.mktemp("redis-cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def redis_cluster_url(redis_cluster: RedisCluster) -> Iterator[str]:
    """The session cluster's URL with a key prefix of this test's own."""
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    yield f"{redis_cluster.url}?prefix={prefix}"
    _delete_prefixed([node.port for node in redis_cluster.nodes], prefix)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """The session server's URL with a key prefix of this test's own."""
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    yield f"{redis_server.url}?prefix={prefix}"
    client = redis.Redis(host="127.0.0.1", port=redis_server.port)
    try:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=5000))
        for start in range(0, len(keys), 5000):
            client.unlink(*keys[start : start + 5000])
    finally:
        client.close()
