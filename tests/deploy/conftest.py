"""Fixtures of the deployment tests. Nothing here starts a server.

There is no container engine or Kubernetes cluster on these machines, so the chart,
the compose file and the Prometheus rules are linted, rendered and schema-checked with
the real tools, each found as deploy_tools.py says or its tests skipped with the reason:
helm 3 and 4 (fetched by deploy/tools/fetch-helm.sh into ~/.cache/tansuo/helm),
docker-compose, kubernetes-validate and hadolint (pip), promtool (Debian's prometheus).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.deploy.deploy_tools import (
    VALUES_FILES,
    documents,
    helm_binary,
    helm_template,
)


@pytest.fixture(scope="session", params=["v3", "v4"])
def helm(request: pytest.FixtureRequest) -> str:
    """Each helm major version the chart must work with."""
    binary = helm_binary(request.param)
    if binary is None:
        pytest.skip(f"helm {request.param} missing: run deploy/tools/fetch-helm.sh (needs npm)")
    return binary


@pytest.fixture(scope="session")
def helm3() -> str:
    binary = helm_binary("v3")
    if binary is None:
        pytest.skip("helm v3 missing: run deploy/tools/fetch-helm.sh (needs npm)")
    return binary


@pytest.fixture(scope="session")
def render(helm3: str) -> Callable[..., list[dict[str, Any]]]:
    """Manifests of a values file (a VALUES_FILES name, plus --set overrides), rendered once a session."""
    cache: dict[tuple[str, tuple[str, ...]], list[dict[str, Any]]] = {}

    def rendered(name: str, *sets: str) -> list[dict[str, Any]]:
        if (name, sets) not in cache:
            proc = helm_template(helm3, VALUES_FILES[name], *[a for s in sets for a in ("--set", s)])
            assert proc.returncode == 0, proc.stderr
            cache[(name, sets)] = documents(proc.stdout)
        return cache[(name, sets)]

    return rendered
