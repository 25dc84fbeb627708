"""PeakMemory measures the child, not the (large) process that started it."""

from __future__ import annotations

import subprocess
import sys

from tests.process_memory import PeakMemory

CHILD = "import time; block = bytearray(80 * 1024 * 1024); block[::4096] = b'x' * len(block[::4096]); time.sleep(0.5)"


def test_a_small_child_of_a_large_process_is_measured_at_its_own_size() -> None:
    ballast = bytearray(400 * 1024 * 1024)
    ballast[::4096] = b"y" * len(ballast[::4096])  # resident, as a long test session is
    proc = subprocess.Popen([sys.executable, "-c", CHILD])
    peak_mib = PeakMemory(proc).join() // 1024
    del ballast
    assert proc.returncode == 0
    assert 80 <= peak_mib < 200, peak_mib
