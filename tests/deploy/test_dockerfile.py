"""The image's Dockerfile, read as instructions: no engine here can build it."""

from __future__ import annotations

import json
import re
import shlex

import pytest

from tests.deploy.deploy_tools import INSTALL_PIP_TOOLS, REPO, require_tool, run


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    joined, current = [], ""
    for line in (REPO / "Dockerfile").read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        current += line.rstrip().removesuffix("\\") + " " if line.rstrip().endswith("\\") else line.strip()
        if not line.rstrip().endswith("\\"):
            joined.append(current)
            current = ""
    pairs = []
    for text in joined:
        word, _, rest = text.strip().partition(" ")
        pairs.append((word.upper(), rest.strip()))
    return pairs


def final_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last_from:]


def test_the_image_is_built_in_two_stages_on_python_311_slim():
    steps = instructions()
    args = dict(a.split("=", 1) for w, a in steps if w == "ARG" and "=" in a)
    froms = [a for w, a in steps if w == "FROM"]
    assert len(froms) >= 2, "a builder stage and a final stage"
    assert " AS builder" in froms[0] or " as builder" in froms[0]
    final_base = froms[-1].split()[0].replace("${PYTHON_IMAGE}", args.get("PYTHON_IMAGE", ""))
    assert final_base == "python:3.11-slim"
    assert any(w == "COPY" and a.startswith("--from=builder") for w, a in final_stage())


def test_the_builder_compiles_the_c_module_and_the_final_stage_has_no_compiler():
    steps = instructions()
    builder = steps[: max(i for i, (word, _) in enumerate(steps) if word == "FROM")]
    builder_runs = " ".join(a for w, a in builder if w == "RUN")
    assert re.search(r"apt-get install [^&]*\bgcc\b", builder_runs), "services/common/_native.c needs a compiler"
    assert "import services.common._native" in builder_runs, "a build without the module must fail"
    assert any(w == "COPY" and "setup.py" in a for w, a in builder), "setup.py declares the module"
    assert "gcc" not in " ".join(a for w, a in final_stage() if w == "RUN")


def test_the_final_stage_runs_as_a_numeric_non_root_user():
    users = [a for w, a in final_stage() if w == "USER"]
    assert users, "the final stage sets USER"
    uid = users[-1].split(":")[0]
    # Kubernetes can only check runAsNonRoot against a numeric USER.
    assert uid.isdigit() and int(uid) != 0
    helm_uid = re.search(r"runAsUser: (\d+)", (REPO / "deploy/helm/tansuo/values.yaml").read_text())
    assert helm_uid and helm_uid.group(1) == uid, "the chart runs pods as the image's user"


def test_the_entrypoint_is_the_tansuo_cli():
    entrypoint = [a for w, a in final_stage() if w == "ENTRYPOINT"]
    assert entrypoint and json.loads(entrypoint[-1]) == ["tansuo"]


def test_logs_are_json_and_the_api_listens_beyond_loopback():
    env = " ".join(a for w, a in final_stage() if w == "ENV")
    assert "TANSUO_LOG_FORMAT=json" in env
    assert "TANSUO_API_HOST=0.0.0.0" in env


def test_the_segmenter_dictionary_is_warmed_at_build_time():
    runs = " ".join(a for w, a in final_stage() if w == "RUN")
    assert "from services.common.analysis import initialise; initialise()" in runs
    assert "jieba" in runs and "initialize()" in runs


def test_the_build_context_holds_only_the_package():
    lines = [
        ln.strip() for ln in (REPO / ".dockerignore").read_text().splitlines() if ln.strip() and not ln.startswith("#")
    ]
    assert lines[0] == "*", "an allow-list: everything else (.git, .venv, data) stays out"
    allowed = {ln[1:].rstrip("/") for ln in lines if ln.startswith("!")}
    copied = set()
    for word, args in instructions():
        if word == "COPY" and not args.startswith("--from"):
            copied.update(shlex.split(args)[:-1])  # every word but the destination
    copied = {c.rstrip("/") for c in copied}
    assert copied <= allowed, f"COPY sources missing from .dockerignore's allow-list: {copied - allowed}"


@pytest.mark.parametrize(
    "dockerfile", ["Dockerfile", *sorted(p.relative_to(REPO).as_posix() for p in REPO.glob("deploy/no-registry/*.Dockerfile"))]
)
def test_hadolint_finds_nothing_to_fix(dockerfile):
    hadolint = require_tool("hadolint", INSTALL_PIP_TOOLS)
    proc = run([hadolint, "--no-color", str(REPO / dockerfile)], check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("port", ["8080", "9102"])
def test_the_image_exposes_the_api_and_health_ports(port):
    exposed = " ".join(a for w, a in final_stage() if w == "EXPOSE").split()
    assert port in exposed
