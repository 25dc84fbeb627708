"""The many-host benchmark at a tiny size, embedded only, so that its code cannot rot
unnoticed: every page fetched, no host fetched faster than its delay. No timings are
asserted (bench/ records those)."""

from __future__ import annotations

from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

from bench.crawl import many_hosts_report
from bench.crawl.many_hosts import ManyHostResults, Shape, crawl_embedded, serve_site
from bench.measure import machine

# Real Chinese, but a few lines of it: the demo site would take minutes to build.
PARAGRAPHS = [
    "探索是一个面向中文网站的分布式搜索引擎，抓取、索引和排序都可以在一台机器上完成。",
    "每个主机之间的抓取间隔由调度器控制，无论运行多少个抓取进程，都不会更快地访问同一个站点。",
    "中文没有空格分隔词语，所以建立索引之前必须先进行分词，再为每个词语计算权重。",
    "网页之间的链接组成一张图，排序时用它计算每个网页的重要程度，并与文本相关性结合。",
]


def test_a_tiny_many_host_crawl_fetches_every_page_and_waits_the_delay_on_each_host(tmp_path: Path) -> None:
    shape = Shape(hosts=4, pages_per_host=3, delay_s=0.2)
    with ExitStack() as stack:
        hosts = serve_site(stack, tmp_path / "site", shape, PARAGRAPHS)
        run = crawl_embedded(hosts, shape, tmp_path / "embedded")
    assert (run.log.pages, run.log.missing, run.log.repeated) == (shape.pages, 0, 0)
    assert run.log.polite(shape.delay_s), f"two requests to one host {run.log.min_gap_s:.3f} s apart"
    results = ManyHostResults(datetime.now(UTC), run.wall_s, machine.describe(), [shape], (0.0, 0.0), {}, [run])
    section = many_hosts_report.render(results)
    assert "| 0.2 | 20 | embedded (tansuo crawl) | 12 |" in section
    assert "Every page of every host was fetched" in section
