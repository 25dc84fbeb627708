"""One article under many URLs, with different boilerplate each time: every copy stays
in the index (each findable by its own text), and a search shows them as one result."""

from __future__ import annotations

import random

from services.common.adapters.sqlite.bus import SqliteBus
from services.common.analysis.words import segment
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from services.common.domain import minhash
from services.common.domain.messages import TOPIC_PAGES, PageEvent
from services.crawler.extract import extract
from services.indexer.indexer import Indexer
from services.search.search_service import SearchService

ARTICLE = """
探索是一个面向中文网站的搜索引擎。它从种子地址出发，按照礼貌的节奏抓取网页，识别国标编码和统一码，
把标题、小标题和正文分别提取出来，再用结巴分词把连续的汉字切成词语，建立倒排索引。
每个主机都有自己的抓取间隔，调度器记住上一次请求结束的时间，保证同一个网站不会在短时间内收到太多请求。
如果服务器返回稍后重试的响应，调度器会按照响应头里的时间暂停这个主机；如果连续出现服务器错误，间隔会成倍增加。
页面内容没有变化时，下一次重新抓取的间隔加倍；内容变化时，间隔减半，但始终保持在五分钟到三十天之间。
排序时，标题里的词比正文里的词更重要，几个查询词连在一起出现的页面会得到额外的加分，
被很多页面链接的页面还会因为较高的网页排名而排在前面。搜索结果的摘要围绕命中的词语截取，并把命中的部分突出显示。
管理员可以在一台机器上先用嵌入式模式运行，等数据量变大以后，再把同样的服务部署到集群里，用消息队列把各个服务连接起来。
"""

BOILERPLATE_WORDS = "天气 体育 财经 科技 教育 旅游 健康 汽车 房产 文化 娱乐 军事 历史 美食 时尚".split()


def page(n: int) -> str:
    rng = random.Random(n)
    related = "、".join(rng.sample(BOILERPLATE_WORDS, 3))
    return (
        f"<html><head><title>探索搜索引擎介绍</title></head><body>"
        f"<div class='top'>站点导航 第{n}版</div><h1>探索搜索引擎介绍</h1><p>{ARTICLE}</p>"
        f"<div class='related'>相关推荐：{related}</div><p>本文编号 {1000 + n}，访问次数 {rng.randint(1, 99999)}</p>"
        "</body></html>"
    )


URLS = [f"http://news.example.cn/article?id=42&from={n}" for n in range(19)] + ["http://news.example.cn/article/42"]


def _index_copies(tmp_path, pages):  # type: ignore[no-untyped-def]
    cfg = Settings(data_dir=tmp_path)
    bus, index = SqliteBus(tmp_path / "bus.sqlite3"), build_search_index(cfg)
    indexer = Indexer(cfg, bus, index)
    hashes = set()
    for n, (url, html) in enumerate(pages):
        content = extract(url, html)
        hashes.add(content.content_hash)
        event = PageEvent(url=url, host="news.example.cn", lease_id=str(n), status=200, title=content.title,
                          body=content.body, headings=content.headings, content_hash=content.content_hash,
                          fetched_at=1.0 + n)  # fmt: skip
        bus.publish(TOPIC_PAGES, event.to_bytes(), key=event.host)
        if n % 7 == 6:
            while indexer.step(0.0):
                pass
            indexer.flush()  # some copies arrive after others are committed
    while indexer.step(0.0):
        pass
    indexer.flush()
    return cfg, index, hashes


def test_twenty_copies_stay_in_the_index_and_fold_into_one_result(tmp_path):
    cfg, index, hashes = _index_copies(tmp_path, [(url, page(n)) for n, url in enumerate(URLS)])
    assert len(hashes) == 20, "the copies must really differ, or this only tests exact dedup"
    assert index.count() == 20
    out = SearchService(cfg, index).search("探索搜索引擎介绍")
    (result,) = out["results"]
    assert len(result["similar"]) == 19
    assert {result["url"], *(s["url"] for s in result["similar"])} == set(URLS)


def test_a_page_that_differs_only_in_boilerplate_is_found_by_its_own_sentence(tmp_path):
    unique = "第二篇文章独有的一句话：抓取间隔由管理员在配置文件里设定。"
    pages = [
        ("http://news.example.cn/a", page(1)),
        ("http://news.example.cn/b", page(2).replace("</p><div class='related'>", unique + "</p><div class='related'>")),
    ]
    cfg, index, _ = _index_copies(tmp_path, pages)
    assert index.count() == 2
    out = SearchService(cfg, index).search("抓取间隔由管理员在配置文件里设定")
    assert out["results"][0]["url"] == "http://news.example.cn/b"


def test_different_articles_are_not_near_duplicates():
    a = minhash.signature(segment(ARTICLE))
    reordered = minhash.signature(segment("。".join(reversed(ARTICLE.split("。")))))
    other = minhash.signature(segment(
        "黄河是中国第二长河，发源于青藏高原巴颜喀拉山北麓，流经九个省区，最后注入渤海。" * 3 + "长江流域的气候温暖湿润，物产丰富。" * 5
    ))  # fmt: skip
    assert minhash.similarity(a, other) < 0.2
    assert not set(minhash.bands(a)) & set(minhash.bands(other))
    assert minhash.similarity(a, reordered) >= minhash.THRESHOLD  # same sentences: same bigrams, mostly


def test_short_pages_get_no_signature():
    assert minhash.signature(segment("登录 注册 首页")) == ()


def test_signatures_round_trip_through_storage():
    sig = minhash.signature(segment(ARTICLE))
    assert len(sig) == minhash.HASHES and minhash.unpack(minhash.pack(sig)) == sig
