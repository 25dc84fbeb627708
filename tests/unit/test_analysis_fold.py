"""Folding and bigrams: traditional and simplified, full- and half-width text find
each other, and every offset stays an offset of the original text."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from services.common.analysis import (
    analyze,
    fold,
    grams,
    segment,
    tokenize_with_offsets,
)
from services.common.analysis.fold import regional_forms, variants

_TEXT = st.text(
    st.one_of(
        st.characters(min_codepoint=0x3400, max_codepoint=0x9FFF),
        st.sampled_from(list("設置頁面格式軟體記憶體滑鼠國立臺灣大學圖書館乾隆著名於後")),
        st.characters(min_codepoint=0x20, max_codepoint=0x7E),
        st.characters(min_codepoint=0xFF01, max_codepoint=0xFF5E),
        st.characters(min_codepoint=0xF900, max_codepoint=0xFAFF),
        st.characters(min_codepoint=0x00C0, max_codepoint=0x024F),
    ),
    max_size=80,
)


@settings(max_examples=400, deadline=None)
@given(_TEXT)
@example("薴")  # OpenCC gives 苧, which it converts again to 苎: folded once, it must be 苎
@example("薴麻")
def test_folding_keeps_the_length_and_is_idempotent(text: str) -> None:
    folded = fold(text)
    assert len(folded) == len(text)
    assert fold(folded) == folded


def test_traditional_folds_to_simplified_with_taiwan_vocabulary() -> None:
    assert fold("設置頁面格式") == "设置页面格式"
    assert fold("國立臺灣大學圖書館") == "国立台湾大学图书馆"
    assert fold("安裝軟體") == "安装软件"  # 軟體 is Taiwan's word for 软件, not 软体
    assert fold("軟體與滑鼠") == "软件与鼠标"
    assert fold("滑鼠") == "滑鼠"  # no traditional character: simplified text is never rewritten


def test_a_conversion_that_changes_length_falls_back_to_characters() -> None:
    # 記憶體 is 内存 in the mainland: three characters become two, which would move
    # every later offset; the run is folded character by character instead.
    assert fold("記憶體不足") == "记忆体不足"


def test_phrases_that_change_length_in_opposite_ways_do_not_shift_the_text_between() -> None:
    # 字串 → 字符串 (+1) and 十進位制 → 十进制 (-1) cancel out over the run: taken as it
    # came, OpenCC's output had the run's length but every character between them one
    # place off (转换为 under 數字表), so a span copied from there matched nothing.
    text = "將字串表示式或數字表達式轉換為十進位制表示式"
    folded = fold(text)
    assert folded[12:15] == "转换为" and folded[7:9] == "数字"
    assert fold(text[12:]) == folded[12:]  # a span cut from the run folds as the run does
    assert fold("使用印表機列印") == "使用打印机打印"  # a phrase of the same length is still taken


def test_simplified_text_is_left_as_it_is() -> None:
    text = "乾隆年间著名的后面于是"
    assert fold(text) == text


def test_width_and_case_fold_but_never_change_the_length() -> None:
    assert fold("ＡＰＴ-Ｇｅｔ　１２３") == "apt-get 123"
    assert fold("Straße") == "straße"  # ß → ss would change the length


def test_traditional_and_simplified_text_segment_to_the_same_words() -> None:
    assert segment("設置頁面格式") == segment("设置页面格式")
    assert segment("使用ＡＰＴ安裝軟體") == segment("使用apt安装软件")


def test_offsets_point_into_the_original_script() -> None:
    text = "請安裝軟體"
    spans = tokenize_with_offsets(text)
    assert [(t, text[s:e]) for t, s, e in spans] == [("请", "請"), ("安装", "安裝"), ("软件", "軟體")]


def test_bigrams_overlap_and_a_lone_han_character_is_a_unigram() -> None:
    assert grams("破折号替换") == ["破折", "折号", "号替", "替换"]
    assert grams("用 apt-get 装") == ["用", "apt-get", "装"]
    assert grams("Debian，軟體。") == ["debian", "软件"]


def test_bigrams_do_not_depend_on_where_a_fragment_was_cut() -> None:
    page = grams("用破折号替换一个或两个减号。")
    fragment = grams("折号替换一个或两个减")
    n = len(fragment)
    assert any(page[i : i + n] == fragment for i in range(len(page) - n + 1))


def test_analyze_gives_words_subwords_and_grams_of_the_folded_text() -> None:
    a = analyze("中華人民共和國")
    assert a.words == ["中华人民共和国"]
    assert "人民" in a.subwords
    assert a.grams[:2] == ["中华", "华人"]


def test_highlighting_variants_cover_every_form_that_folds_alike() -> None:
    assert "軟" in variants("软") and "软" in variants("软")
    assert "Ａ" in variants("a") and "A" in variants("a")
    assert "軟體" in regional_forms("软件")
    assert regional_forms("apt") == ()


def test_taiwan_words_that_opencc_reads_wrongly_are_fixed_first() -> None:
    # OpenCC's phrase table reads 儲存 ("save") inside 儲存格 ("cell").
    assert fold("合併儲存格") == "合并单元格"
    assert fold("儲存檔案") == "保存文件"  # 儲存 alone still means save


def test_text_without_traditional_characters_takes_the_short_path_with_the_same_result() -> None:
    from services.common.analysis.fold import _tables, _traditional

    _, t2s = _tables()
    for text in ("设置页面格式 Apt-Get", "設置頁面格式", "軟體與儲存格", "ｆｕｌｌ　ｗｉｄｔｈ，。"):
        assert (_traditional().search(text) is None) == (text.translate(t2s) == text)


def test_the_table_maps_no_ascii_character_but_the_capitals() -> None:
    from services.common.analysis.fold import _tables

    assert {chr(cp) for cp in _tables()[0] if cp < 0x80} == set("ABCDEFGHIJKLMNOPQRSTUVWXYZ")


_TEXT_WITHOUT_TRADITIONAL = st.text(
    st.one_of(
        st.characters(min_codepoint=0x20, max_codepoint=0x7E),
        st.characters(min_codepoint=0x80, max_codepoint=0x2FFF),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),  # lone surrogates
        st.characters(min_codepoint=0xFF01, max_codepoint=0xFF5E),
        st.sampled_from(list("安装软件中华人民共和国")),
    ),
    max_size=80,
)


@settings(max_examples=400, deadline=None)
@given(_TEXT_WITHOUT_TRADITIONAL)
def test_folding_is_the_table_applied_character_by_character(text: str) -> None:
    """ASCII capitals are lower-cased through UTF-8 bytes and the rest by regex runs:
    together exactly the table, surrogates and all."""
    from services.common.analysis.fold import _tables

    assert fold(text) == text.translate(_tables()[0])


def test_the_c_fold_equals_the_python_fold_for_every_character() -> None:
    """Folding characters is context-free, so one string of every code point the table
    can hold (surrogates too), and each character's "traditional?" alone, settle it."""
    from services.common.analysis.fold import (
        _SUPPLEMENT,
        fold_chars_in_python,
        native_tables,
    )
    from services.common.runtime.native_code import native

    assert native is not None
    every = "".join(map(chr, [*range(0x10000), *_SUPPLEMENT, 0x20000, 0x2FA20, 0x10FFFF]))
    folded, traditional = native.fold_chars(every, native_tables())
    assert (folded, traditional) == fold_chars_in_python(every)
    assert traditional
    for ch in every:
        assert native.fold_chars(ch, native_tables())[1] == fold_chars_in_python(ch)[1], hex(ord(ch))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_TEXT_WITHOUT_TRADITIONAL, st.sampled_from(list("設置頁面格式軟體與儲存格網絡")))).map("".join))
def test_the_c_fold_equals_the_python_fold_on_mixed_text(text: str) -> None:
    from services.common.analysis.fold import fold_chars_in_python, native_tables
    from services.common.runtime.native_code import native

    assert native is not None
    assert native.fold_chars(text, native_tables()) == fold_chars_in_python(text)
    assert native.fold_chars(text, native_tables())[0] is text or fold_chars_in_python(text)[0] != text


def test_the_c_fold_refuses_tables_of_another_layout() -> None:
    import pytest

    from services.common.runtime.native_code import native

    assert native is not None
    with pytest.raises(ValueError, match="native_tables"):
        native.fold_chars("abc", b"\0" * 16)
