"""constraints.txt pins every package Tansuo installs, within what pyproject.toml allows,
and everything that installs packages goes through it (issue 37)."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.deploy.deploy_tools import REPO

REFRESH = "run scripts/refresh-constraints.sh, then scripts/install.sh test"


def pins() -> dict[str, Version]:
    found = {}
    for line in (REPO / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not an exact pin"
            found[canonicalize_name(name)] = Version(version)
    return found


def requirements() -> list[Requirement]:
    """Every requirement of pyproject.toml: the dependencies, every extra, the build system."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    texts = list(pyproject["project"]["dependencies"])
    for extra in pyproject["project"]["optional-dependencies"].values():
        texts += extra
    texts += pyproject["build-system"]["requires"]
    return [Requirement(t) for t in texts]


def test_every_requirement_is_pinned_within_its_bounds():
    pinned = pins()
    for req in requirements():
        name = canonicalize_name(req.name)
        assert name in pinned, f"{req.name} is not in constraints.txt: {REFRESH}"
        assert req.specifier.contains(pinned[name], prereleases=True), (
            f"constraints.txt pins {req.name}=={pinned[name]}, outside {req}: {REFRESH}"
        )


def test_this_environment_was_installed_through_the_constraints():
    pinned = pins()
    for req in requirements():
        name = canonicalize_name(req.name)
        if name == "setuptools":
            continue  # it builds Tansuo in pip's own build environment, not in this one
        try:
            installed = Version(metadata.version(req.name))
        except metadata.PackageNotFoundError:
            pytest.fail(f"{req.name} is not installed: scripts/install.sh test")
        assert installed == pinned[name], f"{req.name} {installed} installed, {pinned[name]} pinned: {REFRESH}"


def test_the_image_the_installer_and_the_server_images_install_through_it():
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    assert "PIP_CONSTRAINT=/src/constraints.txt" in dockerfile
    assert re.search(r"^COPY constraints\.txt ", dockerfile, re.M)
    install = (REPO / "scripts/install.sh").read_text(encoding="utf-8")
    assert "export PIP_CONSTRAINT=$PWD/constraints.txt" in install
    # Every pip install of the installer comes after the constraints are exported.
    assert install.index("export PIP_CONSTRAINT") < install.index("pip install")
    for path in sorted((REPO / "deploy/no-registry").glob("*.Dockerfile")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if "pip install" in line:
                assert "--constraint /tmp/constraints.txt" in line, path.name
