"""Memory and disk a benchmark's processes and indexes use, read from /proc and the
file system."""

from __future__ import annotations

from pathlib import Path


def status_kib(field: str, pid: int | str = "self") -> int:
    """A line of /proc/PID/status, in KiB; 0 once the process is gone.

    VmHWM rather than getrusage's ru_maxrss: Linux carries ru_maxrss across fork and
    exec, so a child would report its parent's peak when that was higher."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return 0


def dir_bytes(path: Path) -> int:
    """Bytes of every file under ``path``."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
