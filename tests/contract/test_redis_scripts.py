"""The Redis adapters' Lua scripts in pipelines (services/common/adapters/redis/slots.py):
no SCRIPT EXISTS round trip before each pipeline, and a server that has forgotten the
scripts (restarted, failed over) answers every call all the same."""

from __future__ import annotations

import pytest
import redis

from services.common.adapters.redis.connection import connect
from services.common.adapters.redis.frontier import RedisFrontierState
from services.common.adapters.redis.link_graph import RedisLinkGraph
from services.common.domain.frontier_types import HostUpdate, NewUrl

NOW = 1_000_000.0
HOSTS = ("a.example.cn", "b.example.cn", "c.example.cn")

pytestmark = pytest.mark.integration


def _ready(state: RedisFrontierState, *paths: str) -> None:
    for host in HOSTS:
        state.ensure_host(host, "http", 0.0)
        state.update_host(host, HostUpdate(robots_state="ready", robots_txt="", robots_fetched_at=NOW), NOW,
                          release=False)  # fmt: skip
    state.add_urls([NewUrl(f"http://{h}/{p}", h, 0) for h in HOSTS for p in paths], NOW, 1000)


def _leased(state: RedisFrontierState) -> list[str]:
    return sorted(lease.url for lease in state.lease_due(NOW, 1000, 100, 1000))


def _flush_scripts(client: redis.Redis | redis.RedisCluster) -> None:
    if isinstance(client, redis.RedisCluster):
        for node in client.get_nodes():
            client.get_redis_connection(node).script_flush()
    else:
        client.script_flush()


def test_a_pipeline_of_scripts_sends_no_script_exists(redis_url: str) -> None:
    state = RedisFrontierState.from_url(redis_url)
    _ready(state, "a")  # every script the calls below use is loaded by now
    admin = connect(redis_url).client
    admin.config_resetstat()
    state.add_urls([NewUrl(f"http://{h}/b", h, 0) for h in HOSTS], NOW, 1000)
    assert len(_leased(state)) == 6
    stats = admin.info("commandstats")
    assert stats["cmdstat_evalsha"]["calls"] >= 2  # both went through the scripts, pipelined
    assert "cmdstat_script|exists" not in stats and "cmdstat_script" not in stats
    admin.close()
    state.close()


@pytest.mark.parametrize("url_fixture", ["redis_url", "redis_cluster_url"])
def test_the_frontier_and_the_link_graph_load_their_scripts_again_when_the_server_forgot_them(
    url_fixture: str, request: pytest.FixtureRequest
) -> None:
    any_redis_url = request.getfixturevalue(url_fixture)
    state = RedisFrontierState.from_url(any_redis_url)
    graph = RedisLinkGraph.from_url(any_redis_url)
    _ready(state, "a")
    graph.set_outlinks_many([("http://a.example.cn/a", [("http://b.example.cn/a", "乙")])])
    admin = connect(any_redis_url).client
    _flush_scripts(admin)
    state.add_urls([NewUrl(f"http://{h}/b", h, 0) for h in HOSTS], NOW, 1000)  # a pipeline of EVALSHA
    assert _leased(state) == sorted(f"http://{h}/{p}" for h in HOSTS for p in "ab")
    _flush_scripts(admin)
    changed = graph.set_outlinks_many([
        ("http://a.example.cn/a", [("http://c.example.cn/a", "丙")]),
        ("http://b.example.cn/a", [("http://a.example.cn/a", "甲")]),
    ])  # fmt: skip
    assert changed == [True, True] and graph.node_count() == 2
    admin.close()
    graph.close()
    state.close()
