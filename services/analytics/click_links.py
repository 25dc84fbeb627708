"""Click links: a result's link goes through ``/go``, which records the click and
redirects to the page, so clicks are counted without JavaScript.

The link is signed (HMAC over the URL, the query and the position with the search
log's shared key), so ``/go`` is no open redirect: it leads only to URLs a results
page linked to. Every API process of a deployment shares the key (SearchLog.click_key).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import threading
from collections.abc import Callable
from urllib.parse import urlencode

log = logging.getLogger(__name__)

_SIGNATURE_CHARS = 24  # 96 bits of HMAC-SHA256


class ClickLinks:
    def __init__(self, key: Callable[[], bytes], path: str = "/go") -> None:
        self._key_source = key
        self._key: bytes | None = None
        self._lock = threading.Lock()
        self._path = path

    def _current_key(self) -> bytes | None:
        if self._key is None:
            with self._lock:
                if self._key is None:
                    try:
                        self._key = self._key_source()
                    except Exception as exc:  # the search log away: plain links until it is back
                        log.warning("click links: no key from the search log, results link directly: %s", exc)
                        return None
        return self._key

    def _signature(self, key: bytes, url: str, query: str, position: int) -> str:
        message = "\n".join((url, query, str(position))).encode("utf-8", "surrogatepass")
        return hmac.new(key, message, hashlib.sha256).hexdigest()[:_SIGNATURE_CHARS]

    def link(self, url: str, query: str, position: int) -> str | None:
        """The click link of a result, or None when links cannot be signed now."""
        key = self._current_key()
        if key is None:
            return None
        sig = self._signature(key, url, query, position)
        return f"{self._path}?{urlencode({'url': url, 'q': query, 'pos': position, 'sig': sig})}"

    def valid(self, url: str, query: str, position: int, signature: str) -> bool:
        key = self._current_key()
        if key is None:
            return False
        # Bytes: compare_digest refuses a str that is not ASCII, which anyone can send.
        return hmac.compare_digest(self._signature(key, url, query, position).encode(), signature.encode())
