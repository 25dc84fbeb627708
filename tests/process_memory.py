"""A child process's own peak memory.

Neither ``wait4``'s ``ru_maxrss`` nor the child's ``getrusage`` can say it: Linux
carries the high-water mark of the memory a process had before ``exec`` into the new
program's, and ``subprocess`` starts children with ``vfork``, so a child of a large
test process "peaks" at the test process's size (a 62 MiB child of a 600 MiB parent
reports 611 MiB). ``VmHWM`` in /proc belongs to the program's own address space.
"""

from __future__ import annotations

import subprocess
import threading


def _hwm_kib(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


class PeakMemory:
    """Watches a running child's VmHWM until it exits; ``kib`` is the last value seen
    (the mark only grows, so at most the last ``interval_s`` of growth is missed)."""

    def __init__(self, proc: subprocess.Popen[bytes], interval_s: float = 0.05) -> None:
        self.kib = 0
        self._proc = proc
        self._interval = interval_s
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while self._proc.poll() is None:
            value = _hwm_kib(self._proc.pid)
            if value is not None:
                self.kib = max(self.kib, value)
            threading.Event().wait(self._interval)

    def join(self) -> int:
        """Wait for the child to exit; its peak in KiB."""
        self._proc.wait()
        self._thread.join()
        return self.kib
