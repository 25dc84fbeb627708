"""The benchmark's memory limit is the kernel's: a process over it is stopped, one under
it runs, and the group's peak charge is read back (bench/serving/memory_cgroup.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.serving.memory_cgroup import MemoryCgroup, drop_cached_pages

LIMIT = 96 << 20
TOUCH = "import sys; b = bytearray(int(sys.argv[1]) << 20); b[::4096] = b'x' * len(b[::4096]); print('done')"


@pytest.fixture
def group() -> Iterator[MemoryCgroup]:
    made = MemoryCgroup.create(f"tansuo-test-{os.getpid()}", LIMIT)
    if made is None:
        pytest.skip("no memory cgroup can be made here (needs root and a memory controller)")
    yield made
    made.remove()
    assert not made.path.exists()


def _run(group: MemoryCgroup, mib: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(group.wrap([sys.executable, "-c", TOUCH, str(mib)]), capture_output=True, text=True,
                          timeout=60)  # fmt: skip


def test_a_process_under_the_limit_runs_and_its_peak_is_charged(group: MemoryCgroup) -> None:
    assert group.limit_bytes() == LIMIT
    done = _run(group, 40)
    assert done.returncode == 0 and done.stdout.strip() == "done"
    assert 40 << 20 <= group.peak_bytes() <= LIMIT


def test_a_process_over_the_limit_is_killed_by_the_kernel(group: MemoryCgroup) -> None:
    done = _run(group, 400)
    assert done.returncode == -9 and "done" not in done.stdout
    assert group.oom_kills() >= 1


def test_dropping_cached_pages_counts_the_files_it_asked_about(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"x" * 10_000)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_bytes(b"y" * 5_000)
    assert drop_cached_pages(tmp_path) == 15_000


def test_reading_into_the_page_cache_reads_every_file(tmp_path: Path) -> None:
    from bench.serving.memory_cgroup import read_into_page_cache

    (tmp_path / "a").write_bytes(b"x" * (5 << 20))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_bytes(b"y" * 7)
    assert read_into_page_cache(tmp_path) == (5 << 20) + 7
