"""The client's address, for the rate limits, the token-guessing limit and the logs:
the connection's peer, or, when the peer is a trusted proxy, the address that proxy
says it forwarded for.

``X-Forwarded-For`` is a list each proxy appends its own peer to, and a client may
write any list it likes before the first proxy. So the header is read only from a
peer named in ``TANSUO_API_TRUSTED_PROXIES`` (addresses or ranges, as gunicorn's
``forwarded_allow_ips``), and from the right: the first address that is not itself
a trusted proxy is the client (Werkzeug's ProxyFix reads a fixed count instead;
naming the proxies also covers a request that reached the server around them). A
peer that is not trusted is the client, whatever the header says, so setting the
option without a proxy gives a client nothing to spoof.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from typing import Any

from flask import Flask

from services.api.rate_limit import Network, is_exempt, parse_networks
from services.common.config import Settings

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
PEER = "tansuo.peer_addr"  # environ key: the connection's own peer, kept for the logs


def init_app(app: Flask, cfg: Settings) -> None:
    proxies = parse_networks(cfg.api_trusted_proxies)
    if proxies:
        app.wsgi_app = TrustedProxies(app.wsgi_app, proxies)  # type: ignore[method-assign]


class TrustedProxies:
    """WSGI middleware setting REMOTE_ADDR to the client behind trusted proxies."""

    def __init__(self, app: WsgiApp, proxies: tuple[Network, ...]) -> None:
        self._app = app
        self._proxies = proxies

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        peer = environ.get("REMOTE_ADDR", "")
        environ[PEER] = peer
        environ["REMOTE_ADDR"] = client_address(peer, environ.get("HTTP_X_FORWARDED_FOR", ""), self._proxies)
        return self._app(environ, start_response)


def client_address(peer: str, forwarded_for: str, proxies: tuple[Network, ...]) -> str:
    """The client of a request from ``peer`` carrying ``forwarded_for``."""
    client = peer
    if not is_exempt(peer, proxies):
        return client
    for entry in reversed([e.strip() for e in forwarded_for.split(",") if e.strip()]):
        if not _is_ip(entry):
            return client  # not written by a proxy: the last proxy's peer is all we know
        client = entry
        if not is_exempt(entry, proxies):
            return client
    return client


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
