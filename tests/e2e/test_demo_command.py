"""The README's main command: `tansuo demo` builds the site, crawls it and serves the UI,
its PDF found like its pages."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.servers.net import free_port, stop_process

pytestmark = pytest.mark.e2e


def test_the_demo_crawls_the_docs_and_serves_searchable_results(demo_site_dir: Path, tmp_path: Path):
    port = free_port()
    data = tmp_path / "demo"
    data.mkdir()
    (data / "site").symlink_to(demo_site_dir)  # the site the session already built
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.cli.main", "demo", "--data", str(data), "--port", str(port), "--no-progress"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    query = urllib.parse.quote("安装 系统")
    pdf_query = urllib.parse.quote("软件包 filetype:pdf")
    page = documents = ""
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"tansuo demo exited: {proc.stderr.read()[-3000:]}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/?q={query}", timeout=5) as r:
                    page = r.read().decode("utf-8")
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/search?q={pdf_query}", timeout=5) as r:
                    documents = r.read().decode("utf-8")
                if page.count('<li class="result">') >= 10 and "debian-reference.zh-cn.pdf" in documents:
                    break
            except OSError:
                pass
            time.sleep(1)
    finally:
        stop_process(proc)
    assert page.count('<li class="result">') >= 10, page[-2000:]
    assert "<em>安装</em>" in page
    found = json.loads(documents)["results"]
    assert found and found[0]["url"].endswith("/debian-reference/debian-reference.zh-cn.pdf"), found
    assert found[0]["filetype"] == "pdf"
