"""Many hosts in one process: a ``SiteServer`` on each loopback address, all on one port.

One port for all, so that every host's URL differs only by its address, as sites on
the web differ by name on port 80. Each server keeps its own request log, which is the
politeness evidence: one log a host, stamped when each request line arrives.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from services.cli.static_site_server import RequestRecord, SiteServer
from tests.servers.net import free_port

BIND_ATTEMPTS = 5


class LoopbackHosts:
    """Serves ``root/<address>/`` on ``http://<address>:<port>/`` for every address."""

    def __init__(self, root: Path, addresses: Sequence[str]) -> None:
        self.root = root
        self.addresses = list(addresses)
        self.servers: dict[str, SiteServer] = {}

    def start(self) -> LoopbackHosts:
        """Bind every address on one free port; a port free on 127.0.0.1 may be taken on
        another address, so a failed bind starts over on a new port."""
        for _ in range(BIND_ATTEMPTS):
            try:
                self._bind_all(free_port())
                return self
            except OSError:
                self.stop()
        raise RuntimeError(f"no port was free on all {len(self.addresses)} addresses")

    def _bind_all(self, port: int) -> None:
        for address in self.addresses:
            self.servers[address] = SiteServer(self.root / address, host=address, port=port).start()

    def stop(self) -> None:
        for server in self.servers.values():
            server.stop()
        self.servers.clear()

    def __enter__(self) -> LoopbackHosts:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return next(iter(self.servers.values())).port

    def front_pages(self) -> list[str]:
        return [server.url for server in self.servers.values()]

    def requests(self) -> dict[str, list[RequestRecord]]:
        """Each host's request log, in arrival order."""
        return {address: server.requests for address, server in self.servers.items()}

    def clear_requests(self) -> None:
        for server in self.servers.values():
            server.clear_requests()

