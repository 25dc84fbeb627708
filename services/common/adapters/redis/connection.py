"""Opening Redis from a ``TANSUO_STATE`` URL, shared by the Redis frontier and link graph.

``redis://[:password@]host:6379/0?prefix=tansuo`` (``rediss://`` for TLS) is one Redis
(standalone, or the primary behind Sentinel's or a cloud's address);
``redis+cluster://[:password@]host1:6379,host2:6379/?prefix=tansuo`` (``rediss+cluster://``
for TLS) is a Redis Cluster, reached through any of the nodes named, which need not be
all of them. A cluster has only database 0. ``prefix`` is ours and names the key
namespace (default ``tansuo``); every other query parameter is redis-py's own
(``socket_timeout=5``, ``ssl_cert_reqs=none``, ...).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.retry import Retry

from services.common.errors import BackendUnavailable

DEFAULT_PREFIX = "tansuo"
_DEFAULT_TIMEOUT_S = 5.0
_DEFAULT_PORT = 6379
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}


class StateUnavailable(BackendUnavailable):
    """Redis could not be reached or did not answer in time; retry the call later."""


@dataclass(frozen=True)
class RedisTarget:
    client: redis.Redis | RedisCluster
    prefix: str  # prepended to every key, ends with ":" unless empty
    where: str  # host:port/db (or "cluster host:port,…") for error messages, never the password

    @property
    def cluster(self) -> bool:
        return isinstance(self.client, RedisCluster)


def is_redis_url(url: str) -> bool:
    return urlsplit(url).scheme in ("redis", "rediss", "unix", *CLUSTER_SCHEMES)


def connect(url: str, decode_responses: bool = True) -> RedisTarget:
    """A client for ``url``. Replies are str unless ``decode_responses`` is False (for
    values that are bytes, not text). One Redis is reached at the first command; a
    cluster at once, to learn which node holds which slots."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss", "unix", *CLUSTER_SCHEMES):
        raise ValueError(
            f"not a Redis URL: {parts.scheme}://… (expected redis://, rediss://, unix://, "
            "redis+cluster:// or rediss+cluster://)"
        )
    prefix, query = DEFAULT_PREFIX, []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key == "prefix":
            prefix = value.rstrip(":")
        else:
            query.append((key, value))
    options: dict[str, Any] = dict(
        decode_responses=decode_responses,
        # No automatic retries: re-sending a script whose reply was lost would run it
        # twice (a second batch of leases, or a finish then reported as stale). A failed
        # call raises; the caller's loop tries again, and the pool reconnects by itself.
        # (A cluster's MOVED and ASK redirections are still followed: a redirected
        # command did not run.)
        retry=Retry(NoBackoff(), 0),
        socket_timeout=_DEFAULT_TIMEOUT_S,
        socket_connect_timeout=_DEFAULT_TIMEOUT_S,
    )
    prefix = f"{prefix}:" if prefix else ""
    if parts.scheme in CLUSTER_SCHEMES:
        return _connect_cluster(parts._replace(query=urlencode(query)), options, prefix)
    client = redis.Redis.from_url(urlunsplit(parts._replace(query=urlencode(query))), **options)
    kw = client.connection_pool.connection_kwargs
    where = kw["path"] if "path" in kw else f"{kw.get('host', 'localhost')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"
    return RedisTarget(client, prefix, where)


def _connect_cluster(parts: Any, options: dict[str, Any], prefix: str) -> RedisTarget:
    userinfo, _, hosts = parts.netloc.rpartition("@")
    nodes = []
    for server in hosts.split(","):
        host, sep, port = server.strip().rpartition(":")
        if not sep or not port.isdigit():
            host, port = server.strip(), str(_DEFAULT_PORT)
        if host:
            nodes.append((host.strip("[]"), int(port)))
    if not nodes:
        raise ValueError("a redis+cluster:// URL names no node")
    if parts.path.strip("/") not in ("", "0"):
        raise ValueError(f"Redis Cluster has only database 0, not {parts.path.strip('/')!r}")
    first = f"{CLUSTER_SCHEMES[parts.scheme]}://{userinfo + '@' if userinfo else ''}{nodes[0][0]}:{nodes[0][1]}/0"
    if parts.query:
        first += f"?{parts.query}"
    client = RedisCluster.from_url(
        first,
        startup_nodes=[ClusterNode(host, port) for host, port in nodes[1:]],
        # ``retry`` (no retries, above) is also the cluster's own: a connection error
        # raises, and the cluster's map is refreshed before the caller's next try.
        **options,
    )
    return RedisTarget(client, prefix, "cluster " + ",".join(f"{h}:{p}" for h, p in nodes))


def ping(client: redis.Redis | RedisCluster) -> None:
    """Raise unless every node answers: on a cluster, a PING of one random node (redis-py's
    default) says nothing about the slots the others serve."""
    if isinstance(client, RedisCluster):
        client.ping(target_nodes=RedisCluster.PRIMARIES)
    else:
        client.ping()


F = TypeVar("F", bound=Callable[..., Any])

# Errors of a cluster that is (for now) not serving a slot: a failover in progress,
# a node away. The call did not run, or may not have; either way, retry later.
_CLUSTER_DOWN = (redis.exceptions.ClusterDownError, redis.exceptions.TryAgainError, redis.exceptions.MasterDownError)


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
        except (redis.exceptions.ConnectionError, *_CLUSTER_DOWN) as e:
            raise StateUnavailable(f"Redis at {self._where} is unreachable: {e}") from e
        except redis.exceptions.RedisClusterException as e:
            if "connect" not in str(e).lower():
                raise
            raise StateUnavailable(f"Redis at {self._where} is unreachable: {e}") from e

    return wrapper  # type: ignore[return-value]
