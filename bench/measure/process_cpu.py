"""CPU seconds of a running process, and of the whole machine, read from /proc.

``wait4`` gives a child's CPU only once it has exited, and a cluster's services are
measured up to the moment the crawl settles, while they keep running; /proc gives it
at any moment. Its children's time is included once they have been waited for.
"""

from __future__ import annotations

import os

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system time of ``pid`` and of its waited-for children; 0 if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            stat = f.read()
    except OSError:
        return 0.0
    # The command name (field 2) may hold spaces and parentheses: count from its end.
    fields = stat.rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(v) for v in fields[11:15])
    return (utime + stime + cutime + cstime) / _TICKS


def machine_busy_seconds() -> float:
    """CPU seconds every process on the machine has used since boot (all cores, idle and
    I/O wait left out): on a shared machine, what others took shows here and nowhere else."""
    with open("/proc/stat", encoding="ascii") as f:
        user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in f.readline().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / _TICKS
