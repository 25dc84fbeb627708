"""The image and the compose stack, for real: built on this machine and run on a Docker
engine of the tests' own (issue 37).

One scenario, to keep CI lean: build the Debian base (cached between runs), the image
(`docker build`) and the servers' images (docker-compose.no-registry.yml); bring the
stack up on a network the test creates, with three crawlers and a dozen-host Chinese
site served from a container of the stack; seed it with `tansuo seed` in the api
container, SIGKILL a crawler once all three have taken work, and search the crawl
through the api container's published port. Then Prometheus must scrape every service
and every Grafana dashboard query must return a series from it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.deploy.compose_stack import (
    BACKENDS,
    IMAGE,
    SCRAPED,
    TANSUO_SERVICES,
    WORKERS,
    BuildTimes,
    Stack,
    build_images,
    get_status,
    pages_fetched,
    running_stack,
    wait_for,
)
from tests.deploy.deploy_tools import dashboard_queries
from tests.deploy.stack_site import COMMON_WORD, code
from tests.servers.docker_engine import DockerEngine, docker_engine  # noqa: F401 - a fixture

pytestmark = [pytest.mark.containers, pytest.mark.e2e, pytest.mark.timeout(2400)]

CRAWLERS = 3
IMAGE_UID = "10001"  # the Dockerfile's USER, the chart's runAsUser
# Grafana's $__rate_interval at Prometheus's 15 s scrape interval: four intervals.
RATE_INTERVAL = "1m"


@pytest.fixture(scope="module")
def build_times(docker_engine: DockerEngine, tmp_path_factory) -> BuildTimes:
    times = build_images(docker_engine, tmp_path_factory.mktemp("build"))
    print(f"\nbuild: base {times.base:.0f} s, then image {times.image:.0f} s and servers {times.servers:.0f} s at once; "
          f"image {times.image_bytes / 1e6:.0f} MB")  # fmt: skip
    return times


@pytest.fixture(scope="module")
def stack(docker_engine: DockerEngine, build_times: BuildTimes, tmp_path_factory) -> Iterator[Stack]:
    with running_stack(docker_engine, tmp_path_factory.mktemp("stack"), crawlers=CRAWLERS) as s:
        yield s


@dataclass
class CrawlOutcome:
    fetched_at_kill: list[int]  # pages each crawler had fetched when one was killed
    found: set[str]  # URLs a search for the common word finds once the crawl is over
    coded: list[str]  # URLs a search for one article's code finds


def found_urls(stack: Stack) -> set[str]:
    """Every URL a search for the site's common word finds, over all result pages."""
    urls: set[str] = set()
    for page in range(1, 20):  # site diversity moves results to later pages: read to the end
        results = stack.search(COMMON_WORD, page=page)["results"]
        if not results:
            break
        urls |= {r["url"] for r in results}
    return urls


@pytest.fixture(scope="module")
def crawl(stack: Stack) -> CrawlOutcome:
    """Seed the site through the api container, kill one crawler once every crawler has
    fetched, and wait until the search finds every page."""
    stack.compose("exec", "-T", "api", "tansuo", "seed", *stack.site.seeds)
    crawlers = stack.containers("crawler")
    assert len(crawlers) == CRAWLERS
    ips = [stack.ip(c) for c in crawlers]

    def all_took_work() -> tuple[bool, list[int]]:
        counts = [pages_fetched(ip) for ip in ips]
        return all(counts), counts

    fetched = wait_for(all_took_work, 180, "every crawler fetching", interval_s=0.3,
                       why=lambda: stack.logs("scheduler", "crawler"))  # fmt: skip
    victim = crawlers[-1]
    stack.engine.docker("kill", victim)  # SIGKILL: no drain, no commit
    stack.killed.append(victim)

    expected = stack.site.searchable

    def crawled() -> tuple[bool, set[str]]:
        try:
            found = found_urls(stack)
        except OSError:
            return False, set()
        return found >= expected, found

    found = wait_for(crawled, 420, "the whole site searchable", interval_s=3,
                     why=lambda: stack.logs("scheduler", "crawler", "indexer", "api"))  # fmt: skip
    coded = [r["url"] for r in stack.search(code(3, 5))["results"]]
    return CrawlOutcome(fetched, found, coded)


def test_the_image_runs_the_cli_as_its_numeric_user_on_a_read_only_root(docker_engine, build_times):
    engine = docker_engine
    assert engine.docker("image", "inspect", IMAGE, "--format", "{{.Config.User}}").stdout.strip() == (
        f"{IMAGE_UID}:{IMAGE_UID}"
    )
    proc = engine.docker("run", "--rm", "--read-only", "--tmpfs", "/tmp", "--cap-drop", "ALL", IMAGE, "--help")
    for command in ("scheduler", "crawler", "indexer", "ranker", "api", "seed"):
        assert command in proc.stdout
    assert engine.docker("run", "--rm", "--entrypoint", "id", IMAGE, "-u").stdout.strip() == IMAGE_UID


def test_every_service_runs_as_the_image_user_on_a_read_only_root_and_is_healthy(stack: Stack):
    for service in TANSUO_SERVICES:
        for container in stack.containers(service):
            info = stack.inspect(container)
            assert info["HostConfig"]["ReadonlyRootfs"] is True, service
            assert info["Config"]["User"] == f"{IMAGE_UID}:{IMAGE_UID}", service
            top = stack.engine.docker("top", container, "-eo", "pid,uid").stdout.splitlines()[1:]
            assert {line.split()[1] for line in top} == {IMAGE_UID}, (service, top)
            write = stack.engine.docker("exec", container, "touch", "/opt/tansuo/written", check=False)
            assert "Read-only file system" in write.stderr, (service, write.stderr)
            if "Health" in info["State"]:
                assert info["State"]["Health"]["Status"] == "healthy", service
    for service in WORKERS:
        for container in stack.containers(service):
            ip = stack.ip(container)
            for path in ("/livez", "/metrics"):
                assert get_status(f"http://{ip}:9102{path}") == 200, (service, path)
            # Readiness follows the backends: on a loaded machine a slow answer of one
            # turns it 503 for a moment, so it must come back, not hold at every instant.
            url = f"http://{ip}:9102/readyz"
            wait_for(lambda url=url: ((status := get_status(url)) == 200, status), 30, f"{service} ready")
    for path in ("/livez", "/readyz"):
        assert get_status(f"{stack.api_url}{path}") == 200, path
    assert get_status(f"http://{stack.ip(stack.containers('api')[0])}:9102/metrics") == 200
    for service in BACKENDS:
        (container,) = stack.containers(service)
        assert stack.inspect(container)["State"]["Health"]["Status"] == "healthy", service


def test_celery_beat_sends_the_recrawl_sweep_and_the_worker_runs_it(stack: Stack):
    done = re.compile(r"Task services\.tasks\.sweep_recrawl\[[^]]+\] succeeded")
    wait_for(lambda: (bool(done.search(log := stack.logs("celery-worker", tail=200))), log[-500:]), 90,
             "a recrawl sweep run by the Celery worker", interval_s=3)  # fmt: skip


def test_a_site_crawled_by_three_crawlers_one_killed_is_searchable_in_full(stack: Stack, crawl: CrawlOutcome):
    assert all(n > 0 for n in crawl.fetched_at_kill), f"fetches per crawler: {crawl.fetched_at_kill}"
    # The kill came while there was work left: not every page had been fetched.
    assert sum(crawl.fetched_at_kill) < len(stack.site.searchable), crawl.fetched_at_kill
    assert crawl.found == stack.site.searchable, sorted(crawl.found ^ stack.site.searchable)
    assert crawl.coded == [stack.site.url(stack.site.hosts[3], "/a05.html")]


def test_prometheus_scrapes_every_service(stack: Stack, crawl: CrawlOutcome):
    running = {service: len(stack.containers(service)) for service in SCRAPED}

    def targets() -> tuple[bool, dict[str, list[str]]]:
        up: dict[str, list[str]] = {}
        for target in stack.prometheus("/api/v1/targets", state="active")["activeTargets"]:
            up.setdefault(target["labels"].get("service", target["labels"]["job"]), []).append(target["health"])
        return all(up.get(s, []) == ["up"] * n for s, n in running.items()), up

    wait_for(targets, 90, f"every service scraped and up ({running} targets)", interval_s=3)


def test_every_dashboard_query_returns_a_series_from_prometheus(stack: Stack, crawl: CrawlOutcome):
    queries = [(where, expr.replace("$__rate_interval", RATE_INTERVAL)) for where, expr in dashboard_queries()]

    def empty() -> tuple[bool, list[str]]:
        missing = [f"{where}: {expr}" for where, expr in queries
                   if not stack.prometheus("/api/v1/query", query=expr, time=str(time.time()))["result"]]  # fmt: skip
        return not missing, missing

    wait_for(empty, 120, "a series for every dashboard query", interval_s=5)
