"""A memory limit for a measured server, enforced by the kernel as a container's is.

A memory-mapped index counts in a process's resident set (VmHWM) as far as the machine
lets it grow: on a machine with RAM to spare, every index page a search touches stays.
Under a limit (``docker run --memory``, a Kubernetes limit, systemd's MemoryMax) the
kernel takes those pages back instead, since they are clean file pages it can read
again. So the figure that says whether a server fits in 2 GB is its memory with a 2 GB
limit in force, and the latency it keeps there.

The group is made under this process's own memory cgroup (v1 ``memory`` controller, or
the unified v2 hierarchy when its memory controller is enabled), which needs root, as
CI has. Index pages already in the page cache stay charged to whoever read them first,
so ``drop_cached_pages`` evicts the index's files before the server starts: what it
reads is then charged to its own group.
"""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

_V1_ROOT = Path("/sys/fs/cgroup/memory")
_V2_ROOT = Path("/sys/fs/cgroup")


class MemoryCgroup:
    """One memory cgroup: ``wrap`` a command line to start it inside, ``peak_bytes`` after."""

    def __init__(self, path: Path, v1: bool) -> None:
        self.path = path
        self._v1 = v1

    @classmethod
    def create(cls, name: str, limit_bytes: int) -> MemoryCgroup | None:
        """None when this machine does not let us make one (not root, no memory controller)."""
        for parent, v1 in ((_v1_parent(), True), (_v2_parent(), False)):
            if parent is None:
                continue
            path = parent / name
            try:
                path.mkdir(exist_ok=True)
                group = cls(path, v1)
                group._write("memory.limit_in_bytes" if v1 else "memory.max", str(limit_bytes))
                if v1:  # no swap to spill into either, as in a container without swap
                    _try_write(path / "memory.memsw.limit_in_bytes", str(limit_bytes))
                else:
                    _try_write(path / "memory.swap.max", "0")
                return group
            except OSError:
                _try_rmdir(path)
        return None

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` started inside the group: the shell joins it, then execs the command
        (same pid), so everything the command forks is in the group too."""
        join = f"echo $$ > {shlex.quote(str(self.path / 'cgroup.procs'))} && exec \"$@\""
        return ["/bin/sh", "-c", join, "sh", *argv]

    def limit_bytes(self) -> int:
        raw = self._read("memory.limit_in_bytes" if self._v1 else "memory.max")
        return int(raw) if raw.isdigit() else -1

    def peak_bytes(self) -> int:
        """The group's largest charge, page cache included (-1 if the kernel keeps none)."""
        try:
            return int(self._read("memory.max_usage_in_bytes" if self._v1 else "memory.peak"))
        except (OSError, ValueError):
            return -1

    def oom_kills(self) -> int:
        """Processes the kernel killed for the limit (``oom_kill`` of memory.events, v2, or
        of memory.oom_control, v1 on kernels since 4.13)."""
        try:
            text = self._read("memory.events" if not self._v1 else "memory.oom_control")
        except OSError:
            return 0
        fields = dict(line.split() for line in text.splitlines() if len(line.split()) == 2)
        return int(fields.get("oom_kill", 0))

    def remove(self) -> None:
        """Once the processes are gone (the kernel refuses to remove a group in use)."""
        for _ in range(50):
            if _try_rmdir(self.path):
                return
            time.sleep(0.1)

    def _read(self, name: str) -> str:
        return (self.path / name).read_text().strip()

    def _write(self, name: str, value: str) -> None:
        (self.path / name).write_text(value)


def drop_cached_pages(directory: Path) -> int:
    """Ask the kernel to drop the cached pages of every file under ``directory``; returns
    the bytes of the files asked. Pages another process has mapped stay."""
    total = 0
    for path in _files(directory):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            total += os.fstat(fd).st_size
        finally:
            os.close(fd)
    return total


def read_into_page_cache(directory: Path) -> int:
    """Read every file under ``directory`` once, so that measurements that assume a warm
    page cache (the machine has RAM to spare) do not pay a cold start, for instance after
    ``drop_cached_pages``. Returns the bytes read."""
    total = 0
    for path in _files(directory):
        with path.open("rb") as f:
            while chunk := f.read(1 << 22):
                total += len(chunk)
    return total


def _files(directory: Path) -> list[Path]:
    return [path for path in directory.rglob("*") if path.is_file()]


def _own_path(controller: str) -> str | None:
    """This process's cgroup path in the hierarchy that has ``controller`` ("" for v2)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers.split(",") == [controller]:  # "" for v2's line: "".split(",") == [""]
            return path.lstrip("/")
    return None


def _v1_parent() -> Path | None:
    own = _own_path("memory")
    if own is None or not _V1_ROOT.is_dir():
        return None
    return _V1_ROOT / own


def _v2_parent() -> Path | None:
    own = _own_path("")
    if own is None or not (_V2_ROOT / "cgroup.controllers").exists():
        return None
    parent = _V2_ROOT / own
    try:
        enabled = (parent / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    return parent if "memory" in enabled else None


def _try_write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError:
        pass


def _try_rmdir(path: Path) -> bool:
    try:
        path.rmdir()
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False
