"""Tansuo's C module (``_native.c``), or None where it was not built.

setup.py builds it when the installing machine has a C compiler, and leaves it out
otherwise (``optional=True``); every caller keeps a Python twin of each function that
gives the same results, slower, so an install without a compiler works the same. The
indexer says so in its log when it starts (``warn_if_missing``).
"""

from __future__ import annotations

import functools
import importlib
import logging
from types import ModuleType

native: ModuleType | None
try:
    native = importlib.import_module("services.common._native")
except ImportError:  # installed without a C compiler
    native = None


@functools.cache
def warn_if_missing() -> None:
    """One warning a process, from the indexer, where it matters: building documents
    takes about twice as long without the module."""
    if native is None:
        logging.getLogger(__name__).warning(
            "Tansuo's C module is not built (no C compiler when it was installed): documents "
            "are analysed in Python, about twice as slowly; install gcc and python3-dev, "
            "then reinstall (scripts/install.sh)"
        )
