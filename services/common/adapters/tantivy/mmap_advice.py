"""Tell the kernel that a search reads the index's memory-mapped files at random.

tantivy memory-maps every segment file. On a page fault Linux reads ahead around the
page (128 KiB and more), which suits a file read front to back but not a search, which
touches a few pages of postings, positions and stored blocks here and there. While the
machine has RAM to spare the extra pages only sit in the page cache; under a memory
limit (a container's, systemd's MemoryMax) they push out the pages searches need, and
every query reads from disk again (docs/benchmarks.md, "Under a memory limit").

tantivy-py does not expose tantivy's own ``madvise`` option, so the mappings are found
in /proc/self/maps and advised with libc's ``madvise(MADV_RANDOM)``. Only readers do it:
a writer's merges read segments front to back, where read-ahead pays. Elsewhere than
Linux this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import mmap
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_MAPS = Path("/proc/self/maps")


class RandomAccessAdvice:
    """Advises the mappings of files under one directory, each mapping once."""

    def __init__(self, directory: Path) -> None:
        self._prefix = str(Path(directory).resolve()) + "/"
        self._advised: set[tuple[int, int, str]] = set()
        self._madvise = _libc_madvise()

    def apply(self) -> int:
        """Advise the mappings not advised yet (new segments after a reload); returns
        how many were. Cheap: one read of /proc/self/maps."""
        if self._madvise is None:
            return 0
        try:
            lines = _MAPS.read_text().splitlines()
        except OSError:
            return 0
        current, advised = set(), 0
        for start, end, path in _mappings(lines, self._prefix):
            key = (start, end, path)
            current.add(key)
            if key in self._advised:
                continue
            if self._madvise(start, end - start, mmap.MADV_RANDOM) == 0:
                advised += 1
            else:
                log.debug("madvise(MADV_RANDOM) failed for %s (errno %d)", path, ctypes.get_errno())
        self._advised = current  # an unmapped segment's range may be reused
        return advised


def _mappings(lines: list[str], prefix: str) -> list[tuple[int, int, str]]:
    out = []
    for line in lines:
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and parts[5].startswith(prefix):
            low, high = parts[0].split("-")
            out.append((int(low, 16), int(high, 16), parts[5]))
    return out


def _libc_madvise() -> Any:  # a ctypes function, or None where madvise cannot help
    if not _MAPS.exists() or not hasattr(mmap, "MADV_RANDOM"):
        return None
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    madvise = ctypes.CDLL(name, use_errno=True).madvise
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    return madvise
