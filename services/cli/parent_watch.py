"""A child process that must not outlive the process that started it.

A SIGKILLed parent runs no clean-up, so the child has to notice by itself. Two ways,
because neither covers every case alone: Linux's PR_SET_PDEATHSIG has the kernel send
SIGTERM the moment the parent dies (it is not inherited across our own forks, and
other systems lack it), and ``os.getppid()`` changes once the orphan is re-parented,
which the child's loop checks on every tick.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading

_PR_SET_PDEATHSIG = 1


def parent_gone(parent_pid: int) -> bool:
    return os.getppid() != parent_pid


def watch_parent(parent_pid: int, gone: threading.Event) -> None:
    """Set ``gone`` when ``parent_pid`` dies. SIGTERM from anyone else (a group-wide
    ``kill -TERM``) is ignored: the parent gets it too and tells this child when to stop,
    once the pages in flight have been fetched."""

    def on_term(signum: int, frame: object) -> None:
        if parent_gone(parent_pid):
            gone.set()

    signal.signal(signal.SIGTERM, on_term)
    _ask_kernel_for_sigterm()
    if parent_gone(parent_pid):  # died before the request above took effect
        gone.set()


def _ask_kernel_for_sigterm() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # no libc by that name: the getppid check remains
        pass
