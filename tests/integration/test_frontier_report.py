"""`tansuo frontier` and GET /api/frontier report the same frontier."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from services.api.app import create_app
from services.common.adapters.sqlite.frontier import SqliteFrontierState
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from services.common.domain.messages import LinkBatch, Outlink, PageEvent
from services.scheduler.frontier import Frontier
from services.scheduler.scope import Scope

SITE = "http://example.cn"


def _volatile(report: dict) -> dict:
    """Drop the seconds-from-now fields, which move between two reads."""
    drop = {"in_s", "next_fetch_in_s"}
    steady = dict(report)
    for key in ("hosts", "blocked_hosts", "upcoming"):
        steady[key] = [{k: v for k, v in row.items() if k not in drop} for row in report[key]]
    return steady


def test_cli_and_api_report_queues_hosts_and_blocks(tmp_path):
    cfg = Settings(data_dir=tmp_path, frontier_sitemaps=False, api_token="frontier-token-0123456789")
    f = Frontier(cfg, SqliteFrontierState(tmp_path / "frontier.sqlite3"), Scope.from_settings(cfg, [f"{SITE}/"]))
    f.add_seeds([f"{SITE}/"])
    (robots,) = f.dispatch()
    f.complete(PageEvent(url=robots.url, host=robots.host, lease_id=robots.lease_id, kind="robots", status=404))
    time.sleep(1.05)  # the host's 1 s politeness delay, counted from the robots.txt answer
    trap = [Outlink(f"{SITE}/cal/cal/cal/x"), Outlink(f"{SITE}/" + "d/" * 30)]
    f.offer_links(LinkBatch(source=f"{SITE}/", depth=0, links=[Outlink(f"{SITE}/a"), Outlink(f"{SITE}/b"), *trap]))
    (job,) = f.dispatch()
    f.complete(PageEvent(url=job.url, host=job.host, lease_id=job.lease_id, status=503, retry_after="600"))

    out = subprocess.run(
        [sys.executable, "-m", "services.cli.main", "frontier", "--data", str(tmp_path), "--json"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    cli = json.loads(out.stdout)
    api = create_app(cfg, index=build_search_index(cfg)).test_client().get(
        "/api/frontier", headers={"Authorization": "Bearer frontier-token-0123456789"}
    ).get_json()
    assert _volatile(cli) == _volatile(api)
    assert cli["queued"] == 3 and cli["in_flight"] == 0 and cli["hosts_total"] == 1
    (blocked,) = cli["blocked_hosts"]
    assert blocked["host"] == "example.cn" and "Retry-After" in blocked["reason"] and 590 < blocked["in_s"] <= 600
    assert {u["url"] for u in cli["upcoming"]} == {f"{SITE}/", f"{SITE}/a", f"{SITE}/b"}
    assert cli["limits"] == {"path_depth": 1, "path_repetition": 1}
    assert [h["paused"] for h in cli["hosts"]] == [False]
    f.state.set_paused("example.cn", True, time.time())
    out = subprocess.run(
        [sys.executable, "-m", "services.cli.main", "frontier", "--data", str(tmp_path)],
        capture_output=True, text=True, timeout=60, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert out.returncode == 0 and "paused" in out.stdout, out.stdout + out.stderr


def test_cli_table_shows_the_limits_hit(tmp_path):
    cfg = Settings(data_dir=tmp_path, frontier_sitemaps=False)
    f = Frontier(cfg, SqliteFrontierState(tmp_path / "frontier.sqlite3"), Scope.from_settings(cfg, [f"{SITE}/"]))
    f.offer_links(LinkBatch(source=f"{SITE}/", depth=0, links=[Outlink(f"{SITE}/?" + "&".join(f"p{i}=1" for i in range(40)))]))
    out = subprocess.run(
        [sys.executable, "-m", "services.cli.main", "frontier", "--data", str(tmp_path)],
        capture_output=True, text=True, timeout=60, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "crawl limits hit" in out.stdout and "query_params" in out.stdout
