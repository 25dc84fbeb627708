"""Opening Redis from a ``TANSUO_STATE`` URL, shared by the Redis frontier and link graph.

``redis://[:password@]host:6379/0?prefix=tansuo`` (``rediss://`` for TLS). ``prefix`` is
ours and names the key namespace (default ``tansuo``); every other query parameter is
redis-py's own (``socket_timeout=5``, ``ssl_cert_reqs=none``, ...).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

DEFAULT_PREFIX = "tansuo"
_DEFAULT_TIMEOUT_S = 5.0


class StateUnavailable(ConnectionError):
    """Redis could not be reached or did not answer in time; retry the call later."""


@dataclass(frozen=True)
class RedisTarget:
    client: redis.Redis
    prefix: str  # prepended to every key, ends with ":" unless empty
    where: str  # host:port/db for error messages, never the password


def connect(url: str, decode_responses: bool = True) -> RedisTarget:
    """A client for ``url``; no I/O happens until the first command. Replies are str
    unless ``decode_responses`` is False (for values that are bytes, not text)."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise ValueError(f"not a Redis URL: {parts.scheme}://… (expected redis://, rediss:// or unix://)")
    prefix, query = DEFAULT_PREFIX, []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key == "prefix":
            prefix = value.rstrip(":")
        else:
            query.append((key, value))
    client = redis.Redis.from_url(
        urlunsplit(parts._replace(query=urlencode(query))),
        decode_responses=decode_responses,
        # No automatic retries: re-sending a script whose reply was lost would run it
        # twice (a second batch of leases, or a finish then reported as stale). A failed
        # call raises; the caller's loop tries again, and the pool reconnects by itself.
        retry=Retry(NoBackoff(), 0),
        socket_timeout=_DEFAULT_TIMEOUT_S,
        socket_connect_timeout=_DEFAULT_TIMEOUT_S,
    )
    kw = client.connection_pool.connection_kwargs
    where = kw["path"] if "path" in kw else f"{kw.get('host', 'localhost')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"
    return RedisTarget(client, f"{prefix}:" if prefix else "", where)


F = TypeVar("F", bound=Callable[..., Any])


def translate_errors(method: F) -> F:
    """Turn redis-py's connection errors into StateUnavailable, a builtin ConnectionError,
    so that callers need not import redis to tell an outage from a bug."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except redis.exceptions.TimeoutError as e:
            raise StateUnavailable(
                f"Redis at {self._where} did not answer in time ({e}); the call may or may not have run"
            ) from e
        except redis.exceptions.ConnectionError as e:
            raise StateUnavailable(f"Redis at {self._where} is unreachable: {e}") from e

    return wrapper  # type: ignore[return-value]
