"""Segmentation shared by the indexer and the search service."""

from __future__ import annotations

import threading
from collections import Counter

import jieba
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from services.common.analysis.fold import fold
from services.common.analysis.words import (
    initialise,
    segment,
    segment_with_subwords,
    subwords,
    tokenize_with_offsets,
)

initialise()  # load the dictionary once, outside Hypothesis's per-example deadline

# Printable text heavy in CJK, with Latin, digits, punctuation and full-width forms.
_TEXT = st.text(
    st.one_of(
        st.characters(min_codepoint=0x4E00, max_codepoint=0x4FFF),
        st.sampled_from(list("的了是在中华人民共和国软件安装配置网络")),
        st.characters(min_codepoint=0x20, max_codepoint=0x7E),
        st.characters(min_codepoint=0x3000, max_codepoint=0x303F),
        st.characters(min_codepoint=0xFF01, max_codepoint=0xFF5E),
        st.characters(min_codepoint=0x0370, max_codepoint=0x03FF),
    ),
    max_size=120,
)


def test_a_long_word_is_one_token_in_precise_mode() -> None:
    assert segment("中华人民共和国") == ["中华人民共和国"]


def test_subwords_are_what_search_mode_adds_beyond_precise_mode() -> None:
    text = "中华人民共和国国务院发布了新的计算机软件保护条例"
    extras = Counter(jieba.cut_for_search(text)) - Counter(jieba.cut(text))
    assert Counter(subwords(text)) == extras
    assert {"中华", "人民", "共和"} <= set(subwords("中华人民共和国"))
    assert "中华人民共和国" not in subwords("中华人民共和国")


def test_latin_words_are_lower_cased() -> None:
    assert segment("Debian GNU/Linux 安装") == ["debian", "gnu", "linux", "安装"]


def test_case_folding_is_context_free_so_every_sigma_matches() -> None:
    assert segment("ΟΔΟΣ") == segment("οδος") == segment("οδοσ")


def test_dotted_and_hyphenated_names_stay_whole_and_their_parts_are_subwords() -> None:
    assert segment("用 apt-get 安装 1.2 版，见 www.debian.org。") == [
        "用", "apt-get", "安装", "1.2", "版", "见", "www.debian.org",
    ]
    extras = subwords("apt-get www.debian.org")
    assert {"apt", "get", "www", "debian", "org", "debian.org", "www.debian"} <= set(extras)


def test_programming_language_names_keep_their_suffix() -> None:
    assert segment("C++ 和 C# 语言") == ["c++", "和", "c#", "语言"]


def test_punctuation_and_whitespace_never_become_tokens() -> None:
    assert segment("，。！？ …… ——  \n\t ()[]{} <> @@") == []
    assert segment("你好，世界！") == ["你好", "世界"]


def test_index_and_query_agree_on_mixed_text() -> None:
    text = "使用APT-GET安装Python3.11"
    assert segment(text) == segment(text.lower())
    assert segment_with_subwords(text) == (segment(text), subwords(text))


def test_segmenting_from_many_threads_gives_the_same_tokens() -> None:
    text = "多个线程同时对中文文本进行分词，结果必须一致。" * 20
    expected = segment(text)
    results: list[list[str]] = []

    def work() -> None:
        for _ in range(5):
            results.append(segment(text))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 20
    assert all(r == expected for r in results)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_every_token_maps_back_to_its_source_span(text: str) -> None:
    spans = tokenize_with_offsets(text)
    folded = fold(text)
    for token, start, end in spans:
        assert token == folded[start:end].casefold()
        assert token.strip() and any(c.isalnum() for c in token)
    assert [tok for tok, _, _ in spans] == segment(text)
    starts = [s for _, s, _ in spans]
    assert starts == sorted(starts)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_tokens_and_subwords_are_case_insensitive_substrings_of_the_text(text: str) -> None:
    tokens, extras = segment_with_subwords(text)
    folded = fold(text).casefold()
    for token in tokens + extras:
        assert token in folded


jieba.setLogLevel(60)
jieba.initialize()

_HAN_TEXT = st.text(
    st.one_of(
        st.characters(min_codepoint=0x4E00, max_codepoint=0x9FD5),
        st.sampled_from(list("的了是在中华人民共和国软件包安装配置网络管理系统服务器内核驱动")),
    ),
    min_size=1,
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(_HAN_TEXT)
def test_han_segmentation_is_exactly_jiebas(text: str) -> None:
    # jieba's own Han class ends at U+9FD5; Tansuo also treats the extension blocks
    # (which OpenCC folds a few characters into, e.g. to U+2B802) as Han, on purpose.
    assume(all("\u4e00" <= c <= "\u9fd5" for c in fold(text)))
    assert segment(text) == [w for w in jieba.cut(fold(text), HMM=True) if w.strip()]


@settings(max_examples=200, deadline=None)
@given(_HAN_TEXT)
def test_han_subwords_are_exactly_what_jieba_search_mode_adds(text: str) -> None:
    text = fold(text)
    assume(all("\u4e00" <= c <= "\u9fd5" for c in text))  # jieba's Han class, as above
    extras = Counter(jieba.cut_for_search(text, HMM=True)) - Counter(jieba.cut(text, HMM=True))
    assert Counter(subwords(text)) == extras


def test_real_prose_segments_as_jieba_does() -> None:
    prose = (
        "Debian 是一个由志愿者组成的团体，致力于创建自由的操作系统。软件包管理系统负责安装、升级和删除软件，"
        "并自动处理依赖关系。系统管理员可以使用高级包管理工具来维护服务器上的软件。"
    )
    for run in ("".join(c for c in part if "\u4e00" <= c <= "\u9fff") for part in prose.split("，")):
        if run:
            assert segment(run) == list(jieba.cut(run, HMM=True))
