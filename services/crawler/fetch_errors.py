"""Name why a fetch got no response, in the short snake_case words PageEvent.error uses.

The scheduler decides from these whether to retry (timeout, connection) or give up
(dns, private_address, too_large), so an unknown failure must still get a name.
"""

from __future__ import annotations

from collections.abc import Iterator

from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
    UnsupportedURLSchemeError,
)
from twisted.internet import error as tx_error
from twisted.internet.defer import CancelledError
from twisted.web.client import ResponseFailed, ResponseNeverReceived

from services.crawler.network_guard import PrivateAddressError, PrivateAddressRefused

# First match wins, so the specific causes come before the wrappers that carry them.
_KINDS: tuple[tuple[tuple[type[BaseException], ...], str], ...] = (
    ((PrivateAddressRefused, PrivateAddressError), "private_address"),
    ((CannotResolveHostError, tx_error.DNSLookupError), "dns"),
    ((DownloadTimeoutError, tx_error.TimeoutError, tx_error.TCPTimedOutError), "timeout"),
    ((ResponseDataLossError,), "data_loss"),
    ((UnsupportedURLSchemeError,), "bad_url"),
    ((DownloadConnectionRefusedError, tx_error.ConnectError, tx_error.ConnectionLost,
      tx_error.ConnectionDone, DownloadFailedError, ResponseFailed, ResponseNeverReceived,
      ConnectionError), "connection"),
    # Scrapy cancels a body that outgrows DOWNLOAD_MAXSIZE mid-stream without saying
    # why; the spider tells that case apart by counting the bytes it saw.
    ((DownloadCancelledError, CancelledError), "cancelled"),
)
_TOO_LARGE_HINTS = ("max size", "maxsize")


def error_kind(exc: BaseException) -> str:
    """"dns", "timeout", "connection", "private_address", "too_large", "tls", "cancelled",
    ... or "fetch_error"."""
    chain = list(_causes(exc))
    if any(_is_too_large(e) for e in chain):
        return "too_large"
    if any(_is_tls(e) for e in chain):
        return "tls"
    for kinds, name in _KINDS:
        if any(isinstance(e, kinds) for e in chain):
            return name
    return "fetch_error"


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """The exception, what it was raised from, and the reasons Twisted's web client keeps."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]
        todo += [f.value for f in getattr(current, "reasons", []) if hasattr(f, "value")]


def _is_too_large(exc: BaseException) -> bool:
    # A declared Content-Length over DOWNLOAD_MAXSIZE, or a decompressed body over
    # it, is refused with a message that says so.
    if not isinstance(exc, (DownloadCancelledError, CancelledError, IgnoreRequest)):
        return False
    return any(hint in str(exc).lower() for hint in _TOO_LARGE_HINTS)


def _is_tls(exc: BaseException) -> bool:
    module = type(exc).__module__
    return module.startswith(("OpenSSL", "ssl")) or "SSL" in type(exc).__name__
