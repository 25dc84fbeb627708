"""docker-compose.yml: valid for Compose itself, and wired the way docs/deploy.md says."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.deploy.deploy_tools import (
    INSTALL_PIP_TOOLS,
    INSTALL_PROMTOOL,
    REPO,
    require_tool,
    run,
)

yaml = pytest.importorskip("yaml", reason="PyYAML missing: pip install kubernetes-validate (it brings PyYAML)")

TANSUO_SERVICES = ("scheduler", "crawler", "extractor", "indexer", "ranker", "api", "celery-worker", "celery-beat")
BACKENDS = ("kafka", "redis", "minio", "elasticsearch")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    """The file as Compose reads it with no variables set: ${VAR:-default} becomes the
    default and $$ a $. PyYAML resolves the anchors and << merges as Compose does."""
    text = (REPO / "docker-compose.yml").read_text(encoding="utf-8")
    text = re.sub(r"\$\{\w+:-([^}]*)\}", lambda m: m.group(1), text).replace("$$", "$")
    return yaml.safe_load(text)


def test_docker_compose_accepts_the_file():
    docker_compose = require_tool("docker-compose", INSTALL_PIP_TOOLS)
    run([docker_compose, "-f", REPO / "docker-compose.yml", "config", "-q"], cwd=REPO)


def test_docker_compose_accepts_the_no_registry_override():
    docker_compose = require_tool("docker-compose", INSTALL_PIP_TOOLS)
    run([docker_compose, "-f", REPO / "docker-compose.yml", "-f", REPO / "docker-compose.no-registry.yml",
         "config", "-q"], cwd=REPO)  # fmt: skip


def test_the_no_registry_override_builds_every_backend_here_and_keeps_the_graph(compose):
    text = (REPO / "docker-compose.no-registry.yml").read_text(encoding="utf-8")
    override = yaml.safe_load(re.sub(r"\$\{\w+:-([^}]*)\}", lambda m: m.group(1), text))
    assert set(override["services"]) <= set(compose["services"]), "no service of its own"
    for name in (*BACKENDS, "prometheus"):
        build = override["services"][name]["build"]
        assert (REPO / build["dockerfile"]).exists() and build["network"] == "host", name
        assert compose["services"][name]["image"] != override["services"][name]["image"], name
    assert override["services"]["grafana"]["profiles"], "Grafana, no Debian package, is off by default"
    # One build of the Tansuo image, on the Debian base, by the service that builds it here too.
    builders = [n for n in TANSUO_SERVICES if "build" in override["services"][n]]
    assert builders == ["scheduler"] == [n for n in TANSUO_SERVICES if "build" in compose["services"][n]]
    assert "PYTHON_IMAGE" in override["services"]["scheduler"]["build"]["args"]


def test_every_part_of_the_system_is_a_service(compose):
    assert set(compose["services"]) == {*TANSUO_SERVICES, *BACKENDS, "prometheus", "grafana"}


def test_kafka_runs_in_kraft_mode_from_apache_image(compose):
    kafka = compose["services"]["kafka"]
    assert kafka["image"].startswith("apache/kafka:")
    env = kafka["environment"]
    assert set(env["KAFKA_PROCESS_ROLES"].split(",")) == {"broker", "controller"}
    assert not any("ZOOKEEPER" in k for k in env)
    assert env["KAFKA_AUTO_CREATE_TOPICS_ENABLE"] == "false", "Tansuo creates its topics with its own partitions"


def test_elasticsearch_is_a_single_node_8_with_security_off_for_the_laptop(compose):
    es = compose["services"]["elasticsearch"]
    assert ":8." in es["image"]
    assert es["environment"]["discovery.type"] == "single-node"
    assert es["environment"]["xpack.security.enabled"] == "false"
    assert "ports" not in es, "an open Elasticsearch must not be published"


def test_every_long_running_service_has_a_healthcheck(compose):
    for name, service in compose["services"].items():
        if name == "celery-beat":
            continue  # nothing to ask; it only sends jobs
        assert "healthcheck" in service, name


def test_tansuo_services_wait_for_healthy_backends(compose):
    for name in TANSUO_SERVICES:
        depends = compose["services"][name]["depends_on"]
        assert depends, name
        for backend, condition in depends.items():
            assert backend in BACKENDS
            assert condition == {"condition": "service_healthy"}, name


def test_tansuo_services_run_the_image_hardened(compose):
    image = {compose["services"][name]["image"] for name in TANSUO_SERVICES}
    assert image == {"tansuo:local"} and compose["services"]["scheduler"]["build"] == "."
    for name in TANSUO_SERVICES:
        service = compose["services"][name]
        assert service["read_only"] is True and "/tmp" in service["tmpfs"], name
        # The data directory's tmpfs belongs to the image's user, or Celery beat cannot write.
        assert "/var/lib/tansuo:uid=10001,gid=10001,mode=0750" in service["tmpfs"], name
        assert service["cap_drop"] == ["ALL"], name


def test_the_crawler_runs_replicas(compose):
    assert compose["services"]["crawler"]["deploy"]["replicas"] > 1


def test_only_the_api_has_the_seed_token_and_from_a_secret(compose):
    for name in TANSUO_SERVICES:
        service = compose["services"][name]
        assert "TANSUO_API_TOKEN" not in service["environment"], name  # never a value in the file
        has_token = service["environment"].get("TANSUO_API_TOKEN_FILE") == "/run/secrets/tansuo_api_token"
        assert has_token == (name == "api") == ("tansuo_api_token" in service.get("secrets", [])), name
    # Mounted from a file: Compose refuses to write a secret into a read-only container.
    assert compose["secrets"]["tansuo_api_token"] == {"file": "/dev/null"}


def test_celery_runs_worker_and_beat_from_the_tasks_module(compose):
    for name, role in (("celery-worker", "worker"), ("celery-beat", "beat")):
        service = compose["services"][name]
        assert service["entrypoint"] == ["celery"]
        assert service["command"][:3] == ["-A", "services.tasks.celery_app", role]


def test_prometheus_scrapes_every_service_and_loads_the_alerts(compose):
    config = yaml.safe_load((REPO / "deploy/prometheus/prometheus.yml").read_text())
    assert config["rule_files"] == ["alerts.yml"]
    scraped = {}
    for job in config["scrape_configs"]:
        for sd in job.get("dns_sd_configs", []):
            scraped.update(dict.fromkeys(sd["names"], sd["port"]))
    assert scraped == {"scheduler": 9102, "crawler": 9102, "extractor": 9102, "indexer": 9102, "ranker": 9102, "api": 9102}
    mounts = compose["services"]["prometheus"]["volumes"]
    assert "./deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro" in mounts


def test_promtool_accepts_the_prometheus_config():
    promtool = require_tool("promtool", INSTALL_PROMTOOL)
    run([promtool, "check", "config", REPO / "deploy/prometheus/prometheus.yml"])


def test_grafana_provisions_the_dashboards_from_the_repository(compose):
    mounts = compose["services"]["grafana"]["volumes"]
    assert "./deploy/grafana/dashboards:/var/lib/grafana/dashboards/tansuo:ro" in mounts
    provider = yaml.safe_load((REPO / "deploy/grafana/provisioning/dashboards/tansuo.yml").read_text())
    assert provider["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards/tansuo"


def test_the_compose_backend_urls_parse_with_the_adapters(compose):
    env = compose["services"]["api"]["environment"]
    bus_kafka = pytest.importorskip("services.common.adapters.kafka.bus")
    page_store_s3 = pytest.importorskip("services.common.adapters.s3.page_store")
    es = pytest.importorskip("services.common.adapters.elasticsearch.search_index")
    assert bus_kafka.parse_kafka_url(env["TANSUO_BUS"]) == (["kafka:9092"], "")
    store = page_store_s3.parse_s3_url(env["TANSUO_STORE"])
    assert (store.endpoint, store.bucket, store.secure) == ("minio:9000", "tansuo-pages", False)
    assert store.access_key == compose["services"]["minio"]["environment"]["MINIO_ROOT_USER"]
    nodes, alias, _ = es.parse_url(env["TANSUO_INDEX"])
    assert (nodes, alias) == (["http://elasticsearch:9200"], "tansuo")


def test_the_docs_say_how_to_start_a_crawl():
    docs = (REPO / "docs/deploy.md").read_text(encoding="utf-8")
    assert "docker compose up" in docs
    assert "docker compose exec api tansuo seed https://" in docs
