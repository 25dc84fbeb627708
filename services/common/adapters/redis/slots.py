"""Many commands (scripts included) over many hash slots in few round trips, on one
Redis or on Redis Cluster.

redis-py pipelines a single Redis's commands in one round trip, but its cluster
pipeline refuses EVALSHA, which is how the frontier's scripts run. So on a cluster the
calls are grouped by the node that serves their key's slot, and each group goes out as
an ordinary pipeline to that node: one round trip per node, not per call. A call a node
refuses with MOVED or ASK (its slot moved meanwhile) did not run: the cluster's map is
refreshed and that call alone is sent again, through the cluster client, which follows
the redirection.

Scripts go into a pipeline as bare EVALSHA (``script_call``). A pipeline given redis-py's
Script objects asks the server SCRIPT EXISTS for all of them before every execute: one
more round trip each time, which was a sixth of a cluster scheduler's busy samples.
A server that answers NOSCRIPT (restarted, or failed over, since the script was
loaded) did not run that call either: it is sent again through the client, whose Script
loads the script and runs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import redis
from redis.client import Pipeline
from redis.cluster import RedisCluster
from redis.commands.core import Script
from redis.exceptions import NoScriptError

# One call: the key that decides its slot, and what to queue on a pipeline for it.
Call = tuple[str, Callable[[Any], object]]


def load_scripts(client: redis.Redis | RedisCluster, scripts: Iterable[Script]) -> None:
    """Load ``scripts`` on the server (every primary of a cluster) before their first
    EVALSHA in a pipeline, which would otherwise come back NOSCRIPT and go again alone."""
    for script in scripts:
        client.script_load(script.script)


def script_call(script: Script, keys: Sequence[str], args: Sequence[Any]) -> Callable[[Any], object]:
    """What ``run_calls`` queues for one run of ``script``: EVALSHA on a pipeline, the
    Script itself on a client (which loads it when the server does not have it)."""

    def call(client: Any) -> object:
        if isinstance(client, Pipeline):
            return client.evalsha(script.sha, len(keys), *keys, *args)
        return script(keys=keys, args=args, client=client)

    return call


def run_calls(client: redis.Redis | RedisCluster, calls: Sequence[Call]) -> list[Any]:
    """Each call's reply, in order; the first error raises (after every group ran)."""
    if not calls:
        return []
    if isinstance(client, RedisCluster):
        return _raise_first(_run_on_cluster(client, calls))
    pipe = client.pipeline(transaction=False)
    for _, queue in calls:
        queue(pipe)
    answered = pipe.execute(raise_on_error=False)
    for n, reply in enumerate(answered):
        if isinstance(reply, NoScriptError):
            answered[n] = calls[n][1](client)
    return _raise_first(answered)


def _run_on_cluster(client: RedisCluster, calls: Sequence[Call]) -> list[Any]:
    """One pipeline per node; a call refused unrun (MOVED or ASK after a reshard, or
    NOSCRIPT on a new node) runs again on its own once the slot map is reloaded."""
    groups: dict[str, list[int]] = {}
    nodes: dict[str, Any] = {}
    for n, (key, _) in enumerate(calls):
        node = client.get_node_from_key(key)
        groups.setdefault(node.name, []).append(n)
        nodes[node.name] = node
    replies: list[Any] = [None] * len(calls)
    again: list[int] = []
    for name, members in groups.items():
        pipe = client.get_redis_connection(nodes[name]).pipeline(transaction=False)
        for n in members:
            calls[n][1](pipe)
        for n, reply in zip(members, pipe.execute(raise_on_error=False), strict=True):
            if _refused_unrun(reply):
                again.append(n)
            replies[n] = reply
    if any(not isinstance(replies[n], NoScriptError) for n in again):
        client.nodes_manager.initialize()
    for n in again:
        replies[n] = calls[n][1](client)
    return replies


def _refused_unrun(reply: object) -> bool:
    return isinstance(reply, NoScriptError) or (
        isinstance(reply, redis.exceptions.ResponseError) and str(reply).startswith(("MOVED", "ASK"))
    )


def _raise_first(replies: list[Any]) -> list[Any]:
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply
    return replies
