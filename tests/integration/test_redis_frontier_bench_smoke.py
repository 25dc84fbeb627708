"""The Redis frontier benchmark at a tiny size, so that its code cannot rot unnoticed:
every URL admitted is counted, memory is measured, and the block renders. No timing is
asserted (bench/ records those)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.frontier import redis_frontier_report
from bench.frontier.redis_frontier_bench import BACKENDS, FrontierRun, one_round
from bench.measure import machine

pytestmark = pytest.mark.integration


def test_a_tiny_round_on_each_backend_measures_and_renders(tmp_path: Path, redis_server, redis_cluster) -> None:
    args = argparse.Namespace(urls=600, hosts=6, big_hosts=2, cycles=100)
    urls = {BACKENDS[0]: None, BACKENDS[1]: redis_server.url, BACKENDS[2]: redis_cluster.url}
    rounds = [one_round(backend, urls[backend], tmp_path, args) for backend in BACKENDS]
    for r in rounds:
        assert r.admitted_per_s > 0 and r.scheduled_per_s > 0 and r.bytes_per_url > 40
    assert rounds[0].big_host_bytes_per_url is None and rounds[1].big_host_bytes_per_url > 40
    assert rounds[1].fetched_bytes_per_url > rounds[1].bytes_per_url  # a hash and validators more
    run = FrontierRun(datetime.now(UTC), 1.0, machine.describe(), (0.0, 0.0), 600, 6, 2, 100, 40.0, rounds)
    section = redis_frontier_report.render(run)
    assert "| Redis Cluster (3 primaries) |" in section and "Against the issue's marks" in section
