"""Starting a benchmark's cluster of services and saying what it ran with: shared by the
benchmarks that crawl in cluster mode (``bench/cluster/cluster_parity.py``, ``bench/crawl/many_hosts.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from bench.cluster.cluster_servers import Servers
from services.common.config import Settings
from tests.cluster import Cluster
from tests.servers.net import wait_for_port

# What the e2e environment sets that a benchmark must not: the ranker interval and the
# indexer's commit interval are the product's defaults in a benchmark.
PRODUCT_DEFAULTS = ("TANSUO_RANKER_INTERVAL_S", "TANSUO_INDEXER_COMMIT_INTERVAL_S")
# Addresses, prefixes and credentials: not settings a reader of a report compares.
_NOT_REPORTED = {"data_dir", "bus", "state", "store", "index", "api_token", "log_format"}


def bench_env(servers: Servers, workdir: Path) -> dict[str, str]:
    """A fresh cluster's environment on ``servers`` (its own prefixes, so earlier runs on
    the same servers are invisible to it), with the product's timings left alone."""
    return {k: v for k, v in servers.cluster_env(workdir).items() if k not in PRODUCT_DEFAULTS}


def start_all(cluster: Cluster, names: Sequence[str]) -> None:
    """Every service at once, as an orchestrator starts them; then each one ready. A name
    is its command with a number after it (crawler0 runs ``tansuo crawler``)."""
    for name in names:
        cluster.start(name, name.rstrip("0123456789"), wait=False)
    for name, proc in cluster.procs.items():
        wait_for_port(proc.health_port, proc, timeout_s=60)  # type: ignore[attr-defined]
        cluster.ready(name)


def check_alive(cluster: Cluster) -> None:
    """Raise with its log's tail if a service has exited."""
    for name, proc in cluster.procs.items():
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode}:\n{cluster.log(name)[-3000:]}")


def changed_settings(env: Mapping[str, str]) -> dict[str, str]:
    """The timing and politeness settings in ``env`` that are not the product's defaults."""
    defaults = Settings()
    return {k: v for k, v in env.items() if k.startswith("TANSUO_") and _differs(defaults, k, v)}


def _differs(defaults: Settings, key: str, value: str) -> bool:
    name = key.removeprefix("TANSUO_").lower()
    if not hasattr(defaults, name) or name in _NOT_REPORTED:
        return False
    return str(getattr(defaults, name)) != value and _as_float(getattr(defaults, name)) != _as_float(value)


def _as_float(value: object) -> float | None:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
