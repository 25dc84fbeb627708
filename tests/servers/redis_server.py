"""A real Redis 7 for integration tests (INFRA.md): loopback only, no persistence, stopped by PID.

Tests share one session server and keep apart by key prefix, as scrapy-redis's tests
do: ``redis_url`` hands each test a fresh prefix and deletes its keys afterwards.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.servers.net import free_port, stop_process, wait_for_port


class RedisServer:
    """One redis-server process; ``stop`` and ``start`` again keep the port, so a test
    can take Redis away from a client and give it back."""

    def __init__(self, workdir: Path, port: int | None = None, persistent: bool = False) -> None:
        """``persistent`` keeps data across a restart (append-only file), as a production
        Redis holding a frontier must."""
        self.port = port or free_port()
        self.workdir = workdir
        self.persistent = persistent
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
             "--dir", str(self.workdir), "--logfile", str(self.workdir / "redis.log")],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for_port(self.port, self.proc)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None


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
