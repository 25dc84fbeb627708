"""One site, two deployments, one index: the embedded crawl and the cluster crawl
(every service its own process on the real servers) must end with the same documents,
titles, anchors and PageRank, and answer a fixed set of queries alike.

The site is small but has what makes two deployments part ways: a redirect, two
near-duplicate pages, a page linked only from another host, and a page removed
between two crawls (recrawled, it answers 404 twice). The cluster's indexer starts
only after the ranker has ranked the whole graph, as when it trails a crawl: every
document must still get its link fields before any recrawl changes the graph again
(before the fix, documents indexed after the ranker's last run had none until the
next change of the graph).

Tolerances: PageRank within 1% (the ranker rewrites a rank only when it moved by more
than 0.1%, so a deployment that ranked more often may keep a value that close to the
last one); scores of the same query within 1e-3 relative, and positions whose scores
are that close may trade places.
"""

from __future__ import annotations

import io
import math
import os
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

import pytest

from services.cli.static_site_server import RequestRecord, SiteServer
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from services.common.ports import SearchIndex
from services.search.search_service import SearchService
from tests.cluster import Cluster, cluster_env, unranked_documents

from .conftest import _paragraph_text
from .test_cluster_crawl import _frontier, _index

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

# The first recrawl comes this long after a page's first fetch: the convergence check
# must be over by then, since a recrawl of a removed page changes the graph. After a
# 404 (a change) the interval shrinks fourfold, so the second 404 comes soon after.
RECRAWL_S = 45.0
RECRAWL = {
    "TANSUO_FRONTIER_RECRAWL_INITIAL_S": str(RECRAWL_S),
    "TANSUO_FRONTIER_RECRAWL_MAX_S": str(RECRAWL_S),
    "TANSUO_FRONTIER_RECRAWL_MIN_S": "1",
    "TANSUO_FRONTIER_RECRAWL_FACTOR": "4",
    "TANSUO_RANKER_INTERVAL_S": "1",
}
SOURCES = (
    "faq/basic-defs.zh-cn.html", "faq/compatibility.zh-cn.html", "faq/software.zh-cn.html",
    "faq/getting-debian.zh-cn.html", "faq/pkg-basics.zh-cn.html", "faq/pkgtools.zh-cn.html",
    "faq/uptodate.zh-cn.html", "faq/kernel.zh-cn.html", "faq/customizing.zh-cn.html",
    "faq/support.zh-cn.html", "faq/contributing.zh-cn.html", "faq/redistributing.zh-cn.html",
)  # fmt: skip
QUERIES = ("招生简章", "录取名单", "Debian", "软件包", "软件包 管理", "内核", "安装 系统", "升级", "发行版", "自由软件", "邮件列表", "孤页")
PAGERANK_REL = 0.01
SCORE_REL = 1e-3


def _page(title: str, paragraphs: str, links: list[tuple[str, str]], nav: bool = True) -> bytes:
    menu = "".join(f'<li><a href="{href}">{text}</a></li>' for href, text in links)
    body = "".join(f"<p>{line}</p>" for line in paragraphs.splitlines() if line)
    chrome = f"<nav><ul>{menu}</ul></nav>" if nav else f"<ul>{menu}</ul>"
    html = f"<html><head><meta charset='utf-8'><title>{title}</title></head><body>{chrome}<h1>{title}</h1>{body}</body></html>"
    return html.encode("utf-8")


def _docx(text: str) -> bytes:
    """A Word document without a title of its own: its link text becomes its title."""
    paragraphs = "".join(f"<w:p><w:r><w:t>{escape(line)}</w:t></w:r></w:p>" for line in text.splitlines() if line)
    xml = ('<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
           f"<w:body>{paragraphs}</w:body></w:document>")  # fmt: skip
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml", xml)
    return buf.getvalue()


def _csv(text: str) -> str:
    return "\n".join(f"{n},{line}" for n, line in enumerate(text.splitlines(), 1) if line)


class Site:
    """Host A holds the pages; host B (another loopback address) holds one page that
    links to A's otherwise unlinked orphan page."""

    def __init__(self, docs: Path) -> None:
        texts = [_paragraph_text(docs / path, limit=500) for path in SOURCES]
        self.removed = False
        links = [(f"/page{i}.html", f"第{i}章") for i in range(len(texts))]
        links += [("/old.html", "旧地址"), ("/guide.html", "指南"), ("/guide-print.html", "打印版"), ("/gone.html", "将删除的页")]
        # Documents (issue 35): extracted by the embedded crawl's workers and by `tansuo extractor`.
        links += [("/notice.docx", "二〇二六年招生简章"), ("/admitted.csv", "录取名单")]
        routes: dict[str, object] = {"/": (200, {"Content-Type": "text/html; charset=utf-8"}, _page("首页", "", links))}
        for i, text in enumerate(texts):
            nxt = [(f"/page{(i + 1) % len(texts)}.html", "下一章"), ("/", "首页")]
            routes[f"/page{i}.html"] = self._html(_page(f"第{i}章 {text[:12]}", text, nxt))
        routes["/old.html"] = (301, {"Location": "/new.html"}, b"")
        routes["/new.html"] = self._html(_page("新地址的页面", texts[0][::-1], [("/", "首页")]))
        guide = texts[1] + "\n" + texts[2]
        routes["/guide.html"] = self._html(_page("安装指南", guide, [("/", "首页"), ("/page1.html", "第1章")]))
        routes["/guide-print.html"] = self._html(_page("安装指南", guide, [("/", "返回")], nav=False))
        routes["/orphan.html"] = self._html(_page("孤页 只有别处链接", texts[3][::-1], []))
        routes["/notice.docx"] = (200, {"Content-Type": "application/octet-stream"}, _docx(texts[6]))
        routes["/admitted.csv"] = (200, {"Content-Type": "text/csv"}, _csv(texts[7]).encode("gb18030"))
        routes["/gone.html"] = self._gone(_page("将删除的页", texts[4][::-1], [("/page2.html", "第2章")]))
        self.a = SiteServer(docs, host="127.0.0.1", extra_routes=routes)  # type: ignore[arg-type]
        b_home = _page("另一个网站", texts[5], [("{A}/orphan.html", "孤页 只有别处链接")])
        self._b_home = b_home
        self.b = SiteServer(docs, host="127.0.0.2", extra_routes={"/": lambda r: self._b(r)})

    @staticmethod
    def _html(body: bytes):  # type: ignore[no-untyped-def]
        return (200, {"Content-Type": "text/html; charset=utf-8"}, body)

    def _gone(self, body: bytes):  # type: ignore[no-untyped-def]
        def route(request: RequestRecord):  # type: ignore[no-untyped-def]
            return (404, {}, b"gone") if self.removed else self._html(body)

        return route

    def _b(self, request: RequestRecord):  # type: ignore[no-untyped-def]
        return self._html(self._b_home.replace(b"{A}", self.a.url.rstrip("/").encode()))

    def __enter__(self) -> Site:
        self.a.start()
        self.b.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.a.stop()
        self.b.stop()

    @property
    def seeds(self) -> list[str]:
        return [self.a.url, self.b.url]

    def url(self, path: str) -> str:
        return self.a.url.rstrip("/") + path


@pytest.fixture
def site(docs_site_dir: Path) -> Iterator[Site]:
    with Site(docs_site_dir) as s:
        yield s


def _wait(condition, timeout_s: float, what: str, interval_s: float = 0.5):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting until {what}")


def _open_embedded(data: Path) -> SearchIndex | None:
    try:
        return build_search_index(Settings(data_dir=data), read_only=True)
    except Exception:  # no commit yet
        return None


def _urls(index: SearchIndex | None) -> set[str]:
    try:
        return set(index.urls()) if index is not None else set()
    except Exception:
        return set()


def _start_embedded(site: Site, data: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")} | RECRAWL
    return subprocess.Popen(
        [sys.executable, "-m", "services.cli.main", "crawl", *site.seeds, "--data", str(data), "--delay", "0",
         "--allow-private-networks", "--continuous", "--no-progress"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _cluster_until_ranked_without_indexer(cluster: Cluster, site: Site) -> float:
    """Crawl the site with no indexer running, until the frontier is idle and the ranker
    has had time to rank the whole graph; returns when the crawl started."""
    for name in ("scheduler", "crawler0", "extractor", "ranker"):
        cluster.start(name, name.rstrip("0"), wait=False)
    for name in cluster.procs:
        cluster.ready(name)
    started = time.time()
    subprocess.run([sys.executable, "-m", "services.cli.main", "seed", *site.seeds], env=cluster.env, check=True,
                   capture_output=True)  # fmt: skip
    frontier = _frontier(cluster.env)

    def idle() -> bool:
        counts = frontier.counts(time.time())
        return counts.fetched > 10 and counts.queued == 0 and counts.leased == 0

    _wait(idle, 60, "the cluster crawl is idle")
    time.sleep(3)  # three ranker intervals: the last link batches are ranked
    assert idle()
    return started


def test_the_embedded_and_the_cluster_crawl_end_with_the_same_index(
    tmp_path, site: Site, redis_server, kafka_broker, s3_endpoint, es_url
) -> None:
    data = tmp_path / "embedded"
    embedded_proc = _start_embedded(site, data)
    cluster = Cluster(cluster_env(tmp_path, redis_server, kafka_broker, s3_endpoint, es_url) | RECRAWL, tmp_path)
    try:
        started = _cluster_until_ranked_without_indexer(cluster, site)
        embedded = _wait(lambda: _open_embedded(data), 60, "the embedded index exists")
        expected = _wait(lambda: len(_urls(embedded)) >= 15 and _urls(embedded), 60, "the embedded crawl indexed the site")
        assert site.url("/gone.html") in expected and site.url("/orphan.html") in expected

        # The indexer starts late: everything it indexes comes after the ranker's last run.
        cluster.start("indexer", "indexer")
        _wait(lambda: _urls(_index(cluster.env)) == expected and _index(cluster.env), 60,
                          "the cluster indexed what the embedded crawl did")  # fmt: skip
        _wait(lambda: unranked_documents(cluster.env["TANSUO_INDEX"]) == 0, 20, "every clustered document has PageRank",
              interval_s=1)  # fmt: skip
        assert time.time() < started + RECRAWL_S, "too slow to tell: the first recrawl may have changed the graph"

        # Between two crawls a page goes away: recrawled, it answers 404 twice.
        site.removed = True
        gone = site.url("/gone.html")
        _wait(lambda: gone not in _urls(embedded) and gone not in _urls(_index(cluster.env)), 120,
              "the removed page left both indexes", interval_s=1)  # fmt: skip
        embedded_proc.send_signal(signal.SIGINT)  # Ctrl-C: the crawl indexes and ranks what it has, then exits
        _, stderr = embedded_proc.communicate(timeout=120)
        assert embedded_proc.returncode == 130, stderr[-3000:]  # interrupted, as documented
        _wait(lambda: unranked_documents(cluster.env["TANSUO_INDEX"]) == 0, 30, "every clustered document has PageRank",
              interval_s=1)  # fmt: skip
        time.sleep(2)  # the ranker's last run after the removal's link batch

        _assert_same_index(build_search_index(Settings(data_dir=data), read_only=True), _index(cluster.env))
        _assert_same_answers(data, cluster.env["TANSUO_INDEX"])
    finally:
        cluster.stop()
        if embedded_proc.poll() is None:
            embedded_proc.kill()


def _assert_same_index(embedded: SearchIndex, clustered: SearchIndex) -> None:
    urls = embedded.urls()
    assert urls == clustered.urls()
    assert {"/new.html", "/orphan.html", "/guide.html", "/notice.docx", "/admitted.csv"} <= {urlsplit(u).path for u in urls}
    for url in urls:
        one, two = embedded.get(url), clustered.get(url)
        assert one is not None and two is not None
        assert (one.title, one.body, one.anchors) == (two.title, two.body, two.anchors), url
        assert (one.filetype, one.doc_size, one.doc_pages) == (two.filetype, two.doc_size, two.doc_pages), url
        assert (one.title_tokens, one.title_grams) == (two.title_tokens, two.title_grams), url
        assert one.pagerank > 0 and two.pagerank == pytest.approx(one.pagerank, rel=PAGERANK_REL), url
    orphan = next(u for u in urls if u.endswith("/orphan.html"))
    assert "孤页" in embedded.get(orphan).anchors  # type: ignore[union-attr]  # linked from the other host


def _assert_same_answers(data: Path, index_url: str) -> None:
    one = SearchService(Settings(data_dir=data), build_search_index(Settings(data_dir=data), read_only=True))
    two = SearchService(Settings(index=index_url), build_search_index(Settings(index=index_url), read_only=True))
    answered = 0
    for q in QUERIES:
        a = [(r["url"], r["score"]) for r in one.search(q, size=10)["results"]]
        b = [(r["url"], r["score"]) for r in two.search(q, size=10)["results"]]
        assert len(a) == len(b), q
        answered += bool(a)
        scores = dict(a)
        for i, (url, score) in enumerate(b):
            assert url in scores, (q, url, a, b)
            assert math.isclose(scores[url], a[i][1], rel_tol=SCORE_REL), (q, i, a, b)
            assert math.isclose(score, scores[url], rel_tol=SCORE_REL), (q, url, a, b)
    assert answered >= len(QUERIES) - 1
