"""The million-page benchmark's own parts: turning the packages' texts into pages,
drawing queries, splitting a search's time by stage, rendering the report. The
benchmark itself is not run here (bench/ records timings)."""

from __future__ import annotations

from types import SimpleNamespace

from bench.scale import scale_latency
from bench.scale.scale_latency import Stages
from bench.scale.scale_queries import MIX, draw
from bench.sites import scale_corpus
from bench.sites.scale_corpus import (
    Article,
    Corpus,
    articles_of,
    page_event,
    plain_text,
    poems_of,
)

TAGGED = [
    "迈向/v  充满/v  希望/n  的/u  新/a  世纪/n",
    "（/w  一九九七年/t  十二月/t  三十一日/t  ）/w",
    "在/p  [中央/n  人民/n  广播/vn  电台/n]nt  ，/w  我/r  十分/m  高兴/a  。/w",
    "中国/ns  人民/n  决心/d  继承/v  遗志/n  。/w",
    "",
    "北京/ns  举行/v  新年/t  音乐会/n",
    "音乐会/n  在/p  人民/n  大会堂/n  举行/v  。/w",
]


def _corpus() -> Corpus:
    articles = [
        Article(("铁路运输调整干线分工", "优化运能"), ("京广线以客运为主，兼顾货运。", "京九线以货运为主，兼顾客运。")),
        Article(("北京举行新年音乐会",), ("音乐会在人民大会堂举行，观众热烈鼓掌。", "指挥家表示明年还要再来。")),
        Article(("全国农村扶贫工作会议召开",), ("会议要求动员全社会力量打好扶贫攻坚战。",)),
    ]
    poems = ["静夜思\t李白\t床前明月光，疑是地上霜。\n举头望明月，低头思故乡。",
             "春晓\t孟浩然\t春眠不觉晓，处处闻啼鸟。\n夜来风雨声，花落知多少。",
             "登鹳雀楼\t王之涣\t白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼。"]  # fmt: skip
    return Corpus(articles, poems)


def test_the_gold_segmentation_tags_are_stripped_to_plain_text() -> None:
    assert plain_text(TAGGED[2]) == "在中央人民广播电台，我十分高兴。"
    assert plain_text(TAGGED[0]) == "迈向充满希望的新世纪"


def test_headline_runs_open_an_article_and_paragraphs_fill_it() -> None:
    articles = articles_of(TAGGED)
    assert [a.headlines for a in articles] == [("迈向充满希望的新世纪", "（一九九七年十二月三十一日）"), ("北京举行新年音乐会",)]
    assert articles[0].paragraphs == ("在中央人民广播电台，我十分高兴。", "中国人民决心继承遗志。")
    assert articles[1].paragraphs == ("音乐会在人民大会堂举行。",)


def test_poems_keep_title_author_and_lines_and_lyrics_use_their_tune_as_title() -> None:
    poems = poems_of([{"title": "詠月", "author": "朱貞白", "paragraphs": ["當塗當塗見，", "蕪湖蕪湖見。"]},
                      {"rhythmic": "踏莎行", "author": "韩绛", "paragraphs": ["嵩峤云高，洛川波暖。"]},
                      {"title": "无句", "author": "某", "paragraphs": []}])  # fmt: skip
    assert [(p.title, p.author, p.lines) for p in poems] == [
        ("詠月", "朱貞白", ("當塗當塗見，", "蕪湖蕪湖見。")),
        ("踏莎行", "韩绛", ("嵩峤云高，洛川波暖。",)),
    ]


def test_a_page_is_a_function_of_its_number_alone() -> None:
    corpus = _corpus()
    assert page_event(corpus, 7, 1000) == page_event(corpus, 7, 1000)
    assert page_event(corpus, 7, 1000).url != page_event(corpus, 8, 1000).url


def test_pages_are_indexable_news_or_poetry_pages_on_many_hosts() -> None:
    corpus = _corpus()
    pages = [page_event(corpus, i, 100_000) for i in range(400)]
    assert all(p.indexable and p.title and p.body and p.content_hash for p in pages)
    news = [p for p in pages if "/news/" in p.url]
    assert 0.5 < len(news) / len(pages) < 0.7
    assert all("相关报道" in p.body for p in news)
    assert len({p.host for p in pages}) > 50
    assert scale_corpus.hosts_for(1_000_000) == 5_000  # within tantivy's site aggregation


def test_queries_are_distinct_and_drawn_in_the_mix() -> None:
    queries = draw(_corpus(), 40, seed=1)
    assert len({q.text for q in queries}) == 40
    assert {q.kind for q in queries} == {kind for kind, _ in MIX}
    assert draw(_corpus(), 40, seed=1) == queries
    assert all(q.text.startswith('"') and q.text.endswith('"') for q in queries if q.kind == "quote")


def test_a_stage_counts_once_when_nested_in_itself_and_not_inside_its_caller(monkeypatch) -> None:
    now = [0.0]
    monkeypatch.setattr(scale_latency.time, "perf_counter", lambda: now[0])
    stages = Stages()

    def inner() -> None:
        now[0] += 2.0

    def recursive(depth: int) -> None:
        now[0] += 1.0
        if depth:
            owner.recursive(depth - 1)
        else:
            owner.inner()

    owner = SimpleNamespace(inner=inner, recursive=recursive)
    stages.wrap(owner, "inner", "inner")
    stages.wrap(owner, "recursive", "outer")
    owner.recursive(2)
    assert stages.take() == {"inner": 2.0, "outer": 3.0}  # three levels of 1 s, the inner stage left out
    assert stages.take() == {}
