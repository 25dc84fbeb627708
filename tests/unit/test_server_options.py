"""How many worker processes `tansuo serve` and `tansuo api` start by default."""

from __future__ import annotations

import os
from pathlib import Path

from services.common.config import Settings
from services.common.runtime.http.gunicorn_server import ServerOptions, available_cores


def test_a_container_cpu_limit_caps_the_workers(tmp_path: Path) -> None:
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text("150000 100000\n")  # 1.5 cores: two workers, rounded up
    assert available_cores(cpu_max) == min(2, len(os.sched_getaffinity(0)))
    cpu_max.write_text("max 100000\n")
    assert available_cores(cpu_max) == len(os.sched_getaffinity(0))
    assert available_cores(tmp_path / "missing") == len(os.sched_getaffinity(0))


def test_workers_default_to_the_cores_and_the_setting_overrides() -> None:
    assert ServerOptions.from_settings(Settings(api_workers=0)).workers == available_cores()
    assert ServerOptions.from_settings(Settings(api_workers=3)).workers == 3
