"""A query's words match by their bigrams too only while the query is short
(services/search/query_plan.py, ``search_word_grams_up_to``)."""

from __future__ import annotations

from services.common.analysis import grams
from services.common.config import Settings
from services.common.domain.query_tree import Bool, Node, Phrase
from services.search.query_plan import BODY_GRAMS, TITLE_GRAMS, QueryPlanner
from services.search.query_syntax import parse


def _gram_phrases(node: Node, fields: tuple[str, ...] = (TITLE_GRAMS, BODY_GRAMS)) -> list[tuple[str, ...]]:
    """The bigram phrases of these fields anywhere in the tree, by their values."""
    if isinstance(node, Phrase):
        return [node.values] if node.field in fields else []
    if isinstance(node, Bool):
        return [v for n in (*node.must, *node.should, *node.must_not, *node.filter) for v in _gram_phrases(n, fields)]
    return []


def _wanted_grams(q: str, any_clause: bool = False, **settings: object) -> set[tuple[str, ...]]:
    """The bigram phrases of the wanted clauses (the boosts beside them left out)."""
    tree = QueryPlanner(Settings(**settings)).plan(parse(q), any_clause=any_clause).tree
    return set(_gram_phrases(Bool(must=tree.must)))


LONG = "防火墙 配置 文件 网络 接口 地址"  # six wanted words


def test_the_words_of_a_short_query_match_by_their_bigrams_too() -> None:
    assert _wanted_grams("防火墙 配置") == {("防火", "火墙"), ("配置",)}
    assert len(_wanted_grams(" ".join(LONG.split()[:4]))) == 4  # up to four wanted words, the default


def test_the_words_of_a_longer_query_match_by_the_words_alone() -> None:
    assert _wanted_grams(LONG) == set()
    scored = Bool(should=QueryPlanner(Settings()).plan(parse(LONG)).tree.should)
    words = {tuple(w[i : i + 2] for i in range(len(w) - 1)) for w in LONG.split()}
    # Their bigrams in titles still add score; in bodies only each run of text's own
    # phrase does (the run 防火墙: a run of one bigram is the word itself).
    assert words <= set(_gram_phrases(scored, (TITLE_GRAMS,)))
    assert set(_gram_phrases(scored, (BODY_GRAMS,))) == {("防火", "火墙")}


def test_a_quoted_phrase_is_its_bigrams_whatever_the_length() -> None:
    assert ("接口", "口地", "地址") in _wanted_grams(LONG.replace("接口 地址", '"接口地址"'))


def test_widening_to_any_word_keeps_the_bigrams() -> None:
    # One word then decides whether a page matches, as in a short query.
    assert ("防火", "火墙") in _wanted_grams(LONG, any_clause=True)


def test_the_limit_is_a_setting() -> None:
    words = {tuple(w[i : i + 2] for i in range(len(w) - 1)) for w in LONG.split()}
    # Each word's bigrams, and those of 接口's Taiwan name 介面 (another name of the word).
    assert _wanted_grams(LONG, search_word_grams_up_to=6) == words | {("介面",)}
    assert _wanted_grams("防火墙 配置", search_word_grams_up_to=0) == set()


def test_a_line_typed_from_a_taiwan_page_scores_its_thirds_as_the_page_folded_them_too() -> None:
    # 选单 as read on a Taiwan page, which folded 選單 to 菜单; 指 for 置 breaks the last
    # third. The middle third also counts as 键菜单放, the page's own bigrams.
    scored = Bool(should=QueryPlanner(Settings()).plan(parse("选择右键选单放指的位")).tree.should)
    phrases = set(_gram_phrases(scored, (BODY_GRAMS,)))
    assert ("键选", "选单", "单放") in phrases and ("键菜", "菜单", "单放") in phrases
    mainland = Bool(should=QueryPlanner(Settings()).plan(parse("选择右键菜单放置的位")).tree.should)
    assert not any("选单" in p for p in _gram_phrases(mainland, (BODY_GRAMS,)))


def test_a_line_held_verbatim_weighs_twice_a_words_run() -> None:
    # A copied line (one run of six bigrams or more, no question word) verbatim outweighs the page
    # whose title holds a third of it (search_line_phrase_boost against the run-gram boost).
    cfg = Settings()

    def verbatim_boost(q: str) -> float:
        tree = QueryPlanner(cfg).plan(parse(q)).tree
        values = tuple(grams(q.split()[0]))  # the first run's
        return next(
            n.boost for n in tree.should if isinstance(n, Bool) and any(isinstance(p, Phrase) and p.values == values for p in n.should)
        )

    assert verbatim_boost("函数用于确定单元格内") == cfg.search_line_phrase_boost == 2 * cfg.search_gram_phrase_boost
    assert verbatim_boost("防火墙配置") == cfg.search_gram_phrase_boost  # a words' run
    assert verbatim_boost("如何确定单元格的内容") == cfg.search_gram_phrase_boost  # a question
    # A long title with its 其一: several runs, a title whose parts tell pages apart.
    assert verbatim_boost("大司成率同舍招游裴园泛舟 其四") == cfg.search_gram_phrase_boost
