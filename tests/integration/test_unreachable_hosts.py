"""A one-pass crawl finishes when a host stays unreachable, and a resumed demo finds its
site where it left it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from services.cli.commands import _start_demo_site
from services.cli.static_site_server import SiteServer
from services.common.bootstrap import build_frontier_state
from services.common.config import Settings
from services.common.domain.frontier_types import HostUpdate, NewUrl
from tests.servers.net import free_port

REPO = Path(__file__).resolve().parents[2]


def _site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_text("<html><title>首页</title><a href='a.html'>甲</a></html>", encoding="utf-8")
    (root / "a.html").write_text("<html><title>甲页</title><p>内容</p></html>", encoding="utf-8")
    return root


def test_a_resumed_crawl_whose_old_host_is_gone_finishes_and_reports_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    gone = f"127.0.0.1:{free_port()}"  # the demo site's port of an earlier, interrupted run
    state = build_frontier_state(Settings(data_dir=data))
    state.ensure_host(gone, "http", 0.0)
    state.update_host(gone, HostUpdate(robots_state="ready", robots_txt="", robots_fetched_at=time.time()),
                      time.time(), release=False)  # fmt: skip
    state.add_urls([NewUrl(f"http://{gone}/{i}.html", gone, 1) for i in range(50)], time.time(), 1000)
    state.close()
    with SiteServer(_site(tmp_path)) as site:
        done = subprocess.run(
            [sys.executable, "-m", "services.cli.main", "crawl", site.url, "--data", str(data), "--no-progress",
             "--allow-private-networks", "--delay", "0"],
            cwd=REPO, capture_output=True, text=True, timeout=180,
            env={"TANSUO_FRONTIER_FAILURE_BACKOFF_S": "0.2", "PATH": "/usr/bin:/bin"},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "crawl finished" in done.stderr
    assert f"gave up on 1 unreachable host(s): {gone} (connection" in done.stderr


def test_the_demo_site_comes_back_on_the_port_of_the_last_run(tmp_path: Path) -> None:
    root, remembered = _site(tmp_path), tmp_path / "data" / "site-port"
    first = _start_demo_site(SiteServer, root, 0, remembered)
    port = first.port
    first.stop()
    again = _start_demo_site(SiteServer, root, 0, remembered)
    try:
        assert again.port == port
    finally:
        again.stop()
    with SiteServer(root, port=port):  # the old port is taken now: any other will do
        other = _start_demo_site(SiteServer, root, 0, remembered)
        try:
            assert other.port != port and remembered.read_text() == str(other.port)
        finally:
            other.stop()
