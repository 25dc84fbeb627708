"""Backends taken away mid-crawl and given back: the services wait, resume, lose nothing."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.cluster import Cluster, cluster_env
from tests.servers.redis_server import RedisServer
from tests.servers.s3_server import S3Server

from .conftest import ServedSite, check_indexed_exactly_once, serve_site
from .test_cluster_crawl import (
    _frontier,
    _index,
    _index_urls,
    crawl_until_midway,
    fetched_count,
    wait_for_fetched,
    wait_until_crawled,
)

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


def _fast_env(*args) -> dict[str, str]:
    """Politeness is tested elsewhere; here only what survives an outage matters. Jobs
    sent into the outage come back when their lease expires: 10 s, not 30."""
    return {**cluster_env(*args), "TANSUO_FRONTIER_HOST_DELAY_S": "0", "TANSUO_FRONTIER_LEASE_TIMEOUT_S": "10"}


@contextmanager
def _cluster_serving(site_copy, env: dict[str, str], logs: Path) -> Iterator[tuple[Cluster, ServedSite]]:
    """The docs site served and a cluster on ``env``; both stopped however the test ends."""
    site = serve_site(site_copy)
    cluster = Cluster(env, logs)
    try:
        yield cluster, site
    finally:
        cluster.stop()
        site.server.stop()


def _outage(down: Callable[[], None], up: Callable[[], None]) -> None:
    down()
    time.sleep(5)  # long enough for every service to notice and start backing off
    up()


def _crawl_through(cluster: Cluster, site: ServedSite, outages: list[tuple[Callable[[], None], Callable[[], None]]],
                   embedded_reference: Path) -> None:  # fmt: skip
    """Crawl the site with each outage in turn, the next once 60 more pages are fetched."""
    crawl_until_midway(cluster, site)
    frontier = _frontier(cluster.env)
    for i, (down, up) in enumerate(outages):
        if i:
            wait_for_fetched(cluster, fetched_count(frontier) + 60)
        _outage(down, up)
    wait_until_crawled(cluster, len(_index_urls(embedded_reference)))
    check_indexed_exactly_once(site, _index(cluster.env).urls())


def test_redis_and_then_the_s3_server_restarted_mid_crawl(tmp_path, site_copy, kafka_broker, es_url,
                                                           embedded_reference):  # fmt: skip
    """Two outages in one crawl (each its own test cost a whole crawl): the frontier's
    Redis first, and once the crawl has moved on, the page store."""
    redis = RedisServer(tmp_path / "redis", persistent=True)
    s3 = S3Server(tmp_path / "s3")
    redis.start()
    s3.start()
    try:
        env = _fast_env(tmp_path, redis, kafka_broker, s3.endpoint, es_url)
        with _cluster_serving(site_copy, env, tmp_path) as (cluster, site):
            _crawl_through(cluster, site, [(redis.stop, redis.start), (s3.stop, s3.start)], embedded_reference)
    finally:
        s3.stop()
        redis.stop()


def test_the_broker_restarted_mid_crawl(tmp_path, site_copy, redis_server, durable_kafka_broker, s3_endpoint, es_url,
                                        embedded_reference):  # fmt: skip
    # The broker keeps its log in S3, as Kafka keeps it on disk: a restart loses no
    # topic or committed offset, only every connection. Unlike Kafka, Tansu acknowledges
    # a message before it is durable and loses what it acknowledged in the last moment
    # before a stop (measured: 13 of 29,000 messages over four restarts under load, none
    # once producers had been quiet for 2 s). So the services are frozen for 2 s before
    # the broker stops and thawed at once after, to meet the outage as it is: a page
    # whose links the broker dropped after acknowledging them would never be ranked.
    env = _fast_env(tmp_path, redis_server, durable_kafka_broker, s3_endpoint, es_url)
    with _cluster_serving(site_copy, env, tmp_path) as (cluster, site):

        def stop_broker_durably() -> None:
            cluster.freeze()
            time.sleep(2)
            durable_kafka_broker.stop()
            cluster.thaw()

        _crawl_through(cluster, site, [(stop_broker_durably, durable_kafka_broker.start)], embedded_reference)
