"""From a parsed query to the query tree both index backends run.

The query model, in one place (docs/ranking.md has the figures behind it):

- Each word of free text is one clause: the word in the word fields (title, headings,
  anchors, body, sub-words; boosted per field), or, failing that, its character bigrams
  as a phrase (a page that segments the word differently still matches, at the lower
  gram weight), except a common word (held by a large share of a large index), whose
  title bigrams only add score. Stop words are not required; a single Han character
  between other words is not required either (it carries little meaning alone, and it
  stays in the phrase boosts below), unless the query has nothing else. Question words
  and particles (怎么, 如何, 吗) are never required and weigh little. Such score-only
  words, where common, score in titles only. Repeated words count once.
- Soft conjunction: up to ``search_all_words_up_to`` clauses are all required (if no
  page has them all, any one will do, and ``matched_all`` says so); a longer query
  requires a share of them, and BM25's sum ranks the pages that hold more of the
  query's weight first.
- A quoted phrase is one clause: its bigrams as a phrase in title or body. Exact,
  whatever the segmenter does.
- ``a OR b``: a clause any of whose alternatives will do.
- Boosts that only add score: the words of the free text in order (word phrase), and
  each run of free text verbatim (bigram phrase), in title or body; in titles only
  when every wanted word is common.
- A word with other names (``analysis/synonyms.py``: 试算表 for 电子表格, excel for
  电子表格 and Calc) matches any of them, the others at the synonym weight.
- Exclusions become ``must_not`` bigram phrases; sites a filter.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from services.common.analysis import fold, grams, segment, subwords
from services.common.analysis.fold import fold_is_contextual
from services.common.analysis.grams import grams_of_folded
from services.common.analysis.han import HAN_RUN, has_han
from services.common.analysis.regional import regional_variants, taiwan_reading
from services.common.analysis.stop_words import QUESTION_WORDS, STOP_WORDS
from services.common.analysis.synonyms import is_nickname, synonyms
from services.common.analysis.words import on_user_words_changed
from services.common.config import Settings
from services.common.domain.documents import LINK_GRAMS
from services.common.domain.query_tree import Bool, Node, Phrase, Term
from services.search.query_syntax import ParsedQuery

TITLE_GRAMS = "title_grams"
BODY_GRAMS = "body_grams"
_WORD_PHRASE_FIELDS = ("title_tokens", "body_tokens")


@dataclass(frozen=True)
class Plan:
    """The tree to run, and what the answer needs besides it."""

    tree: Node
    highlight: tuple[str, ...]  # folded words and phrases to mark in titles and snippets
    clauses: int  # wanted clauses; with ``minimum`` below it, matched_all is False
    minimum: int
    widens: bool = False  # planning with any_clause would match more (more clauses, or sub-words)
    forgives: bool = False  # planning with forgiving would match more (the free text has bigrams)
    unknown: bool = False  # a wanted word of the free text is in no page (视表 of 数据头视表): a typo


TermStats = Callable[[Sequence[tuple[str, str]]], tuple[int, list[int]]]
Scales = dict[tuple[str, str], float]  # (field, word) -> factor on the field's boost
DocFreqs = tuple[int, dict[str, dict[str, int]]]  # (pages in the index, word -> field -> pages holding it)
# Fields whose idf is bounded by the collection's (BM25F-style); sub-words are parts, not words.
_SHARED_IDF_FIELDS = ("title_tokens", "headings_tokens", "anchors_tokens", "body_tokens")


_WHOLE_RUN_CHARS = 4  # a run this short with another region's name is a term, not a phrase


# A plan asks for the same text's words, sub-words and bigrams several times (the
# clauses, the boosts, the highlights), and queries repeat: each analysis is done once
# and remembered, since a plan asks for each about five times.
@functools.lru_cache(maxsize=8192)
def _words(text: str) -> tuple[str, ...]:
    words = tuple(segment(text))
    if len(words) > 1:
        # A run the segmenter splits but that has other names (枢纽分析表, Taiwan's
        # 数据透视表, is cut 枢纽 / 分析 / 表) stays one word, so its names count; so
        # does a short one (字型大小, 此函数), whose other form a page holds as a phrase.
        # Not a longer run whose other region's form only comes from a word in it
        # (如何安装程式 is 如何 / 安装 / 程式, and 程式 has its own names): made one
        # word, a whole question must be found verbatim, and finds nothing.
        whole = "".join(words)
        if whole == "".join(fold(text).split()) and (
            synonyms(whole)
            or (
                regional_variants(whole)
                and (len(whole) <= _WHOLE_RUN_CHARS or not any(regional_variants(w) for w in words))
            )
        ):
            return (whole,)
    return words


@functools.lru_cache(maxsize=8192)
def _subwords(text: str) -> tuple[str, ...]:
    return tuple(subwords(text))


@functools.lru_cache(maxsize=8192)
def _grams(text: str) -> tuple[str, ...]:
    return tuple(grams(text))


# The operator's user words change how a text splits: what was remembered is stale.
on_user_words_changed(_words.cache_clear)
on_user_words_changed(_subwords.cache_clear)


# The word fields whose idf bound (``field_scales``) a word's bigram phrase in titles,
# and in headings and bodies, takes: the same word, matched in the same text.
_GRAM_SCALE_FIELDS = ("title_tokens", "body_tokens")


def _gram_scale(scales: Scales | None, field: str, word: str) -> float:
    """The factor on ``word``'s bigram phrase from its scale in ``field``'s words. A
    phrase has a word's idf too: in a small copy of InsuranceQA (a page of links titled
    保险问答, 保险 in most bodies) the title bigrams alone lifted that page over the
    answers once its title term was bounded. Where no page holds the word as a word
    there (0), the phrase keeps its boost: it matches only text segmented otherwise."""
    scale = (scales or {}).get((field, word), 1.0)
    return scale if scale > 0 else 1.0


def _idf(docs: int, df: int) -> float:
    """BM25's idf, as Lucene and tantivy compute it; never below its value for a word
    every document holds (a backend's counts may lag one another)."""
    df = min(df, docs)
    return math.log(1 + (docs - df + 0.5) / (df + 0.5))


class QueryPlanner:
    def __init__(self, cfg: Settings, term_stats: TermStats | None = None) -> None:
        self._cfg = cfg
        self._term_stats = term_stats

    def doc_freqs(self, words: Sequence[str]) -> DocFreqs:
        """(pages in the index, each word's document frequency per word field), in one
        round trip to the index; empty without term statistics."""
        words = [w for w in dict.fromkeys(words) if w]
        if self._term_stats is None or not words:
            return 0, {}
        pairs = [(f, w) for w in words for f in _SHARED_IDF_FIELDS]
        docs, dfs = self._term_stats(pairs)
        by_word: dict[str, dict[str, int]] = {}
        for (f, w), df in zip(pairs, dfs, strict=True):
            by_word.setdefault(w, {})[f] = df
        return docs, by_word

    def field_scales(self, freqs: DocFreqs) -> Scales:
        """Field weights that keep a word's idf in one field within ``search_field_idf_cap``
        times its idf over the whole collection.

        Per-field idf says how few pages are about a word (few titles hold it), which
        finds topic pages; but a word that most pages hold can become the strongest
        signal of a query just by being rare in one short field. On InsuranceQA, 保险 is
        in the title of one page of 27,469 (the front page, a page of links, title
        保险问答) and in the bodies of most answers: its title idf is 30 times its body
        idf, and times the title boost the front page led questions about insurance
        while answers matched them. The collection idf (from the word's largest
        document frequency over the fields, as BM25F and Elasticsearch's cross_fields
        blend it) bounds each field's; a cap of 1 is BM25F's one idf.

        A field no page holds the word in gets 0, and its clause is left out
        (``_one_word``): it could match nothing and add nothing, yet a search looks
        every term up in every segment, so a clause that cannot match still costs time."""
        scales: Scales = {}
        cap = self._cfg.search_field_idf_cap
        docs, by_word = freqs
        for w, per_field in by_word.items():
            collection = _idf(docs, max(per_field.values()))
            for f, df in per_field.items():
                if df == 0:
                    scales[(f, w)] = 0.0
                elif cap > 0:
                    scales[(f, w)] = min(1.0, cap * collection / _idf(docs, df))
        return scales

    def _common(self, words: Sequence[str], freqs: DocFreqs) -> set[str]:
        """The words held by more than ``search_common_word_share`` of the pages and by
        more than ``search_common_word_pages`` pages.

        In a long query they select nothing (Lucene's CommonTermsQuery): a page is
        chosen by the query's other words, and these only add score. Holding 工作 or
        相关 says little about a page, and letting such words count towards the required
        share lets nearly every page in, each read through their long postings. The
        floor in pages leaves small sites out of the rule: their postings are short,
        and on them the rule cost answers (docs/ranking.md, 'What chose each weight')."""
        share = self._cfg.search_common_word_share
        docs, by_word = freqs
        if share <= 0 or docs <= 0:
            return set()
        above = max(share * docs, self._cfg.search_common_word_pages)
        return {w for w in words if w in by_word and max(by_word[w].values()) > above}

    # --- leaves

    def _grams_phrase(self, values: Sequence[str], title_boost: float, body_boost: float) -> Node:
        return Bool(
            should=(Phrase(TITLE_GRAMS, tuple(values), title_boost), Phrase(BODY_GRAMS, tuple(values), body_boost)),
            minimum_should_match=1,
        )

    def word(self, word: str, weight: float = 1.0, scales: Scales | None = None, by_grams: bool = True) -> Node:
        """One query word (or another name of it: 试算表 for 电子表格, excel for 电子表格);
        without ``by_grams``, in the word fields only."""
        names = self._names(word)
        if len(names) == 1:
            return self._one_word(word, weight, scales, by_grams)
        alternatives = tuple(self._one_word(n, w, scales, by_grams) for n, w in names)
        return Bool(should=alternatives, minimum_should_match=1, boost=weight)

    def _hint_weight(self, word: str) -> float:
        """The weight of a score-only word: a nickname's (``search_nickname_weight``),
        or a single character's (1)."""
        return self._cfg.search_nickname_weight if is_nickname(word) else 1.0

    def _names(self, word: str) -> list[tuple[str, float]]:
        """The word and its other names, each with its weight: its synonyms, and its
        name in the other region (列印 for 打印, 软件 for 软体), at the word's own weight:
        the same word, spelled as the other side of the strait does."""
        names = [(word, 1.0)] + [(n, self._cfg.search_synonym_weight) for n in synonyms(word)]
        names += [(n, self._cfg.search_regional_weight) for n in regional_variants(word)]
        return list({n: (n, w) for n, w in reversed(names)}.values())[::-1]

    def _one_word(self, word: str, weight: float, scales: Scales | None, by_grams: bool) -> Node:
        """One word in every word field that holds it, or its bigrams when the page split
        it otherwise."""
        cfg = self._cfg
        scales = scales or {}
        fields = cfg.search_field_boosts
        should: list[Node] = [Term(f, word, b * s) for f, b in fields if (s := scales.get((f, word), 1.0)) > 0]
        if by_grams and self._has_grams(word):
            title, body = (cfg.search_gram_boost * _gram_scale(scales, f, word) for f in _GRAM_SCALE_FIELDS)
            should.append(self._grams_phrase(_grams(word), title, body))
        if not should:  # held nowhere: still a clause, one that matches nothing (an empty one would match all)
            should = [Term(f, word, b) for f, b in fields[:1]]
        return Bool(should=tuple(should), minimum_should_match=1, boost=weight)

    def _has_grams(self, word: str) -> bool:
        """Whether a word is also looked for by its bigrams: a Han word of two or more characters."""
        return has_han(word) and len(word) >= 2 and self._cfg.search_gram_boost > 0

    def title_grams_score(self, word: str, weight: float = 1.0, scales: Scales | None = None) -> Node | None:
        """The title half of what ``word(word, weight)`` scores through its bigrams (and
        its other names'), alone: what a long query's words keep of their bigrams, as
        score for the pages the words select (a title that splits a word otherwise still
        counts), without the body's, whose phrases cost the most (``_by_grams``)."""
        title_field = _GRAM_SCALE_FIELDS[0]
        should = tuple(
            Phrase(TITLE_GRAMS, _grams(n), self._cfg.search_gram_boost * w * _gram_scale(scales, title_field, n))
            for n, w in self._names(word)
            if self._has_grams(n)
        )
        return Bool(should=should, minimum_should_match=1, boost=weight) if should else None

    def exact_grams(self, values: tuple[str, ...], titles_only: bool = False) -> Node:
        """Bigrams in a row, in title or body, or in titles only (what counts a phrase's pages)."""
        if titles_only:
            return Phrase(TITLE_GRAMS, values)
        return self._grams_phrase(values, self._cfg.search_title_grams_boost, self._cfg.search_body_grams_boost)

    def _quoted(self, values: Sequence[str]) -> Node:
        """A quoted phrase's bigrams in a row, in title or body, or among the text a page
        of links shows (``IndexDoc.link_grams``): what a user copies from such a page
        is its link texts, which its body, made of its own text, leaves out."""
        title, body, phrase = self._cfg.search_title_grams_boost, self._cfg.search_body_grams_boost, tuple(values)
        fields = ((TITLE_GRAMS, title), (BODY_GRAMS, body), (LINK_GRAMS, body))
        return Bool(should=tuple(Phrase(f, phrase, boost) for f, boost in fields), minimum_should_match=1)

    def exact(self, text: str, across: bool = False, inner: bool = False) -> Node | None:
        """A quoted phrase: its bigrams, consecutive, in title or body (``_quoted``).

        With ``across``, also the phrase as a page that holds it may be indexed
        otherwise: copied across a break of the page's text (a heading into its
        paragraph, a comma, a space), where no bigram spans the break, so the page holds
        the bigrams of the two sides one after the other; for a phrase in traditional
        script, also without one or two characters at either end, since a page's run is
        folded whole and a word cut at the phrase's edge folds otherwise alone (式 of
        函式, which the page folds to 函数). With ``inner`` too, weaker
        matches: a cut with a side of one character, that side left out; and for a
        phrase of ``_INNER_MIN_CHARS`` or more, its inner part without two characters at
        both ends, whole or across a break (印表機 copied from 表機 on). Many pages hold
        such a part alike, so the search ranks these after the pages that hold the
        whole phrase (``SearchService._find``)."""
        values = _grams(text)
        if not values:
            return None
        phrase = self._quoted(values)
        if not across:
            return phrase
        folded = fold("".join(text.split()))
        others = _across_grams(folded, lone=inner)
        if fold_is_contextual(text) and len(folded) >= _INNER_MIN_CHARS:
            for part in (folded[1:], folded[2:], folded[:-1], folded[:-2]):
                others += [grams_of_folded(part), *_across_grams(part, lone=inner)]
        if inner and len(folded) >= _INNER_MIN_CHARS and has_han(folded):
            middle = folded[2:-2]
            others += [grams_of_folded(middle), *_across_grams(middle, lone=True)]
        alternatives = tuple(dict.fromkeys(tuple(g) for g in others if len(g) >= 2 and tuple(g) != values))
        if not alternatives:
            return phrase
        return Bool(should=(phrase, *(self._quoted(g) for g in alternatives)), minimum_should_match=1)

    # --- clauses

    def _free_text(self, text: str, keep_stop_words: bool) -> tuple[list[str], list[str], list[str], list[str]]:
        """(required words, optional single characters, question words, all words) of one
        run of free text."""
        words = list(dict.fromkeys(_words(text)))
        required: list[str] = []
        optional: list[str] = []
        question: list[str] = []
        for w in words:
            if w in STOP_WORDS and not keep_stop_words:
                continue
            if w in QUESTION_WORDS:
                question.append(w)
            elif (len(w) == 1 and has_han(w)) or is_nickname(w):
                # A nickname (excel, ppt) steers towards its module's pages but is never
                # required: a spreadsheet's sorting page does not name Excel.
                optional.append(w)
            else:
                required.append(w)
        return required, optional, question, words

    def _by_grams(self, parsed: ParsedQuery, split: Mapping[int, tuple[list[str], ...]]) -> bool:
        """Whether a page may match a word of the query by the word's bigrams: in a
        query of up to ``search_word_grams_up_to`` wanted clauses.

        There one word decides whether a page matches, and a page that splits it
        otherwise must not be lost. In a longer query a page matches by a share of the
        words anyway, and each word's bigram phrase, matched on its own, is the
        costliest part of the search (docs/ranking.md, 'What chose each weight'). There the words' bigrams in titles only add
        score to the pages the words select (``title_grams_score``)."""
        wanted = 0
        for group in parsed.groups:
            sizes = [int(bool(_grams(p.text))) if p.quoted else len(split[id(p)][0]) for p in group]
            sizes = [n for n in sizes if n]
            wanted += sizes[0] if len(sizes) == 1 else min(1, len(sizes))
        return wanted <= self._cfg.search_word_grams_up_to

    def plan(  # noqa: C901 - one pass builds clauses, score-only clauses and highlights together
        self,
        parsed: ParsedQuery,
        any_clause: bool = False,
        forgiving: bool = False,
        across: bool = False,
        inner: bool = False,
    ) -> Plan:
        """The tree for ``parsed``; with ``any_clause``, one wanted clause is enough;
        with ``forgiving``, a page holding most of the free text's bigrams will do too
        (``grams_overlap``); with ``across``, a quoted phrase may run across a break of
        the page's text, and with ``inner`` too, its inner part will do (``exact``)."""
        keep_stop_words = all(w in STOP_WORDS for p in parsed.parts if not p.quoted for w in _words(p.text))
        free = [p.text for p in parsed.parts if not p.quoted]
        words = [w for t in free for w in _words(t) + (_subwords(t) if any_clause else ())]
        freqs = self.doc_freqs(words + [n for w in words for n, _ in self._names(w)[1:]])
        scales = self.field_scales(freqs)
        split = {id(p): self._free_text(p.text, keep_stop_words) for p in parsed.parts if not p.quoted}
        by_grams = any_clause or self._by_grams(parsed, split)

        gram_scores: list[Node] = []  # a long query's words' title bigrams: score, never match

        # A common word matches by itself alone; its title bigrams only add score, as
        # every word's do in a long query (``_by_grams``). Its bigram phrase over the body
        # is the costliest clause of a short query on a large index, and the pages it
        # adds are few among the many that hold the word (docs/ranking.md, 'What chose
        # each weight').
        common = self._common(words, freqs)

        def word(w: str, weight: float = 1.0) -> Node:
            grams_too = by_grams and w not in common
            scored = None if grams_too else self.title_grams_score(w, weight, scales)
            if scored is not None:
                gram_scores.append(scored)
            return self.word(w, weight, scales, grams_too)

        clauses: list[Node] = []
        clause_words: dict[int, str] = {}  # id of a clause made of one free-text word -> the word
        optional: list[Node] = []
        optional_words: dict[int, str] = {}  # id of a score-only clause of one word -> the word
        question: list[str] = []
        highlight: list[str] = []

        def score_only(w: str, weight: float = 1.0) -> Node:
            node = word(w, weight)
            optional_words[id(node)] = w
            return node

        for group in parsed.groups:
            alternatives: list[list[Node]] = []
            for part in group:
                if part.quoted:
                    exact = self.exact(part.text, across, inner)
                    highlight.extend(_words(part.text))
                    alternatives.append([exact] if exact is not None else [])
                else:
                    required_words, extra, asked, words = split[id(part)]
                    required = [(w, word(w)) for w in required_words]
                    highlight.extend(words)
                    optional.extend(score_only(w, self._hint_weight(w)) for w in extra)
                    question.extend(asked)
                    clause_words.update((id(node), w) for w, node in required)
                    alternatives.append([node for _, node in required])
            alternatives = [a for a in alternatives if a]
            if any_clause and len(group) == 1 and not group[0].quoted:
                # A word no page holds (远程登陆 for 远程登录) still finds pages through
                # its dictionary parts, as jieba's search mode splits it.
                parts = [w for w in dict.fromkeys(_subwords(group[0].text)) if w not in STOP_WORDS]
                clauses.extend(word(w) for w in parts)
            if len(alternatives) == 1:
                clauses.extend(alternatives[0])  # each word its own clause: soft conjunction counts them
            elif alternatives:
                either = [a[0] if len(a) == 1 else Bool(must=tuple(a)) for a in alternatives]
                clauses.append(Bool(should=tuple(either), minimum_should_match=1))
        # What is wanted when the query has nothing better: single characters, then
        # question words (为什么 alone is what the user asks for).
        question = list(dict.fromkeys(question))
        if not clauses:
            clauses, optional = optional, []
            optional_words.clear()
        if not clauses:
            clauses, question = [word(w) for w in question], []
        weight = self._cfg.search_question_word_weight
        if weight > 0:
            optional.extend(score_only(w, weight) for w in question)
        minimum = 1 if any_clause and clauses else self.minimum(len(clauses))
        wanted_clauses = clauses
        if not any_clause and minimum < len(clauses):
            wanted_clauses, scored, minimum = self._set_common_aside(clauses, clause_words, minimum, common)
            optional.extend(scored)
        # The wanted clauses sit in a must of their own, so that the score-only clauses
        # beside them can never count towards the minimum.
        wanted: tuple[Node, ...] = (
            (Bool(should=tuple(wanted_clauses), minimum_should_match=minimum),) if wanted_clauses else ()
        )
        free_grams = [_grams(t) for t in free]
        readings = _taiwan_grams(free, free_grams)
        gram_scales = self.gram_scales(free_grams, forgiving, readings)
        wanted, overlap = self._with_overlap(wanted, free_grams, optional, forgiving, gram_scales, readings)
        optional = self._common_in_titles(optional, optional_words, common)
        boosts = self._boosts(parsed, self._all_common(clauses, clause_words, common), gram_scales)
        tree = Bool(
            must=wanted,
            should=tuple(optional) + tuple(gram_scores) + tuple(boosts),
            must_not=tuple(self._excluded(parsed)),
            filter=tuple(self._site_filter(parsed)),
        )
        widens = len(clauses) > 1 or any(_subwords(p.text) for p in parsed.parts if not p.quoted)
        forgives = not forgiving and any(free_grams)
        unknown = any(w in freqs[1] and not any(freqs[1][w].values()) for w in clause_words.values())
        minimum = 0 if overlap is not None else minimum  # the forgiving part asks no clause of a page
        return Plan(tree, tuple(dict.fromkeys(h for h in highlight if h)), len(clauses), minimum, widens, forgives,
                    unknown)  # fmt: skip

    def gram_scales(
        self, free_grams: list[tuple[str, ...]], forgiving: bool, readings: Mapping[str, tuple[str, ...]] | None = None
    ) -> Scales:
        """The bound on each free-text bigram's title idf (``field_scales``), for the
        clauses that match a run by its bigrams apart (``grams_overlap``, ``_run_parts``):
        a bigram in one title alone (保险 in the front page's 保险问答) must not lift
        that page, as its word may not. Asked only of runs that get such clauses."""
        wanted = [g for run in free_grams if forgiving or len(run) >= self._cfg.search_typo_min_grams for g in run]
        wanted += [a for g in wanted for a in (readings or {}).get(g, ())]
        values = list(dict.fromkeys(wanted))
        if self._term_stats is None or not values:
            return {}
        pairs = [(f, g) for g in values for f in (TITLE_GRAMS, BODY_GRAMS)]
        docs, dfs = self._term_stats(pairs)
        by_gram: dict[str, dict[str, int]] = {}
        for (f, g), df in zip(pairs, dfs, strict=True):
            by_gram.setdefault(g, {})[f] = df
        scales = self.field_scales((docs, by_gram))
        # A common bigram (的是, 可以: held as commonly as a common word, ``_common``)
        # scores in titles only, as a common word does: over bodies its postings are most
        # of the index, and reading them for every page a long query selects was most of
        # what the score-only bigrams cost at a million pages (docs/ranking.md, 'Latency').
        for g in self._common(values, (docs, {g: {BODY_GRAMS: by_gram[g][BODY_GRAMS]} for g in values})):
            scales[(BODY_GRAMS, g)] = 0.0
        for run in (r for r in free_grams if len(r) >= self._cfg.search_typo_min_grams):
            for g in self._not_rarest_in_bodies(run, by_gram):
                scales[(BODY_GRAMS, g)] = 0.0
        return scales

    def _not_rarest_in_bodies(self, run: tuple[str, ...], by_gram: dict[str, dict[str, int]]) -> list[str]:
        """The bigrams of a run that score in titles only, being past its
        ``search_typo_gram_terms`` rarest in bodies. A page that holds a line has its
        rare bigrams as surely as its common ones, and they tell it from the rest;
        reading every bigram's body postings for every page that a headline selects
        was most of the slowest searches at a million pages (docs/ranking.md,
        'Latency'). Titles are short, and keep every bigram."""
        held = sorted((by_gram[g][BODY_GRAMS], g) for g in dict.fromkeys(run) if by_gram[g][BODY_GRAMS] > 0)
        return [g for _, g in held[self._cfg.search_typo_gram_terms :]]

    def _with_overlap(
        self, wanted: tuple[Node, ...], free_grams: list[tuple[str, ...]], optional: list[Node], forgiving: bool,
        scales: Scales, readings: Mapping[str, tuple[str, ...]],
    ) -> tuple[tuple[Node, ...], Node | None]:  # fmt: skip
        """(the wanted clause, with ``forgiving`` widened to the pages holding most of
        the free text's bigrams; that overlap clause or None). A long run's bigrams add
        score wherever the run is not found whole (appended to ``optional``): the page
        that holds all but one character of a line keeps the bigrams around it.
        ``readings``: a bigram's form in the text read as a Taiwan line typed in
        simplified characters (``_taiwan_grams``), which a page matches as well."""
        runs = [g for run in free_grams for g in run]
        overlap = self.grams_overlap(runs, scales, True, readings) if forgiving else None
        if overlap is not None:
            wanted = (Bool(should=wanted + (overlap,), minimum_should_match=1),)
        optional.extend(o for run in free_grams if (o := self.grams_overlap(run, scales, readings=readings)) is not None)
        return wanted, overlap

    def grams_overlap(
        self,
        values: Sequence[str],
        scales: Scales | None = None,
        select: bool = False,
        readings: Mapping[str, tuple[str, ...]] | None = None,
    ) -> Node | None:
        """The bigrams of free text, each a term in title or body, in any order: what
        survives a wrong character. A 7-character line with one character wrong still
        has 4 of its 6 bigrams, where its words (the segmenter glues the wrong one to
        its neighbours) and its bigram phrase are lost.

        With ``select``, a clause that selects the pages holding all but
        ``search_typo_chars`` characters' worth of the bigrams (two a character); else
        a score-only clause, made only for a run of ``search_typo_min_grams`` bigrams or
        more (a line or a title, not a word), None below that. A bigram with other
        ``readings`` matches by any of them."""
        cfg = self._cfg
        unique = tuple(dict.fromkeys(values))
        weight = cfg.search_typo_gram_weight
        if weight <= 0 or not unique or (not select and len(values) < cfg.search_typo_min_grams):
            return None
        scales = scales or {}
        readings = readings or {}
        terms = tuple(
            Bool(should=should, minimum_should_match=1)
            for g in unique
            if (should := tuple(t for v in (g, *readings.get(g, ())) for t in self._overlap_terms(v, weight, scales, select)))
        )
        if not terms:
            return None
        minimum = max(1, len(unique) - 2 * cfg.search_typo_chars) if select else 1
        return Bool(should=terms, minimum_should_match=minimum)

    def _overlap_terms(self, gram: str, weight: float, scales: Scales, select: bool) -> tuple[Term, ...]:
        """A bigram's terms in ``grams_overlap``: in titles unless no title holds it or its
        title idf is bounded to nothing, and in bodies unless it only scores and is a
        common bigram there or not among its run's rarest there (``gram_scales``)."""
        cfg = self._cfg
        title = scales.get((TITLE_GRAMS, gram), 1.0)
        out = [Term(TITLE_GRAMS, gram, cfg.search_title_grams_boost * weight * title)] if title > 0 else []
        if select or scales.get((BODY_GRAMS, gram), 1.0) > 0:
            out.append(Term(BODY_GRAMS, gram, cfg.search_body_grams_boost * weight))
        return tuple(out)

    def _set_common_aside(
        self, clauses: list[Node], clause_words: dict[int, str], minimum: int,
        common: set[str],
    ) -> tuple[list[Node], list[Node], int]:  # fmt: skip
        """(the clauses that select pages, the common words' clauses that only score,
        the minimum of the first): the minimum is the usual share of the selecting
        clauses, never more than it was of all of them. ``common``: the query's common
        words (``_common``).

        A common word scores in titles only: over every field its postings are the
        costliest part of a long query on a large index, and its body score says little
        while its title score still tells a page about it from one that merely uses it
        (docs/ranking.md, 'What chose each weight')."""
        selective = [c for c in clauses if clause_words.get(id(c)) not in common]
        if len(selective) == len(clauses):
            return clauses, [], minimum
        if not selective:
            # Common words alone: each is required, as Lucene's CommonTermsQuery rewrites
            # a query of high-frequency terms into a conjunction. A share of them would let
            # in a large part of the index, each page read through every word's long postings;
            # if no page holds them all, the search widens to any of them as usual.
            return clauses, [], len(clauses)
        scored = [t for c in clauses if clause_words.get(id(c)) in common if (t := _in_titles(c)) is not None]
        return selective, scored, min(minimum, self.minimum(len(selective)))

    def minimum(self, clauses: int) -> int:
        """How many wanted clauses a page must hold: all of a short query's, a share of
        a long one's (soft conjunction)."""
        cfg = self._cfg
        if clauses <= cfg.search_all_words_up_to:
            return clauses
        return max(1, math.ceil(clauses * cfg.search_long_query_share))

    # --- score-only and filtering clauses

    @staticmethod
    def _common_in_titles(nodes: list[Node], words: dict[int, str], common: set[str]) -> list[Node]:
        """The score-only clauses of single characters and question words, each in
        titles only where its word is common (``_common``), as a common word set aside
        scores (``_set_common_aside``).

        They select nothing, yet each was read through every page the query selects,
        in five fields whose postings (在, 中, 什么) hold most of a large index, which
        makes them the costliest score-only clauses of long queries and questions
        (docs/ranking.md, 'What chose each weight'). Holding 在 or 什么 in its body says nothing of a page; a title that asks 什么是…
        still does."""
        kept = [_in_titles(n) if words.get(id(n)) in common else n for n in nodes]
        return [n for n in kept if n is not None]

    @staticmethod
    def _all_common(clauses: Sequence[Node], clause_words: dict[int, str], common: set[str]) -> bool:
        """Whether every wanted clause is a common word (``_common``): then the pages
        the query selects are a large share of the index."""
        return bool(clauses) and all(clause_words.get(id(c)) in common for c in clauses)

    def _boosts(self, parsed: ParsedQuery, titles_only: bool = False, scales: Scales | None = None) -> list[Node]:
        """The phrase boosts: the free text's words in order, and each run of it
        verbatim, in title or body; with ``titles_only``, in titles alone.

        A phrase is checked against the positions of every page the query selects.
        When its words are all common that is a large share of the index, and the body
        phrases then lengthen the slowest searches (docs/ranking.md, 'What chose each
        weight'). So they score in titles only, as a common word
        itself does (``_set_common_aside``): a title that says the phrase still tells a
        page about it from one that merely uses its words."""
        cfg = self._cfg
        free = [p.text for p in parsed.parts if not p.quoted]
        boosts: list[Node] = []
        words = [w for text in free for w in _words(text)]
        word_fields = _WORD_PHRASE_FIELDS[:1] if titles_only else _WORD_PHRASE_FIELDS
        gram_fields = (TITLE_GRAMS,) if titles_only else (TITLE_GRAMS, BODY_GRAMS)
        if len(words) >= 2 and cfg.search_phrase_boost > 0:
            phrase = tuple(words)
            boosts.append(
                Bool(
                    should=tuple(Phrase(f, phrase) for f in word_fields),
                    minimum_should_match=1,
                    boost=cfg.search_phrase_boost,
                )
            )
        # A line copied from a page is one run of text; a query of several (a title and
        # its 其一, a name after a dot) is a title or words, whose parts tell pages apart.
        one_run = sum(len(HAN_RUN.findall(text)) for text in free) == 1
        if cfg.search_gram_phrase_boost > 0:
            for text in free:
                values = _grams(text)
                forms = _with_taiwan_reading(text, values)
                if len(values) >= 2:
                    line = one_run and len(values) >= _RUN_PART_MIN_GRAMS and not _asks(text)
                    boosts.append(
                        Bool(
                            should=tuple(Phrase(f, v) for v in forms for f in gram_fields),
                            minimum_should_match=1,
                            boost=cfg.search_line_phrase_boost if line else cfg.search_gram_phrase_boost,
                        )
                    )
                if not _asks(text):
                    boosts.extend(self._run_parts(forms, gram_fields, scales or {}))
        return boosts

    def _run_parts(self, forms: Sequence[tuple[str, ...]], fields: Sequence[str], scales: Scales) -> list[Node]:
        """A long run's bigrams in three parts, each a phrase that adds score: a wrong
        character breaks two neighbouring bigrams, so it breaks at most two of the parts
        and the page that holds the rest of the line verbatim still gets the third.
        ``forms``: the run's bigrams, then those of its Taiwan reading where it differs
        (``_with_taiwan_reading``), the same length; a part matches by either."""
        weight = self._cfg.search_typo_part_boost
        values = forms[0]
        if weight <= 0 or len(values) < _RUN_PART_MIN_GRAMS:
            return []
        cut = [0, len(values) // 3, 2 * len(values) // 3, len(values)]
        out: list[Node] = []
        for i in range(3):
            part = values[cut[i] : cut[i + 1]]
            alike = tuple(dict.fromkeys(form[cut[i] : cut[i + 1]] for form in forms))
            # In titles, bounded by the part's most bounded bigram (``gram_scales``); in
            # bodies at half: a page listing the title of a poem of the same series (其一
            # for 其三) holds two thirds of it there (a held-out sample's titles, MRR@10
            # 0.974 with bodies at full weight, 0.993 at half; docs/ranking.md).
            title = min(scales.get((TITLE_GRAMS, g), 1.0) for g in part)
            should = tuple(
                Phrase(f, form, title if f == TITLE_GRAMS else _BODY_PART_SHARE) for form in alike for f in fields
            )
            should = tuple(p for p in should if p.boost > 0)
            if should:
                out.append(Bool(should=should, minimum_should_match=1, boost=weight))
        return out

    def _excluded(self, parsed: ParsedQuery) -> list[Node]:
        out: list[Node] = []
        for part in parsed.excluded:
            values = _grams(part.text)
            if values:
                out.extend((Phrase(TITLE_GRAMS, values), Phrase(BODY_GRAMS, values)))
        out.extend(Term("site", s) for s in parsed.excluded_sites)
        out.extend(Term("filetype", f) for f in parsed.excluded_filetypes)
        return out

    def _site_filter(self, parsed: ParsedQuery) -> list[Node]:
        return _any_of("site", parsed.sites) + _any_of("filetype", parsed.filetypes)


def words_query(cfg: Settings, words: Sequence[str], require_all: bool = True, site: str = "") -> Node:
    """The tree of plain words, each wanted (or any one of them): what tools and tests
    that hold tokens already ask."""
    planner = QueryPlanner(cfg)
    clauses = tuple(planner.word(w) for w in words)
    return Bool(
        should=clauses,
        minimum_should_match=(len(clauses) if require_all else 1) if clauses else 0,
        filter=(Term("site", site),) if site else (),
    )


def _any_of(field: str, values: tuple[str, ...]) -> list[Node]:
    """A filter that any of ``values`` in ``field`` passes; none without values."""
    if not values:
        return []
    if len(values) == 1:
        return [Term(field, values[0])]
    return [Bool(should=tuple(Term(field, v) for v in values), minimum_should_match=1)]


# Split points tried for a quoted phrase copied across a break: a longer phrase is
# more than a reader copies from one place.
_MAX_BREAK_CHARS = 40
# A run of this many bigrams (7 characters) or more is also boosted in parts (``_run_parts``).
_RUN_PART_MIN_GRAMS = 6
_BODY_PART_SHARE = 0.5
_INNER_MIN_CHARS = 8


def _asks(text: str) -> bool:
    """Whether free text holds a question word (如何, 怎么): a question is put in the
    asker's words, not copied from a page, so its run's thirds say little and would lift
    pages that merely share its question words (docs/ranking.md, 'What chose each weight
    (issue 36)')."""
    return any(w in QUESTION_WORDS for w in _words(text))


def _across_grams(folded: str, lone: bool = False) -> list[list[str]]:
    """The bigrams of ``folded`` cut at each break (``_breaks``): one side's, then the
    other's, with none across the cut. A side of one character the page holds in a
    bigram with its neighbour beyond the copied span (语 of 语法), not alone: such a cut
    is left out, or with ``lone`` taken as the other side alone, a weaker match."""
    cuts = [(a, b) for a, b in _breaks(folded) if lone or (len(a) > 1 and len(b) > 1)]
    return [(grams_of_folded(a) if len(a) > 1 else []) + (grams_of_folded(b) if len(b) > 1 else []) for a, b in cuts]


def _with_taiwan_reading(text: str, values: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """``values``, the bigrams of free text, and those of its Taiwan reading
    (``taiwan_reading``) where it differs and has as many."""
    read = _grams(taiwan_reading(fold(text)))
    return (values, read) if read != values and len(read) == len(values) else (values,)


def _taiwan_grams(free: Sequence[str], free_grams: Sequence[tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """Each bigram of the free text that reads otherwise in the text read as a Taiwan
    page's line typed in simplified characters one by one (软体 → 软件, 对话方块 stays),
    with that reading: the page folded its run with Taiwan's phrase table."""
    out: dict[str, tuple[str, ...]] = {}
    for text, grams_of_text in zip(free, free_grams, strict=True):
        for read in _with_taiwan_reading(text, grams_of_text)[1:]:
            for g, other in zip(grams_of_text, read, strict=True):
                if other != g:
                    out[g] = tuple(dict.fromkeys((*out.get(g, ()), other)))
    return out


def _breaks(folded: str) -> list[tuple[str, str]]:
    """Folded text cut in two between two Han characters, at every such place: where a
    copied phrase may have crossed a break of the page's text."""
    if len(folded) > _MAX_BREAK_CHARS:
        return []
    return [(folded[:i], folded[i:]) for i in range(1, len(folded)) if has_han(folded[i - 1]) and has_han(folded[i])]


def _in_titles(node: Node) -> Node | None:
    """The part of a word's clause that looks in titles (its title term, its title
    bigrams, its other names' too), boosts kept; None when nothing does."""
    if isinstance(node, (Term, Phrase)):
        return node if node.field in ("title_tokens", TITLE_GRAMS) else None
    if isinstance(node, Bool) and not node.must:
        kept = tuple(k for c in node.should if (k := _in_titles(c)) is not None)
        return Bool(should=kept, minimum_should_match=1, boost=node.boost) if kept else None
    return None
