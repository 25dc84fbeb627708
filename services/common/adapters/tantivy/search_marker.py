"""When an embedded index was last searched, told across processes by a file's mtime.

Elasticsearch stops refreshing a shard that no search has reached for 30 s
(``index.search.idle.after``): a refresh nobody reads is work for nothing. The
embedded index's commits are the same work, and they are made in the index process
while the searches run in another one (`tansuo serve`, the demo's UI). So each
searching process stamps a file beside the index, at most once a second, and the
indexer reads the stamp before it decides how soon to commit. A stamp that cannot
be written (a read-only disk) is skipped: the indexer then sees an idle index and
commits at its idle pace, which only makes pages appear later.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

log = logging.getLogger(__name__)

STAMP_EVERY_S = 1.0


class SearchMarker:
    """One index's stamp file, kept beside the index directory, not inside it: a force
    merge's directory swap would take it away."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._stamped = float("-inf")  # monotonic time of this process's last stamp
        self._failed = False

    def stamp(self) -> None:
        """Record a search now, unless this process did within the last second."""
        now = time.monotonic()
        if now - self._stamped < STAMP_EVERY_S:
            return
        self._stamped = now
        try:
            self._path.touch()
        except OSError as exc:
            if not self._failed:
                self._failed = True
                log.warning("cannot record searches in %s (%s): the indexer will commit at its idle pace", self._path, exc)

    def last(self) -> float | None:
        """Wall-clock time of the last recorded search, None if none was."""
        try:
            return os.stat(self._path).st_mtime
        except OSError:
            return None
