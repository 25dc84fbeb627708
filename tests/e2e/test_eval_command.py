"""`tansuo eval` end to end: a few pages served on 127.0.0.1, crawled with `tansuo
crawl`, then measured in-process, over HTTP and with a generated query set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.api.app import create_app
from services.cli.static_site_server import SiteServer
from services.common.config import Settings
from services.common.runtime.http.inprocess_server import serve as serve_app
from services.evaluation.judgments import read_judgments

from .conftest import run_cli

pytestmark = pytest.mark.e2e

PAGES = {
    "apt.html": ("使用 APT 管理软件包", "高级软件包工具能够自动处理依赖关系，从镜像站点下载并安装软件包。"
                 "更新软件包列表之后，系统会比较本地版本与仓库中的版本，然后提示可以升级的软件。"),
    "firewall.html": ("配置防火墙", "内核中的包过滤框架负责检查每一个经过网络接口的数据包。"
                      "管理员编写规则链，决定哪些连接被接受，哪些连接被丢弃或者拒绝。"),
    "kernel.html": ("编译内核模块", "为新硬件编写驱动程序时，需要获取与当前运行内核版本相符的头文件，"
                    "在源码目录中执行构建命令，最后加载生成的模块并检查系统日志。"),
    "backup.html": ("备份与恢复", "定期把重要数据复制到另一块磁盘或者远程服务器，是防止意外丢失的最好办法。"
                    "恢复的时候要先确认备份文件完整，再覆盖原来的目录。"),
    "mail.html": ("邮件服务器", "邮件传输代理接收外部投递的信件，根据收件人地址决定本地存放还是继续转发，"
                  "反垃圾过滤器会给可疑的信件打分并放入单独的文件夹。"),
}


def _write_site(root: Path) -> None:
    links = "".join(f'<li><a href="{name}">{title}</a></li>' for name, (title, _) in PAGES.items())
    index = f'<html><head><meta charset="utf-8"><title>测试站点首页</title></head><body><h1>目录</h1><ul>{links}</ul></body></html>'
    (root / "index.html").write_text(index, encoding="utf-8")
    for name, (title, body) in PAGES.items():
        html = (f'<html><head><meta charset="utf-8"><title>{title}</title></head><body><h1>{title}</h1>'
                f'<p>{body}</p><p><a href="index.html">返回目录</a></p></body></html>')
        (root / name).write_text(html, encoding="utf-8")


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    root = tmp_path_factory.mktemp("evalsite")
    _write_site(root)
    site = SiteServer(root).start()
    data = tmp_path_factory.mktemp("evaldata")
    result = run_cli("crawl", site.url, "--data", str(data), "--delay", "0", "--allow-private-networks", "--no-progress")
    assert result.returncode == 0, result.stderr
    yield site.url, data
    site.stop()


JUDGED = """# hand-judged queries for the test site
title\t配置防火墙\t/firewall.html
title\t备份与恢复\t/backup.html
topic\t软件包 依赖\t/apt.html
topic\t邮件 转发\t/mail.html\t/index.html
"""


def _eval(*args: str, env: dict | None = None) -> dict:
    result = run_cli("eval", *args, "--json", "--no-progress", env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_in_process_eval_reports_every_ranker_per_type(crawled, tmp_path):
    base, data = crawled
    judged = tmp_path / "q.tsv"
    judged.write_text(JUDGED, encoding="utf-8")
    out = _eval(str(judged), "--data", str(data), "--base-url", base)
    assert out["types"] == ["title", "topic", "overall"]
    assert set(out["rankers"]) == {"tansuo", "bm25", "bm25-grams", "tfidf", "pr-hits"}
    tansuo = out["rankers"]["tansuo"]
    assert tansuo["title"]["queries"] == 2 and tansuo["overall"]["queries"] == 4
    assert tansuo["title"]["mrr@10"] == 1.0 and tansuo["title"]["p@1"] == 1.0
    # /index.html is judged relevant for 邮件 转发 but is not in the index (the site root is "/"):
    # recall for that query can reach 0.5 at most.
    assert tansuo["topic"]["recall@100"] == pytest.approx(0.75)
    for metrics in out["rankers"]["bm25"].values():
        assert set(metrics) == {"queries", "mrr@10", "ndcg@10", "recall@10", "recall@100", "p@1"}


def test_over_http_pages_through_a_small_page_size_and_agrees(crawled, tmp_path):
    base, data = crawled
    judged = tmp_path / "q.tsv"
    # Every page links back with 返回目录: five relevant pages, one per API page.
    every = "\t".join(f"/{name}" for name in PAGES)
    judged.write_text(JUDGED + f"topic\t软件\t/apt.html\nall\t返回目录\t{every}\n", encoding="utf-8")
    local = _eval(str(judged), "--data", str(data), "--base-url", base, "--no-baselines")
    cfg = Settings(data_dir=data, search_max_page_size=1)  # every result on its own page
    server = serve_app(create_app(cfg), "127.0.0.1", 0)
    try:
        remote = _eval(str(judged), "--url", f"http://127.0.0.1:{server.port}", "--base-url", base)
    finally:
        server.shutdown()
    assert set(remote["rankers"]) == {"tansuo"}  # no --data: no index to build baselines from
    assert remote["rankers"]["tansuo"] == local["rankers"]["tansuo"]
    assert remote["rankers"]["tansuo"]["all"]["recall@100"] == 1.0


def test_generate_then_eval(crawled, tmp_path):
    base, data = crawled
    out_file = tmp_path / "known.tsv"
    result = run_cli("eval", "--data", str(data), "--generate", str(out_file), "--seed", "5", "--no-progress")
    assert result.returncode == 0, result.stderr
    judgments = read_judgments(out_file)
    types = {j.qtype for j in judgments}
    assert types == {"title", "title-words", "body-quote"}
    titles = {j.query for j in judgments if j.qtype == "title"}
    assert titles == {"测试站点首页", *(title for title, _ in PAGES.values())}
    quotes = [j for j in judgments if j.qtype == "body-quote"]
    assert len(quotes) == len(PAGES)  # the index page has no Han run of 10
    for j in quotes:
        body = PAGES[j.relevant[0].rsplit("/", 1)[-1]][1]
        assert j.query in body
    again = tmp_path / "again.tsv"
    run_cli("eval", "--data", str(data), "--generate", str(again), "--seed", "5", "--no-progress")
    assert again.read_text(encoding="utf-8") == out_file.read_text(encoding="utf-8")
    scores = _eval(str(out_file), "--data", str(data))
    assert scores["types"] == ["title", "title-words", "body-quote", "overall"]


def test_bad_judgments_exit_2_naming_the_line(crawled, tmp_path):
    _, data = crawled
    bad = tmp_path / "bad.tsv"
    bad.write_text("title\t配置防火墙\t/firewall.html\ntitle 备份 /backup.html\n", encoding="utf-8")
    result = run_cli("eval", str(bad), "--data", str(data), "--base-url", "http://x.cn/")
    assert result.returncode == 2
    assert f"{bad}:2: expected type<TAB>query<TAB>URL" in result.stderr
    missing = run_cli("eval", str(bad))
    assert missing.returncode == 2 and "--data" in missing.stderr
