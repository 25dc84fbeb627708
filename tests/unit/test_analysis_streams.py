"""The one-pass analysis gives exactly the streams of the separate passes, in C and in
Python alike."""

from __future__ import annotations

import rjieba
from hypothesis import given, settings
from hypothesis import strategies as st

from services.common.analysis import analyze, analyze_as_text, fold
from services.common.analysis.grams import grams_in_python, grams_of_folded
from services.common.analysis.streams import (
    _SUBWORDS,
    joined_streams_of_folded,
    streams_in_python,
    streams_of_folded,
)
from services.common.analysis.words import (
    han_words_of_runs,
    initialise,
    words_and_subwords_of_folded,
)
from services.common.runtime.native_code import native

initialise()

# Han (Extension B and compatibility ideographs too), Latin with joiners (apt-get,
# www.debian.org, c++), a run longer than MAX_TOKEN_CHARS, ß and İ, whose case folding
# makes a run longer, letters and numbers of other scripts (², ½, Hangul, Greek).
_TEXT = st.lists(
    st.one_of(
        st.sampled_from(list("的了是在中华人民共和国软件包安装配置網絡軟體")),
        st.sampled_from(["apt-get", "www.debian.org", "c++", "c#", "foo_bar", "ß", "A" * 70, " ", "，", "\n"]),
        st.sampled_from(["x++y", "a#b", "-", "_", ".", "++", "#", "İ", "²", "½", "한국어", "ΣΑΣ", "ǅ", "a.-b"]),
        st.characters(min_codepoint=0x20, max_codepoint=0x7E),
        st.characters(min_codepoint=0x4E00, max_codepoint=0x4FFF),
        st.characters(min_codepoint=0x20000, max_codepoint=0x2001F),
        st.characters(min_codepoint=0xF900, max_codepoint=0xF90F),
        st.characters(min_codepoint=0x80, max_codepoint=0x2FFF),
    ),
    max_size=60,
).map("".join)


def _separately(text: str) -> tuple[list[str], list[str], list[str]]:
    """The reference: the separate passes, in Python."""
    folded = fold(text)
    words, extras = words_and_subwords_of_folded(folded)
    return words, extras, grams_in_python(folded)


def test_a_mixed_sentence_gives_words_subwords_and_bigrams_together() -> None:
    words, extras, grams = streams_of_folded(fold("用 apt-get 安装中华人民共和国软件"))
    assert words == ["用", "apt-get", "安装", "中华人民共和国", "软件"]
    assert "apt" in extras and "中华" in extras
    assert grams == ["用", "apt-get", "安装", "装中", "中华", "华人", "人民", "民共", "共和", "和国", "国软", "软件"]


@settings(max_examples=500)
@given(_TEXT)
def test_one_pass_equals_the_separate_passes(text: str) -> None:
    assert streams_of_folded(fold(text)) == _separately(text)
    assert streams_in_python(fold(text)) == _separately(text)
    assert grams_of_folded(fold(text)) == _separately(text)[2]
    a = analyze(text)
    assert (a.words, a.subwords, a.grams) == _separately(text)
    joined = tuple(" ".join(stream) for stream in _separately(text))
    assert joined_streams_of_folded(fold(text)) == joined
    t = analyze_as_text(text)
    assert (t.words, t.subwords, t.grams) == joined


def test_the_c_module_is_built_where_the_tests_are_installed() -> None:
    # scripts/install.sh installs a C compiler; without one, every test here would
    # compare Python with itself.
    assert native is not None, "services/common/_native.c was not built: pip install -e . with gcc present"


def test_c_streams_step_aside_when_rjiebas_words_do_not_add_up_to_the_runs() -> None:
    assert native is not None
    runs, han = native.scan("安装软件 apt-get 中文")
    assert (runs, han) == (["安装软件", "apt-get", "中文"], "安装软件\n中文")
    assert native.assemble(runs, ["安装", "软件", "\n", "中文"], _SUBWORDS) is not None
    assert native.assemble(runs, ["安装", "软件", "\n", "中文"], _SUBWORDS, True) is not None
    for wrong in (["安装", "软件", "中文"], ["安装", "\n", "中文"], ["安装", "软件", "\n", "中文", "\n", "多"]):
        assert native.assemble(runs, wrong, _SUBWORDS) is None
        assert native.assemble(runs, wrong, _SUBWORDS, True) is None


def test_c_streams_as_text_are_the_lists_joined() -> None:
    assert native is not None
    runs, han = native.scan(fold("用 apt-get 安装中华人民共和国软件 Straße 中"))
    cut = rjieba.cut(han, hmm=True)
    lists = native.assemble(runs, cut, _SUBWORDS)
    assert native.assemble(runs, cut, _SUBWORDS, True) == tuple(" ".join(stream) for stream in lists)
    assert native.assemble([], [], _SUBWORDS, True) == ("", "", "")


def test_a_sharp_s_run_at_the_token_limit_is_a_bigram_but_not_a_word() -> None:
    text = "ß" * 64  # 64 characters, 128 once case-folded
    words, _, grams = streams_of_folded(fold(text))
    assert (words, grams) == ([], ["ss" * 64])


_HAN_RUNS = st.lists(
    st.text(st.one_of(st.sampled_from(list("的了是在中华人民共和国软件包安装配置网络管理系统服务器")),
                      st.characters(min_codepoint=0x3400, max_codepoint=0x9FFF)), min_size=1, max_size=12),
    max_size=8,
)


@settings(max_examples=300)
@given(_HAN_RUNS)
def test_han_runs_segmented_together_give_each_runs_own_words(runs: list[str]) -> None:
    assert han_words_of_runs(runs) == [[w for w in rjieba.cut(run, hmm=True) if w] for run in runs]
