"""Every TANSUO_* variable a deployment file sets is a setting Tansuo reads, and the
chart runs the image the way the compose test runs it (issue 37).

Settings ignores a TANSUO_* variable it has no field for, so a misspelt name in the
chart or a compose file would be dropped without a word; only this test sees it.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from typing import Any

import pytest

from services.common.config import Settings
from tests.deploy.compose_stack import TEST_SETTINGS
from tests.deploy.deploy_tools import CHART, REPO, VALUES_FILES, by_kind
from tests.deploy.test_dockerfile import final_stage

yaml = pytest.importorskip("yaml", reason="PyYAML missing: scripts/install.sh test")

SETTINGS = {f"TANSUO_{name.upper()}" for name in Settings.model_fields}
COMPOSE_FILES = ("docker-compose.yml", "docker-compose.no-registry.yml")
WORKER_COMMANDS = ("scheduler", "crawler", "extractor", "indexer", "ranker", "api")
# Variables the compose stack sets and the chart's defaults do not, and why.
COMPOSE_ONLY = {
    "TANSUO_API_TOKEN_FILE": "the chart hands the token over as TANSUO_API_TOKEN from its Secret",
    "TANSUO_BUS_FETCH_MAX_WAIT_MS": "for Tansu only (the no-registry stack); the chart's Kafka is Kafka",
}


def compose_file(name: str) -> dict[str, Any]:
    """A compose file as Compose reads it with no variables set: ${VAR:-default} is the default."""
    text = (REPO / name).read_text(encoding="utf-8")
    text = re.sub(r"\$\{\w+:-([^}]*)\}", lambda m: m.group(1), text).replace("$$", "$")
    return yaml.safe_load(text)


def compose_env(name: str) -> dict[str, dict[str, str]]:
    """The environment each service of a compose file sets."""
    return {svc: dict(spec.get("environment") or {}) for svc, spec in compose_file(name)["services"].items()}


def dockerfile_env() -> dict[str, str]:
    env = {}
    for word, args in final_stage():
        if word == "ENV":
            env.update(pair.split("=", 1) for pair in args.split())
    return env


def chart_env(docs: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Per Deployment, the variables its Tansuo container gets: the ConfigMap, then env."""
    (config,) = [d for d in docs if d["kind"] == "ConfigMap" and "TANSUO_BUS" in (d.get("data") or {})]
    found = {}
    for name, deployment in by_kind(docs, "Deployment").items():
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        env = dict(config["data"])
        env.update({e["name"]: e.get("value", "<from a Secret>") for e in container.get("env", [])})
        found[name] = env
    return found


@pytest.mark.parametrize("values", sorted(VALUES_FILES))
def test_every_variable_the_chart_sets_is_a_setting(render: Callable[..., list[dict[str, Any]]], values: str):
    for deployment, env in chart_env(render(values)).items():
        tansuo = {n for n in env if n.startswith("TANSUO_")}
        assert tansuo <= SETTINGS, (values, deployment, sorted(tansuo - SETTINGS))
        # Anything else only carries a credential into a TANSUO_ value as $(NAME).
        referenced = {m for v in env.values() for m in re.findall(r"\$\((\w+)\)", v)}
        assert set(env) - tansuo <= referenced, (values, deployment, sorted(set(env) - tansuo - referenced))


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_every_variable_the_compose_files_set_is_a_setting(name: str):
    for service, env in compose_env(name).items():
        tansuo = {n for n in env if n.startswith("TANSUO_")}
        assert tansuo <= SETTINGS, (name, service, sorted(tansuo - SETTINGS))


def test_every_variable_the_image_and_the_container_test_set_is_a_setting():
    assert {n for n in dockerfile_env() if n.startswith("TANSUO_")} <= SETTINGS
    assert set(TEST_SETTINGS) <= SETTINGS


def test_the_check_tells_a_misspelt_variable():
    assert "TANSUO_CRAWLER_CONCURRENCY" in SETTINGS
    assert "TANSUO_CRAWLER_CONCURENCY" not in SETTINGS


def test_the_chart_sets_what_the_compose_stack_sets(render: Callable[..., list[dict[str, Any]]]):
    compose = compose_env("docker-compose.yml")
    chart = chart_env(render("default"))
    for command in WORKER_COMMANDS:
        (env,) = [e for name, e in chart.items() if name.endswith(f"-{command}")]
        missing = {n for n in compose[command] if n.startswith("TANSUO_")} - set(env) - set(COMPOSE_ONLY)
        assert not missing, (command, sorted(missing))
    # Settings that describe the image rather than the deployment agree everywhere.
    image = {**dockerfile_env(), **compose["api"]}
    for name in ("TANSUO_HEALTH_PORT", "TANSUO_LOG_FORMAT", "TANSUO_DATA_DIR", "TANSUO_API_HOST", "TANSUO_API_PORT"):
        for deployment, env in chart.items():
            assert env[name] == image[name], (name, deployment)


def test_the_chart_runs_the_image_as_the_compose_stack_does(render: Callable[..., list[dict[str, Any]]]):
    docs = render("default")
    compose = compose_file("docker-compose.yml")["services"]
    users = [a for w, a in final_stage() if w == "USER"]
    uid, gid = users[-1].split(":")
    chart_yaml = yaml.safe_load((CHART / "Chart.yaml").read_text())
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert chart_yaml["appVersion"] == version, "the chart's image tag is the version the Dockerfile builds"
    for name, deployment in by_kind(docs, "Deployment").items():
        pod = deployment["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        assert container["image"].rsplit("/", 1)[-1] == f"tansuo:{version}", name
        assert (str(pod["securityContext"]["runAsUser"]), str(pod["securityContext"]["runAsGroup"])) == (uid, gid)
        assert container["securityContext"]["readOnlyRootFilesystem"] is True, name
        assert {m["mountPath"] for m in container["volumeMounts"]} >= {"/tmp", "/var/lib/tansuo"}, name
        service = next(s for s in compose if name.endswith(f"-{s}"))
        spec = compose[service]
        assert spec["read_only"] is True and {t.split(":")[0] for t in spec["tmpfs"]} == {"/tmp", "/var/lib/tansuo"}
        if "entrypoint" in spec:  # Celery
            assert container["command"] == spec["entrypoint"] and container["args"][:3] == spec["command"][:3], name
        else:
            assert container["args"] == spec["command"], name
            ports = {p["name"]: p["containerPort"] for p in container["ports"]}
            assert ports["metrics"] == int(spec["environment"]["TANSUO_HEALTH_PORT"]), name
            if service == "api":
                assert ports["http"] == int(spec["ports"][0].rsplit(":", 1)[1]), "the api's port"
