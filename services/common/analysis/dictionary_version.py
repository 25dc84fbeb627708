"""A number that changes whenever the operator's dictionaries installed in this process
change (user words, synonyms, stop words): caches of answers key on it, since the same
query may now be planned differently."""

from __future__ import annotations

import itertools
import threading

_lock = threading.Lock()
_counter = itertools.count(1)
_current = 0


def current() -> int:
    return _current


def bump() -> int:
    """Mark a change; returns the new number."""
    global _current
    with _lock:
        _current = next(_counter)
        return _current
