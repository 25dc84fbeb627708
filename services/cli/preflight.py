"""Checks made before a command starts work, so that what a user can get wrong ends in
one line saying what to do, before any request is sent or any server started: the
data directory (usable, and not crawled into by another process) and the ports.
"""

from __future__ import annotations

import argparse
import errno
import socket
import sys
from pathlib import Path

from services.cli.data_dir import command_line, crawl_holder, hold_crawl_lock, usable
from services.common.bootstrap import embedded_index
from services.common.config import Settings
from services.common.errors import BadInput

# Commands that crawl into their data directory; `tansuo demo` crawls into DIR/crawl.
CRAWLING = frozenset({"crawl", "run", "demo"})
# Commands that write into the data directory without crawling (created if missing).
WRITING = frozenset({"seed", "scheduler", "crawler", "indexer", "ranker"})
# Commands that change what a crawl left there, and so need it to exist.
CHANGING = frozenset({"host", "force-merge"})
SERVING = frozenset({"serve", "run", "demo", "api"})


class PortBusy(BadInput):
    """A port the command must listen on is taken."""


def crawl_dir(command: str, data_dir: Path) -> Path:
    return data_dir / "crawl" if command == "demo" else data_dir


def check(command: str, args: argparse.Namespace, cfg: Settings) -> None:
    """Raise a BadInput subclass (one line) for anything that would fail later."""
    data = cfg.data_dir
    if command in CRAWLING:
        if command != "demo":
            _check_seeds(cfg, args.seeds)  # a typo is said before the data directory is touched
        else:
            usable(data, writable=True)
        hold_crawl_lock(crawl_dir(command, data), command_line())
    elif command in WRITING and _embedded(cfg):
        usable(data, writable=True)
    elif command in CHANGING and _embedded(cfg) and data.exists():
        usable(data, writable=True)
    elif getattr(args, "data", None) is not None:
        usable(data, writable=False)
    if command in SERVING and not getattr(args, "no_serve", False):
        check_port(cfg.api_host, cfg.api_port, "--port (TANSUO_API_PORT)")
    if command == "api":
        # Prometheus scrapes this port in a cluster: `tansuo api` does not start without it.
        check_port(cfg.health_host, cfg.health_port, "TANSUO_HEALTH_PORT", what="metrics port")


def _check_seeds(cfg: Settings, seeds: list[str]) -> None:
    from services.scheduler.seed_submission import seed_request

    seed_request(seeds, allow_private_networks=cfg.crawler_allow_private_networks)


def _embedded(cfg: Settings) -> bool:
    return not (cfg.bus and cfg.state and cfg.store) or embedded_index(cfg)


def crawl_note(cfg: Settings) -> str:
    """For `tansuo serve`: a line saying a crawl is writing what it serves, if one is."""
    holder = crawl_holder(cfg.data_dir)
    if holder is None:
        return ""
    return f"{cfg.data_dir} is being crawled into by {holder}: searches see its pages as the crawl commits them"


def check_port(host: str, port: int, option: str, what: str = "port") -> None:
    """Bind ``host:port`` once and let go, as the server will bind it (SO_REUSEADDR, so
    a port in TIME_WAIT after the last run is not taken for busy); port 0 is any port."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise PortBusy(
                    f"{what} {port} on {host} is in use (another Tansuo or another server): "
                    f"stop it, or choose another with {option}"
                ) from None
            if exc.errno in (errno.EACCES, errno.EPERM):
                raise PortBusy(f"{what} {port} on {host}: permission denied (ports below 1024 need root); "
                               f"choose another with {option}") from None  # fmt: skip
            if exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT) or isinstance(exc, socket.gaierror):
                raise PortBusy(f"cannot listen on {host}: not an address of this machine") from None
            raise


def print_note(line: str) -> None:
    if line:
        print(line, file=sys.stderr)
