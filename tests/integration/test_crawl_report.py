"""`tansuo report` and GET /api/report: per host, what a crawl fetched, skipped and why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from services.api.app import create_app
from services.common.adapters.sqlite.frontier import SqliteFrontierState
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from services.common.domain.messages import LinkBatch, Outlink, PageEvent
from services.scheduler.frontier import Frontier
from services.scheduler.scope import Scope

SITE = "http://example.cn"
DEAD = "http://dead.example.cn"
TOKEN = "report-token-0123456789"


def _answer(job, status: int, **fields) -> PageEvent:
    return PageEvent(url=job.url, host=job.host, lease_id=job.lease_id, kind=job.kind, depth=job.depth,
                     status=status, **fields)  # fmt: skip


def _crawl(tmp_path: Path) -> Settings:
    """example.cn: robots.txt disallows /private/, three pages (200, 404, 403), a trap
    link; dead.example.cn: never answers and is given up."""
    cfg = Settings(data_dir=tmp_path, frontier_sitemaps=False, frontier_host_delay_s=0, frontier_host_max_failures=1,
                   api_token=TOKEN)  # fmt: skip
    f = Frontier(cfg, SqliteFrontierState(tmp_path / "frontier.sqlite3"), Scope.from_settings(cfg, [f"{SITE}/", f"{DEAD}/"]))
    f.add_seeds([f"{SITE}/", f"{DEAD}/"])
    for robots in f.dispatch():
        if robots.host == "example.cn":
            f.complete(_answer(robots, 200, robots_txt="User-agent: *\nDisallow: /private/\n"))
        else:
            f.complete(_answer(robots, 404))
    f.offer_links(LinkBatch(source=f"{SITE}/", depth=0, links=[
        Outlink(f"{SITE}/missing"), Outlink(f"{SITE}/secret"), Outlink(f"{SITE}/private/x"),
        Outlink(f"{SITE}/cal/cal/cal/"),
    ]))  # fmt: skip
    statuses = {f"{SITE}/": 200, f"{SITE}/missing": 404, f"{SITE}/secret": 403}
    for job in f.dispatch():
        if job.host == "example.cn":
            f.complete(_answer(job, statuses[job.url], limits=["title_length"] if job.url == f"{SITE}/" else []))
        else:
            f.complete(_answer(job, 0, error="connection"))
    return cfg


def test_the_report_says_per_host_what_was_fetched_skipped_and_why(tmp_path: Path) -> None:
    cfg = _crawl(tmp_path)
    index = build_search_index(cfg)
    out = subprocess.run([sys.executable, "-m", "services.cli.main", "report", "--data", str(tmp_path), "--json"],
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    hosts = {row["host"]: row for row in report["hosts"]}
    site, dead = hosts["example.cn"], hosts["dead.example.cn"]
    assert site["fetched"] == 3 and site["by_status"] == {"200": 1, "403": 1, "404": 1}
    assert site["skipped"] == {"robots": 1}
    assert site["limits"] == {"path_repetition": 1, "title_length": 1}
    assert dead["fetched"] == 0 and dead["given_up"] == "connection"
    assert dead["failed"] == {"connection": 1}
    assert report["totals"]["hosts_given_up"] == 1 and report["totals"]["fetched"] == 3
    # Errors: the 404, the 403 and the seed that never answered, by URL.
    assert (site["errors"], dead["errors"], report["totals"]["errors"]) == (2, 1, 3)
    assert report["totals"]["documents"] == 0
    assert [(p["url"], p["kind"], p["why"]) for p in report["problems"]] == [
        (f"{DEAD}/", "error", "connection"), (f"{SITE}/missing", "error", "HTTP 404"),
        (f"{SITE}/secret", "error", "HTTP 403"),
    ]  # fmt: skip

    client = create_app(cfg, index=index).test_client()
    assert client.get("/api/report").status_code == 401
    api = client.get("/api/report", headers={"Authorization": f"Bearer {TOKEN}"})
    assert api.status_code == 200 and api.get_json() == report


def test_the_report_is_off_over_the_api_without_a_token(tmp_path: Path) -> None:
    cfg = Settings(data_dir=tmp_path)
    client = create_app(cfg, index=build_search_index(cfg)).test_client()
    assert client.get("/api/report", headers={"Authorization": "Bearer x"}).status_code == 403


def test_the_report_table_names_each_host(tmp_path: Path) -> None:
    _crawl(tmp_path)
    out = subprocess.run([sys.executable, "-m", "services.cli.main", "report", "--data", str(tmp_path)],
                         capture_output=True, text=True, timeout=60, env={**os.environ, "COLUMNS": "250"})  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "dead.example.cn" in out.stdout and "robots 1" in out.stdout and "given up 1" in out.stdout
