"""The pieces of forgiving search that need no index: regional names, pinyin keys,
confusion sets, pinyin syllables, the words of pinyin initials."""

from __future__ import annotations

from importlib import resources

import jieba

from services.common.analysis import words
from services.common.analysis.pinyin_keys import fuzzy_key, initials_of, pinyin_of
from services.common.analysis.regional import regional_variants, taiwan_reading
from services.search.confusion_sets import candidates, sounds_alike
from services.search.initials_lexicon import TABLE, table_lines, words_with_initials
from services.search.pinyin_query import slots, split_syllables


def test_a_word_finds_its_name_in_the_other_region_both_ways() -> None:
    assert regional_variants("软体") == ("软件",)  # Taiwan's 軟體 typed in simplified
    assert regional_variants("列印") == ("打印",)  # no traditional character: not folded alone
    assert "列印" in regional_variants("打印")  # a Taiwan page's run of shared characters keeps 列印
    assert regional_variants("储存格") == ("单元格",)  # the fix the page folding takes too


def test_a_mainland_word_is_not_read_as_taiwan_usage() -> None:
    # Taiwan's 程序 is a mainland 进程; a mainland user's 程序 is a program.
    assert "进程" not in regional_variants("程序")
    assert regional_variants("数据") == () and regional_variants("apt") == ()


def test_a_line_is_read_as_taiwans_typed_in_simplified_keeping_its_length() -> None:
    assert taiwan_reading("储存格的资料") == "单元格的数据"  # 儲存格的資料, folded as a page's run
    assert taiwan_reading("对话方块中的软体") == "对话方块中的软件"
    assert taiwan_reading("您可以使用键盘或鼠标") == "您可以使用键盘或鼠标"  # mainland text: as it is
    assert taiwan_reading("Debian 的软体 apt") == "Debian 的软件 apt"
    # No character of 至字元 is written otherwise in traditional script: a page holding
    # it folds it as it is, not as Taiwan's 字元 (字符).
    assert taiwan_reading("至字元") == "至字元"


def test_pinyin_keys_drop_tones_and_merge_what_accents_merge() -> None:
    assert pinyin_of("数据透视表") == "shujutoushibiao" and initials_of("数据透视表") == "sjtsb"
    assert fuzzy_key("zhang") == fuzzy_key("zan") and fuzzy_key("ning") == fuzzy_key("lin")
    assert sounds_alike("头", "透") and sounds_alike("帅", "摔") and not sounds_alike("头", "数")


def test_a_characters_candidates_put_same_pinyin_first_then_shape_then_near() -> None:
    chars = [c for c, _ in candidates("头")]
    assert "透" in chars[:20]  # tou, as 数据头视表 for 数据透视表
    costs = dict(candidates("帅"))
    assert costs["筛"] > costs["摔"]  # shai is a letter from shuai; shuai is the same
    assert candidates("a") == ()


def test_pinyin_is_cut_into_the_fewest_syllables_or_read_as_initials() -> None:
    assert split_syllables("xian") == ["xian"]
    assert split_syllables("shujutoushibiao") == ["shu", "ju", "tou", "shi", "biao"]
    assert split_syllables("sjtsb") is None
    by_initials = slots("sjtsb")
    assert by_initials is not None and len(by_initials) == 5 and "数" in by_initials[0]
    assert slots("数据") is None and slots("x") is None


def test_the_dictionarys_words_are_found_by_their_initials_most_used_first() -> None:
    xz = words_with_initials("xz", 1000)
    assert xz.index("现在") < xz.index("选择") < xz.index("小镇") and all(len(w) == 2 for w in xz)
    assert words_with_initials("XZ", 3) == xz[:3]
    # 银行 is typed yh (行 read háng in it), and yx by a character's commonest reading.
    assert "银行" in words_with_initials("yh", 10) and "银行" in words_with_initials("yx", 1000)
    assert words_with_initials("qwxz", 10) == [] and words_with_initials("x", 10) == []


def test_the_initials_table_is_what_its_maker_writes_from_jiebas_dictionary() -> None:
    # A new jieba or pypinyin that reads a word otherwise fails here: remake the table.
    dictionary = resources.files(jieba).joinpath("dict.txt").read_text(encoding="utf-8").splitlines()
    table = resources.files("services.search").joinpath(TABLE).read_text(encoding="utf-8").splitlines()
    assert list(table_lines(dictionary)) == table


def test_the_operators_user_words_are_found_by_their_initials_too() -> None:
    assert words_with_initials("sjtsb", 10) == []  # not in jieba's dictionary
    words.set_user_words([("数据透视表", None), ("防火墙", None)])
    try:
        assert words_with_initials("sjtsb", 10) == ["数据透视表"]
        assert words_with_initials("fhq", 3) == ["防火墙", "孵化期", "凤凰琴"]  # a dictionary word: once
    finally:
        words.set_user_words([])
    assert words_with_initials("sjtsb", 10) == []
