"""What the numbers were measured on: CPU, cores, memory, OS, Python and the
package versions that decide the speed of each part."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

from services.common.runtime.native_code import native

# The packages each benchmark's speed hangs on: the crawl (scrapy, twisted, lxml),
# segmentation (rjieba), the index (tantivy) and the baseline index (SQLite, below).
PACKAGES = ("tantivy", "rjieba", "scrapy", "twisted", "lxml", "scipy")


@dataclass(frozen=True)
class Machine:
    cpu: str
    cores: int
    ram_gib: float
    os: str
    kernel: str
    python: str
    packages: dict[str, str]
    commit: str  # the Tansuo revision measured, "+dirty" when services/ had uncommitted changes


def describe() -> Machine:
    packages = {name: _version(name) for name in PACKAGES}
    packages["sqlite"] = sqlite3.sqlite_version
    # Building documents runs about twice as fast with Tansuo's C module as without it.
    packages["Tansuo's C module"] = "built" if native is not None else "not built (Python twins)"
    return Machine(
        cpu=_cpu_model(),
        cores=os.cpu_count() or 0,
        ram_gib=_ram_gib(),
        os=_os_name(),
        kernel=platform.release(),
        python=platform.python_version(),
        packages=packages,
        commit=_commit(),
    )


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _ram_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024**2, 1)
    except (OSError, ValueError):
        pass
    return 0.0


def _os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.platform()


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _commit() -> str:
    repo = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "services"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}+dirty" if dirty else head
