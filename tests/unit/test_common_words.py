"""Words most pages hold select no page in a long query; they only add score
(services/search/query_plan.py, ``search_common_word_share``)."""

from __future__ import annotations

from collections.abc import Sequence

from services.common.config import Settings
from services.common.domain.query_tree import Bool, Node, Phrase, Term
from services.search.query_plan import Plan, QueryPlanner
from services.search.query_syntax import parse

PAGES = 1000
HELD_BY = {"工作": 400, "相关": 700, "会议": 60, "航空工业": 5, "批示": 3, "李鹏": 30, "谈": 500, "什么": 300}


def _stats(pairs: Sequence[tuple[str, str]]) -> tuple[int, list[int]]:
    """Document frequencies of an index of 1,000 pages, the same in every field."""
    return PAGES, [HELD_BY.get(word, 1) for _, word in pairs]


def _plan(q: str, **settings: object) -> Plan:
    return QueryPlanner(Settings(**{"search_common_word_pages": 0, **settings}), _stats).plan(parse(q))


def _words(node: Node) -> set[str]:
    """The words of a clause (its title term names it)."""
    if isinstance(node, Term):
        return {node.value} if node.field == "title_tokens" else set()
    if isinstance(node, Bool):
        return set().union(*(_words(n) for n in (*node.must, *node.should)))
    return set()


def _wanted(plan: Plan) -> tuple[list[set[str]], int]:
    (wanted,) = plan.tree.must
    return [_words(c) for c in wanted.should], wanted.minimum_should_match


def test_in_a_long_query_words_most_pages_hold_only_add_score() -> None:
    plan = _plan("李鹏 航空工业 工作 会议 批示 相关")
    clauses, minimum = _wanted(plan)
    assert clauses == [{"李鹏"}, {"航空工业"}, {"批示"}]  # 会议 too is held by over 5% of the pages
    assert minimum == 2  # a third of the three that select, rounded up, as for any query of three words
    scored = set().union(*(_words(n) for n in plan.tree.should))
    assert {"工作", "相关", "会议"} <= scored
    assert (plan.clauses, plan.minimum) == (6, 2)  # matched_all stays false


def test_the_share_is_a_setting_and_zero_turns_it_off() -> None:
    assert _wanted(_plan("李鹏 航空工业 工作 会议 批示 相关", search_common_word_share=0.5)) == (
        [{"李鹏"}, {"航空工业"}, {"工作"}, {"会议"}, {"批示"}], 2)  # fmt: skip
    clauses, minimum = _wanted(_plan("李鹏 航空工业 工作 会议 批示 相关", search_common_word_share=0))
    assert len(clauses) == 6 and minimum == 3


def test_a_word_held_by_fewer_pages_than_the_floor_still_selects() -> None:
    # On a small site the postings are short, and setting words aside cost answers.
    clauses, _ = _wanted(_plan("李鹏 航空工业 工作 会议 批示 相关", search_common_word_pages=500))
    assert clauses == [{"李鹏"}, {"航空工业"}, {"工作"}, {"会议"}, {"批示"}]  # 相关 (700 pages) alone set aside
    clauses, _ = _wanted(_plan("李鹏 航空工业 工作 会议 批示 相关", search_common_word_pages=50_000))
    assert len(clauses) == 6  # the default floor: nothing set aside in an index of 1,000 pages


def test_short_queries_are_unchanged() -> None:
    assert _wanted(_plan("批示 工作")) == ([{"批示"}, {"工作"}], 2)  # every word required: AND's precision kept


def test_a_long_query_of_common_words_alone_requires_them_all() -> None:
    # Lucene's CommonTermsQuery: high-frequency terms alone become a conjunction.
    plan = _plan("工作 相关 会议")
    assert _wanted(plan) == ([{"工作"}, {"相关"}, {"会议"}], 3)
    assert (plan.clauses, plan.minimum) == (3, 3)  # matched_all holds
    clauses, minimum = _wanted(_plan("工作 相关 会议", search_common_word_pages=50_000))
    assert minimum == 2  # below the floor in pages nothing is common: a third of three, rounded up


def test_the_minimum_is_the_share_of_the_words_that_select_and_never_more_than_before() -> None:
    assert _wanted(_plan("工作 相关 批示 会议")) == ([{"批示"}], 1)
    clauses, minimum = _wanted(_plan("工作 相关 会议 批示 李鹏 航空工业 铁路 运输 干线 分工 优化"))
    assert len(clauses) == 8 and minimum == 3  # a third of 8 rounded up; of all 11 it would be 4


def _fields(node: Node) -> set[str]:
    if isinstance(node, (Term, Phrase)):
        return {node.field}
    if isinstance(node, Bool):
        return set().union(*(_fields(n) for n in (*node.must, *node.should)))
    return set()


def test_a_common_word_scores_in_titles_only() -> None:
    plan = _plan("李鹏 航空工业 工作 会议 批示 相关")
    common = [n for n in plan.tree.should if _words(n) & {"工作", "相关", "会议"}]
    assert len(common) == 3
    assert all(_fields(n) <= {"title_tokens", "title_grams"} for n in common)
    (wanted,) = plan.tree.must  # the selecting words keep every field
    assert all({"title_tokens", "body_tokens", "headings_tokens"} <= _fields(c) for c in wanted.should)


def _boost_fields(plan: Plan) -> set[str]:
    """The fields of the phrase boosts: the score-only phrases of more than one value."""
    out: set[str] = set()
    for node in plan.tree.should:
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, Phrase) and len(n.values) > 1:
                out.add(n.field)
            elif isinstance(n, Bool):
                stack.extend((*n.must, *n.should))
    return out


def _gram_fields(node: Node) -> set[str]:
    return {f for f in _fields(node) if f.endswith("_grams")}


def test_a_common_word_matches_by_itself_and_its_title_bigrams_only_add_score() -> None:
    plan = _plan("工作 批示")
    (wanted,) = plan.tree.must
    common, selective = wanted.should
    assert _words(common) == {"工作"} and _gram_fields(common) == set()  # no bigram phrase to match by
    assert _gram_fields(selective) == {"title_grams", "body_grams"}  # 批示 still matches by its bigrams
    scored = [n for n in plan.tree.should if _fields(n) == {"title_grams"}]
    assert scored and all("工作" in {v for p in _phrases(n) for v in p.values} for n in scored)


def _phrases(node: Node) -> list[Phrase]:
    if isinstance(node, Phrase):
        return [node]
    if isinstance(node, Bool):
        return [p for n in (*node.must, *node.should) for p in _phrases(n)]
    return []


def test_the_phrase_boosts_of_a_query_of_common_words_look_in_titles_only() -> None:
    # Typed as one run, the text is also a bigram phrase (工作 作相 相关) besides the word phrase.
    assert _boost_fields(_plan("工作相关")) == {"title_tokens", "title_grams"}
    # One word that selects keeps the pages few: the phrases look in bodies too.
    assert _boost_fields(_plan("工作批示")) == {"title_tokens", "body_tokens", "title_grams", "body_grams"}


def test_below_the_floor_in_pages_common_words_keep_their_bigrams_and_body_phrases() -> None:
    plan = _plan("工作相关", search_common_word_pages=50_000)  # the default: no word of 1,000 pages is common
    (wanted,) = plan.tree.must
    assert all(_gram_fields(c) == {"title_grams", "body_grams"} for c in wanted.should)
    assert _boost_fields(plan) == {"title_tokens", "body_tokens", "title_grams", "body_grams"}


def _score_only(plan: Plan, word: str) -> list[Node]:
    """The score-only clauses that name ``word`` by a term of a word field (the free
    text's bigram overlap may hold it as a bigram too)."""
    def names(node: Node) -> bool:
        if isinstance(node, Term):
            return node.value == word and node.field.endswith("_tokens")
        return isinstance(node, Bool) and any(names(n) for n in (*node.must, *node.should))
    return [n for n in plan.tree.should if names(n)]


def test_common_single_characters_and_question_words_score_in_titles_only() -> None:
    # 谈 (a single character between words) and 什么 (a question word) select nothing;
    # where they are common, their score comes from titles alone.
    for query, word in (("李鹏谈批示", "谈"), ("什么是航空工业", "什么")):
        (clause,) = _score_only(_plan(query), word)
        assert _fields(clause) == {"title_tokens"}, query
        (clause,) = _score_only(_plan(query, search_common_word_pages=50_000), word)
        assert {"title_tokens", "body_tokens", "headings_tokens"} <= _fields(clause), query  # below the floor


def test_a_query_of_single_characters_alone_still_requires_them_everywhere() -> None:
    # With nothing else to want, single characters are the wanted clauses, common or not.
    plan = _plan("谈")
    (wanted,) = plan.tree.must
    assert {"title_tokens", "body_tokens"} <= _fields(wanted)


def _word_fields(plan: Plan, word: str) -> set[str]:
    """The fields where the plan looks ``word`` up as a term."""
    found: set[str] = set()

    def walk(node: Node) -> None:
        if isinstance(node, Term) and node.value == word:
            found.add(node.field)
        elif isinstance(node, Bool):
            for n in (*node.must, *node.should):
                walk(n)

    walk(plan.tree)
    return found


def test_a_word_is_looked_up_only_in_the_fields_that_hold_it() -> None:
    # Anchor text and headings hold few words of a site: a term no page holds in a field
    # can match nothing there, yet a search would look it up in every segment.
    held = {("title_tokens", "防火墙"): 3, ("body_tokens", "防火墙"): 40}

    def stats(pairs: Sequence[tuple[str, str]]) -> tuple[int, list[int]]:
        return PAGES, [held.get(pair, 0) for pair in pairs]

    plan = QueryPlanner(Settings(), stats).plan(parse("防火墙"))
    assert _word_fields(plan, "防火墙") == {"title_tokens", "body_tokens", "subword_tokens"}
    assert _word_fields(_plan("防火墙"), "防火墙") == {  # held in every field: every field
        "title_tokens", "headings_tokens", "anchors_tokens", "body_tokens", "subword_tokens"}  # fmt: skip


def test_a_latin_word_no_field_holds_still_matches_nothing() -> None:
    # No bigrams to fall back on and every field left out: the clause must stay one that
    # matches nothing, not become an empty one (which matches every page).
    def none(pairs: Sequence[tuple[str, str]]) -> tuple[int, list[int]]:
        return PAGES, [0] * len(pairs)

    plan = QueryPlanner(Settings(search_subword_boost=0), none).plan(parse("zyxwv"))
    assert _word_fields(plan, "zyxwv") == {"title_tokens"}


def _gram_terms(plan: Plan, gram: str) -> set[str]:
    """The fields in which a bigram is a term of the plan's score-only clauses."""
    def fields(node: Node) -> set[str]:
        if isinstance(node, Term):
            return {node.field} if node.value == gram and node.field.endswith("_grams") else set()
        if isinstance(node, Bool):
            return set().union(*(fields(n) for n in (*node.must, *node.should)))
        return set()
    return set().union(*(fields(n) for n in plan.tree.should))


def test_a_long_runs_common_bigrams_score_in_titles_only() -> None:
    # 工作 is held by 400 of the 1,000 pages: its body postings are most of a large
    # index, read for every page a long query selects; rarer bigrams keep both fields.
    plan = _plan("李鹏批示航空工业工作", search_typo_gram_terms=9)  # every bigram among the rarest
    assert _gram_terms(plan, "工作") == {"title_grams"}
    assert _gram_terms(plan, "李鹏") == {"title_grams", "body_grams"}
    below = _plan("李鹏批示航空工业工作", search_common_word_pages=50_000, search_typo_gram_terms=9)  # the default floor
    assert _gram_terms(below, "工作") == {"title_grams", "body_grams"}


def test_a_long_runs_bigrams_score_in_bodies_only_where_they_are_its_rarest() -> None:
    # Reading each bigram's body postings for every page a headline selects was most of
    # the slowest searches at a million pages; a page that holds the line holds its rare
    # bigrams too. Titles keep every bigram: their postings are short.
    held = {"数据": 300, "据透": 2, "透视": 5, "视表": 8, "表的": 200, "的用": 100, "用法": 50}

    def stats(pairs: Sequence[tuple[str, str]]) -> tuple[int, list[int]]:
        return PAGES, [held.get(word, 0) for _, word in pairs]

    def plan(**settings: object) -> Plan:
        cfg = Settings(**{"search_common_word_share": 1.0, **settings})  # no bigram is common
        return QueryPlanner(cfg, stats).plan(parse("数据透视表的用法"))

    four = plan()  # search_typo_gram_terms, 4 by default
    assert {g for g in held if "body_grams" in _gram_terms(four, g)} == {"据透", "透视", "视表", "用法"}
    assert all("title_grams" in _gram_terms(four, g) for g in held)
    every = plan(search_typo_gram_terms=7)
    assert all(_gram_terms(every, g) == {"title_grams", "body_grams"} for g in held)
