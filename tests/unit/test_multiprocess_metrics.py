"""/metrics of a multi-process server sums every process's file, and a scrape that
meets a process still creating its file answers instead of failing."""

from __future__ import annotations

from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.mmap_dict import MmapedDict, mmap_key

from services.common.runtime.multiprocess_metrics import _started_files_collector


def _counter_file(directory: Path, pid: int, value: float) -> None:
    values = MmapedDict(str(directory / f"counter_{pid}.db"))
    values.write_value(mmap_key("tansuo_x_total", "tansuo_x_total", [], [], "x"), value, 0.0)
    values.close()


def _scrape(directory: Path) -> str:
    registry = CollectorRegistry()
    _started_files_collector()(registry, path=str(directory))
    return generate_latest(registry).decode()


def test_every_process_file_is_summed(tmp_path: Path) -> None:
    _counter_file(tmp_path, 1, 2.0)
    _counter_file(tmp_path, 2, 3.0)
    assert "tansuo_x_total 5.0" in _scrape(tmp_path)


def test_a_file_still_being_created_is_left_out_of_the_scrape(tmp_path: Path) -> None:
    _counter_file(tmp_path, 1, 2.0)
    (tmp_path / "counter_2.db").touch()  # created, not yet sized: what a starting worker leaves for a moment
    assert "tansuo_x_total 2.0" in _scrape(tmp_path)
