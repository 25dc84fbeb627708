from __future__ import annotations

from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadTimeoutError,
    IgnoreRequest,
)
from twisted.internet.error import ConnectionLost

from services.crawler.fetch_errors import error_kind
from services.crawler.network_guard import PrivateAddressError, PrivateAddressRefused


def raised_from(outer: Exception, inner: Exception) -> Exception:
    try:
        try:
            raise inner
        except Exception as exc:
            raise outer from exc
    except Exception as exc:
        return exc


def test_each_failure_gets_its_short_name() -> None:
    assert error_kind(CannotResolveHostError("nxdomain")) == "dns"
    assert error_kind(DownloadTimeoutError("took longer")) == "timeout"
    assert error_kind(DownloadConnectionRefusedError("refused")) == "connection"
    assert error_kind(ConnectionLost()) == "connection"
    assert error_kind(PrivateAddressRefused("10.0.0.1")) == "private_address"
    assert error_kind(RuntimeError("surprise")) == "fetch_error"


def test_the_cause_decides_over_the_wrapper() -> None:
    wrapped = raised_from(CannotResolveHostError("x"), PrivateAddressError("10.0.0.1"))
    assert error_kind(wrapped) == "private_address"


def test_size_limit_messages_mean_too_large() -> None:
    msg = "Expected to receive 20486 bytes which is larger than download max size (4096) in request"
    assert error_kind(DownloadCancelledError(msg)) == "too_large"
    decompressed = ("Ignored response <200 https://a.cn/> because its body (9 B compressed, 20 B "
                    "decompressed so far) exceeded DOWNLOAD_MAXSIZE (4 B) during decompression.")
    assert error_kind(IgnoreRequest(decompressed)) == "too_large"
    assert error_kind(DownloadCancelledError("")) == "cancelled"
