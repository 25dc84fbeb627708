"""Building the images and running docker-compose.yml with docker-compose.no-registry.yml
on a Docker engine of the tests (tests/servers/docker_engine.py): what the container
test drives, kept apart from its checks.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from tests.deploy.deploy_tools import REPO
from tests.deploy.stack_site import PORT, Site, build_site
from tests.servers.docker_engine import DockerEngine
from tests.servers.net import free_port

T = TypeVar("T")
BASE_IMAGE = "tansuo/debian-python:bookworm"
IMAGE = "tansuo:local"
COMPOSE_FILES = (REPO / "docker-compose.yml", REPO / "docker-compose.no-registry.yml")
TANSUO_SERVICES = ("scheduler", "crawler", "extractor", "indexer", "ranker", "api", "celery-worker", "celery-beat")
WORKERS = ("scheduler", "crawler", "extractor", "indexer", "ranker")  # /livez, /readyz, /metrics on 9102
SCRAPED = (*WORKERS, "api")  # deploy/prometheus/prometheus.yml's targets
BACKENDS = ("kafka", "redis", "minio", "elasticsearch", "prometheus")
API_TOKEN = "container-test-token"
# What the test changes in the compose stack, and why: the crawl is of the stack's own
# network (private addresses), Tansu joins groups in about half a session timeout
# (INFRA.md), a killed crawler's leases come back within seconds, and Celery beat
# sends a job soon enough to be seen.
TEST_SETTINGS = {
    "TANSUO_CRAWLER_ALLOW_PRIVATE_NETWORKS": "true",
    "TANSUO_BUS_SESSION_TIMEOUT_MS": "6000",
    "TANSUO_BUS_HEARTBEAT_INTERVAL_MS": "1000",
    "TANSUO_FRONTIER_LEASE_TIMEOUT_S": "20",
    "TANSUO_TASKS_RECRAWL_SWEEP_INTERVAL_S": "5",
}


@dataclass
class BuildTimes:
    """Seconds each build step took in this run (cold or warm cache)."""

    base: float = 0.0
    image: float = 0.0
    servers: float = 0.0
    image_bytes: int = 0


def build_images(engine: DockerEngine, logs: Path) -> BuildTimes:
    """The Debian base (cached), then at once the Tansuo image with `docker build` and
    the servers' images with `docker compose build`: the builds mostly wait on
    downloads, so two at a time take less than one after the other."""
    times = BuildTimes()
    started = time.monotonic()
    engine.run([str(REPO / "deploy/no-registry/base-image.sh"), BASE_IMAGE], timeout_s=900, env={"DOCKER": engine.cli})
    times.base = time.monotonic() - started
    started = time.monotonic()
    servers = engine.start_command(
        engine.compose_command(COMPOSE_FILES, "tansuo-build", "build", *BACKENDS),
        logs / "servers-build.log",
        env=compose_env({}),
    )
    try:
        engine.docker("build", "--network", "host", "--build-arg", f"PYTHON_IMAGE={BASE_IMAGE}", "-t", IMAGE,
                      str(REPO), timeout_s=1200)  # fmt: skip
        times.image = time.monotonic() - started
        servers.wait(timeout=1200)
    finally:
        if servers.poll() is None:
            servers.kill()
    times.servers = time.monotonic() - started
    if servers.returncode != 0:
        raise AssertionError(f"compose build failed:\n{(logs / 'servers-build.log').read_text()[-3000:]}")
    times.image_bytes = int(engine.docker("image", "inspect", IMAGE, "--format", "{{.Size}}").stdout)
    return times


def compose_env(ports: dict[str, int], token_file: Path | None = None) -> dict[str, str]:
    """Compose's variables: the images, the host ports to publish on, the API token's file."""
    env = {"TANSUO_IMAGE": IMAGE, "TANSUO_BASE_IMAGE": BASE_IMAGE}
    if token_file is not None:
        env["API_TOKEN_FILE"] = str(token_file)
    env.update({name: str(port) for name, port in ports.items()})
    return env


def test_override(site: Site, network: str) -> dict[str, Any]:
    """The compose file the test adds on top: its network, its site, its settings, and
    health checks every few seconds so that `up --wait` returns soon."""
    # Failures in the start period do not count, a success ends it: a busy machine may
    # take a minute to import every service.
    quick = {"interval": "2s", "start_period": "180s"}
    services: dict[str, Any] = {
        name: {"environment": TEST_SETTINGS, "healthcheck": dict(quick)}
        for name in TANSUO_SERVICES if name != "celery-beat"
    }  # fmt: skip
    services["celery-worker"]["healthcheck"]["interval"] = "5s"  # a Celery ping costs a second of CPU
    services["celery-beat"] = {"environment": TEST_SETTINGS}
    services["site"] = {
        "image": BASE_IMAGE,
        "command": ["python3", "/site/site_server.py", "/site/hosts", str(PORT)],
        "volumes": [f"{site.root}:/site:ro"],
        "read_only": True,
        "networks": {"default": {"aliases": list(site.hosts)}},
    }
    return {"services": services, "networks": {"default": {"name": network, "external": True}}}


@dataclass
class Stack:
    engine: DockerEngine
    project: str
    files: list[Path]
    env: dict[str, str]
    site: Site
    api_url: str
    prometheus_url: str
    killed: list[str] = field(default_factory=list)

    def compose(self, *args: str, timeout_s: float = 300, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.engine.compose(self.files, self.project, *args, env=self.env, timeout_s=timeout_s, check=check)

    def containers(self, service: str) -> list[str]:
        """IDs of the service's running containers, in replica order."""
        ids = self.compose("ps", "-q", service).stdout.split()
        numbered = []
        for cid in ids:
            labels = json.loads(self.engine.docker("inspect", "--format", "{{json .Config.Labels}}", cid).stdout)
            numbered.append((int(labels.get("com.docker.compose.container-number", 0)), cid))
        return [cid for _, cid in sorted(numbered)]

    def ip(self, container: str) -> str:
        return self.engine.docker(
            "inspect", "--format", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", container
        ).stdout.strip()

    def inspect(self, container: str) -> dict[str, Any]:
        return json.loads(self.engine.docker("inspect", container).stdout)[0]

    def logs(self, *services: str, tail: int = 40) -> str:
        return self.compose("logs", "--no-color", "--tail", str(tail), *services, check=False).stdout[-8000:]

    def search(self, query: str, page: int = 1, size: int = 100) -> dict[str, Any]:
        params = urllib.parse.urlencode({"q": query, "page": page, "size": size})
        return get_json(f"{self.api_url}/api/search?{params}")

    def prometheus(self, path: str, **params: str) -> Any:
        reply = get_json(f"{self.prometheus_url}{path}?{urllib.parse.urlencode(params)}")
        assert reply["status"] == "success", reply
        return reply["data"]


def get_json(url: str, timeout_s: float = 10) -> Any:
    with urllib.request.urlopen(url, timeout=timeout_s) as resp:
        return json.loads(resp.read())


def get_status(url: str, timeout_s: float = 5) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


_FETCHED = re.compile(r"^tansuo_pages_fetched_total\{[^}]*\} ([0-9.e+]+)$", re.M)


def pages_fetched(ip: str) -> int:
    """Fetches one crawler has finished, from its own /metrics."""
    try:
        with urllib.request.urlopen(f"http://{ip}:9102/metrics", timeout=5) as resp:
            text = resp.read().decode()
    except OSError:
        return 0
    return int(sum(float(v) for v in _FETCHED.findall(text)))


def wait_for(observe: Callable[[], tuple[bool, T]], timeout_s: float, what: str, interval_s: float = 1.0,
             why: Callable[[], str] = lambda: "") -> T:  # fmt: skip
    """Poll ``observe`` (done?, what it saw) until done; fail with the last sight and ``why()``."""
    deadline = time.monotonic() + timeout_s
    seen: T | None = None
    while True:
        done, seen = observe()
        if done:
            return seen
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout_s:.0f} s; last seen {str(seen)[:1500]}\n{why()}")
        time.sleep(interval_s)


@contextmanager
def running_stack(engine: DockerEngine, workdir: Path, crawlers: int) -> Iterator[Stack]:
    """The compose stack on a network of the test's own, its site served in it,
    ``crawlers`` crawler replicas, every service healthy; taken down with its volumes."""
    project = f"tansuo-test-{uuid.uuid4().hex[:8]}"
    network = project
    site = build_site(workdir / "site", partitions=12)  # TANSUO_BUS_PARTITIONS's default
    override = workdir / "compose.test.yml"
    override.write_text(yaml.safe_dump(test_override(site, network), allow_unicode=True), encoding="utf-8")
    ports = {"API_PORT": free_port(), "PROMETHEUS_PORT": free_port(), "MINIO_CONSOLE_PORT": free_port(),
             "GRAFANA_PORT": free_port()}  # fmt: skip
    token_file = workdir / "api-token"
    token_file.write_text(API_TOKEN + "\n", encoding="utf-8")
    token_file.chmod(0o644)  # compose mounts a file secret as it is: the image's user must read it
    stack = Stack(engine, project, [*COMPOSE_FILES, override], compose_env(ports, token_file), site,
                  f"http://127.0.0.1:{ports['API_PORT']}", f"http://127.0.0.1:{ports['PROMETHEUS_PORT']}")  # fmt: skip
    engine.docker("network", "create", network)
    try:
        proc = stack.compose("up", "-d", "--no-build", "--scale", f"crawler={crawlers}", "--wait",
                             "--wait-timeout", "300", timeout_s=420, check=False)  # fmt: skip
        if proc.returncode != 0:
            raise AssertionError(f"compose up failed:\n{proc.stderr[-3000:]}\n{stack.logs()}")
        yield stack
    finally:
        if os.environ.get("TANSUO_KEEP_STACK") != "1":  # =1 leaves it up, to look into a failure
            stack.compose("down", "--volumes", "--timeout", "10", check=False)
            engine.docker("network", "rm", network, check=False)
