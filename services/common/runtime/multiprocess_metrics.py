"""Prometheus metrics of a service that runs as several worker processes.

`tansuo serve` and `tansuo api` fork worker processes (services/common/runtime/http/gunicorn_server.py),
and a scrape of /metrics reaches whichever worker the kernel hands the connection to.
`tansuo run` and `tansuo demo` serve /metrics from the crawl's process while the
indexer and ranker count in the index process (services/cli/index_process.py).
prometheus_client's multiprocess mode makes every worker write its values to files in
one directory and sums them on a scrape. It must be chosen before prometheus_client is
first imported, so the CLI calls ``prepare`` before importing anything else.
"""

from __future__ import annotations

import atexit
import functools
import glob
import os
import shutil
import tempfile
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

ENV = "PROMETHEUS_MULTIPROC_DIR"
# Commands whose /metrics sums several processes: gunicorn's workers, or the embedded
# crawl's two processes.
SERVING_COMMANDS = ("serve", "api", "run", "demo")
# A value file starts with 4 bytes saying how much of it is used, then 4 of padding.
_HEADER_BYTES = 8


if TYPE_CHECKING:  # imported where used: this module runs before prometheus_client may be imported
    from prometheus_client import CollectorRegistry


def prepare(argv: Sequence[str]) -> None:
    """For a serving command, point ``PROMETHEUS_MULTIPROC_DIR`` at a fresh directory
    (removed when this process exits) unless the operator chose one."""
    command = next((arg for arg in argv if not arg.startswith("-")), "")
    if os.environ.get(ENV) or command not in SERVING_COMMANDS:
        return
    path = tempfile.mkdtemp(prefix="tansuo-metrics-")
    os.environ[ENV] = path
    owner = os.getpid()

    def remove() -> None:
        # Forked workers inherit atexit handlers: only the process that made it removes it.
        if os.getpid() == owner:
            shutil.rmtree(path, ignore_errors=True)

    atexit.register(remove)


def enabled() -> bool:
    return bool(os.environ.get(ENV))


def registry() -> CollectorRegistry:
    """The registry a /metrics endpoint should render: every worker's values summed in
    multiprocess mode, else this process's default registry."""
    from prometheus_client import REGISTRY, CollectorRegistry

    if not enabled():
        return REGISTRY
    merged = CollectorRegistry()
    _started_files_collector()(merged)
    return merged


@functools.cache
def _started_files_collector() -> type[Any]:
    """Defined on first use: this module is imported before prometheus_client may be."""
    from prometheus_client import multiprocess

    class StartedFilesCollector(multiprocess.MultiProcessCollector):
        """Sums every process's file but those still being created.

        A process that counts its first value creates its file empty and sizes it a
        moment later; prometheus_client's own collector raises on such a file, and the
        scrape that met it lost its connection (a worker of `tansuo serve` starting
        while Prometheus, or a test, scraped). An empty file holds no value yet, so
        leaving it out of this scrape loses nothing.
        """

        def collect(self) -> Any:  # prometheus_client's collectors are untyped
            files = [path for path in glob.glob(os.path.join(self._path, "*.db")) if _sized(path)]
            return self.merge(files, accumulate=True)

    return StartedFilesCollector


def _sized(path: str) -> bool:
    try:
        return os.path.getsize(path) >= _HEADER_BYTES
    except FileNotFoundError:  # a dead process's live gauges, removed since the glob
        return False


def worker_exited(pid: int) -> None:
    """Drop a dead worker's (or index process's) live gauges; its counters stay, as they must."""
    if enabled():
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)
