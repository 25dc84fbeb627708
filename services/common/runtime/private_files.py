"""Every file a Tansuo process creates is its user's alone: 0600 files, 0700 directories.

The data directory holds crawled pages, the link graph, the frontier and the index;
with the common umask of 022 every other local user could read them. So each command
sets the umask to 077 before it creates anything, whatever umask it inherited, and
that covers every writer at once: SQLite (which gives its -wal and -shm files the
database's mode), tantivy (Rust, 0666 less the umask), the page packs, logs, and the
processes a command starts, which inherit it. A directory made earlier keeps its mode.
"""

from __future__ import annotations

import os

PRIVATE_UMASK = 0o077


def keep_files_private() -> None:
    """Set this process's umask (and so its children's) to 077."""
    os.umask(PRIVATE_UMASK)
