"""Finding a free loopback port and waiting for a server to listen on it."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable
from typing import IO


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
