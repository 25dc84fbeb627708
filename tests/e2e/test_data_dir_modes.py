"""The data directory is its user's alone, whatever the umask: a crawl started with
the common umask 022 leaves no file that another local user could read
(services/common/runtime/private_files.py), and `tansuo serve` makes no control socket
shared with other servers of the same user."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from services.cli.static_site_server import SiteServer
from tests.integration.test_api_under_load import _make_index
from tests.servers.net import free_port, stop_process, wait_for_port

from .conftest import run_cli

pytestmark = pytest.mark.e2e


def _umask_022() -> None:
    os.umask(0o022)


def test_a_crawl_under_umask_022_writes_only_owner_only_files(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text('<html><head><meta charset="utf-8"><title>首页</title></head><body>'
                                     '<a href="a.html">网络配置</a></body></html>', encoding="utf-8")  # fmt: skip
    (site / "a.html").write_text('<html><head><meta charset="utf-8"><title>网络配置</title></head><body>'
                                 "<p>防火墙与网络接口的配置方法。</p></body></html>", encoding="utf-8")  # fmt: skip
    data = tmp_path / "data"
    server = SiteServer(site).start()
    try:
        done = run_cli("crawl", server.url, "--data", str(data), "--delay", "0", "--allow-private-networks",
                       "--no-progress", preexec_fn=_umask_022)  # fmt: skip
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    found = [data, *data.rglob("*")]
    assert any(path.suffix == ".sqlite3" for path in found) and (data / "index").is_dir()
    loose = {str(path.relative_to(tmp_path)): oct(stat.S_IMODE(path.stat().st_mode))
             for path in found if stat.S_IMODE(path.stat().st_mode) & 0o077}  # fmt: skip
    assert not loose, loose


def test_serve_leaves_no_gunicorn_control_socket_behind_or_shared(tmp_path: Path) -> None:
    """gunicorn's default control socket is one path per user ($XDG_RUNTIME_DIR or
    ~/.gunicorn): every server a user ran shared it, and the first to stop removed it."""
    home, runtime = tmp_path / "home", tmp_path / "run"
    home.mkdir()
    runtime.mkdir()
    port = free_port()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")}, "HOME": str(home),
           "XDG_RUNTIME_DIR": str(runtime), "TANSUO_HEALTH_PORT": "0", "TANSUO_HEALTH_HOST": "127.0.0.1"}  # fmt: skip
    _make_index(tmp_path / "data")
    proc = subprocess.Popen([sys.executable, "-m", "services.cli.main", "serve", "--data", str(tmp_path / "data"),
                             "--port", str(port), "--workers", "1"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_for_port(port, proc)
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        time.sleep(1)  # the arbiter makes its control socket once it is up
        sockets = [path for path in (*home.rglob("*"), *runtime.rglob("*")) if path.is_socket()]
        assert not sockets, sockets
    finally:
        stop_process(proc, timeout_s=20)
