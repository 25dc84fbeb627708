"""Finding a free loopback port and waiting for a server to listen on it."""

from __future__ import annotations

import itertools
import os
import random
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable
from typing import IO

# Ports for the servers tests start, below Linux's ephemeral range (32768 and up by
# default), so that no outgoing connection takes one between the test choosing it and
# the server binding it, and split between pytest-xdist workers, so that two workers
# never choose the same one.
_PORTS = range(12_000, 32_000)


def _worker_ports() -> range:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    index = int(worker[2:]) if worker[2:].isdigit() else 0
    share = len(_PORTS) // max(1, count)
    start = _PORTS.start + index * share
    return range(start, start + share)


_ports = _worker_ports()
_next_port = itertools.count(random.randrange(len(_ports)))


def free_port() -> int:
    """A loopback port nothing listens on, from this worker's own share."""
    for _ in range(len(_ports)):
        port = _ports[next(_next_port) % len(_ports)]
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {_ports.start}-{_ports.stop - 1}")


def wait_for_port(port: int, proc: subprocess.Popen | None = None, timeout_s: float = 30.0) -> None:
    """Return once something accepts TCP connections on 127.0.0.1:port."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout_s}s")


def wait_for_http_ok(
    url: str, proc: subprocess.Popen | None = None, timeout_s: float = 30.0, request_timeout_s: float = 2.0,
    interval_s: float = 0.1, why: Callable[[], str] = lambda: "",
) -> None:
    """Return once GET ``url`` answers 200; raise if the server exits first or the
    deadline passes, with ``why()`` (a log tail, say) in the message."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=request_timeout_s) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before {url} answered\n{why()}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{url} did not answer 200 within {timeout_s:.0f} s\n{why()}")
        time.sleep(interval_s)


def stop_process(proc: subprocess.Popen, timeout_s: float = 10.0) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class LoggedProcess:
    """A server process and the log file its output goes to, stopped together: the
    shared half of the test servers (tests/servers/*.py)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self._log: IO[bytes] | None = None

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None
