"""Many commands (scripts included) over many hash slots in few round trips, on one
Redis or on Redis Cluster.

redis-py pipelines a single Redis's commands in one round trip, but its cluster
pipeline refuses EVALSHA, which is how the frontier's scripts run. So on a cluster the
calls are grouped by the node that serves their key's slot, and each group goes out as
an ordinary pipeline to that node: one round trip per node, not per call. A call a node
refuses with MOVED or ASK (its slot moved meanwhile) did not run: the cluster's map is
refreshed and that call alone is sent again, through the cluster client, which follows
the redirection.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import redis
from redis.cluster import RedisCluster

# One call: the key that decides its slot, and what to queue on a pipeline for it.
Call = tuple[str, Callable[[Any], object]]


def run_calls(client: redis.Redis | RedisCluster, calls: Sequence[Call]) -> list[Any]:
    """Each call's reply, in order; the first error raises (after every group ran)."""
    if not calls:
        return []
    if not isinstance(client, RedisCluster):
        pipe = client.pipeline(transaction=False)
        for _, queue in calls:
            queue(pipe)
        return pipe.execute()
    groups: dict[str, list[int]] = {}
    nodes: dict[str, Any] = {}
    for n, (key, _) in enumerate(calls):
        node = client.get_node_from_key(key)
        groups.setdefault(node.name, []).append(n)
        nodes[node.name] = node
    replies: list[Any] = [None] * len(calls)
    moved: list[int] = []
    for name, members in groups.items():
        pipe = client.get_redis_connection(nodes[name]).pipeline(transaction=False)
        for n in members:
            calls[n][1](pipe)
        for n, reply in zip(members, pipe.execute(raise_on_error=False), strict=True):
            if isinstance(reply, redis.exceptions.ResponseError) and str(reply).startswith(("MOVED", "ASK")):
                moved.append(n)
            replies[n] = reply
    if moved:
        client.nodes_manager.initialize()
        for n in moved:
            replies[n] = calls[n][1](client)
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply
    return replies
