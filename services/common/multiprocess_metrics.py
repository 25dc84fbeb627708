"""Prometheus metrics of a service that runs as several worker processes.

`tansuo serve` and `tansuo api` fork worker processes (services/api/gunicorn_server.py),
and a scrape of /metrics reaches whichever worker the kernel hands the connection to.
`tansuo run` and `tansuo demo` serve /metrics from the crawl's process while the
indexer and ranker count in the index process (services/cli/index_process.py).
prometheus_client's multiprocess mode makes every worker write its values to files in
one directory and sums them on a scrape. It must be chosen before prometheus_client is
first imported, so the CLI calls ``prepare`` before importing anything else.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Sequence

ENV = "PROMETHEUS_MULTIPROC_DIR"
# Commands whose /metrics sums several processes: gunicorn's workers, or the embedded
# crawl's two processes.
SERVING_COMMANDS = ("serve", "api", "run", "demo")


def prepare(argv: Sequence[str]) -> None:
    """For a serving command, point ``PROMETHEUS_MULTIPROC_DIR`` at a fresh directory
    (removed when this process exits) unless the operator chose one."""
    command = next((arg for arg in argv if not arg.startswith("-")), "")
    if os.environ.get(ENV) or command not in SERVING_COMMANDS:
        return
    path = tempfile.mkdtemp(prefix="tansuo-metrics-")
    os.environ[ENV] = path
    owner = os.getpid()
    # Forked workers inherit atexit handlers: only the process that made it removes it.
    atexit.register(lambda: os.getpid() == owner and shutil.rmtree(path, ignore_errors=True))


def enabled() -> bool:
    return bool(os.environ.get(ENV))


def registry():  # type: ignore[no-untyped-def]  # prometheus_client's registries are untyped
    """The registry a /metrics endpoint should render: every worker's values summed in
    multiprocess mode, else this process's default registry."""
    from prometheus_client import REGISTRY, CollectorRegistry, multiprocess

    if not enabled():
        return REGISTRY
    merged = CollectorRegistry()
    multiprocess.MultiProcessCollector(merged)
    return merged


def worker_exited(pid: int) -> None:
    """Drop a dead worker's (or index process's) live gauges; its counters stay, as they must."""
    if enabled():
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)
