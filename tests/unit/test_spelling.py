"""Did you mean, over a tiny index of texts: the bigram counts and phrase counts a real
index gives, worked out here from the pages' text."""

from __future__ import annotations

from collections.abc import Sequence

from services.common.analysis import fold, segment
from services.search.pinyin_query import PhraseCount, PinyinReader, TermStats
from services.search.spelling import SpellingCorrector

PAGES = [
    ("数据透视表", "创建数据透视表，然后筛选数据透视表。"),
    ("自动筛选", "自动筛选只显示符合条件的行。"),
    ("条件格式", "条件格式按值改变单元格的格式。"),
    ("VLOOKUP 函数", "vlookup 在表格中查找。vlookup 返回值。"),
    ("VLOOKUP 示例", "用 vlookup 查找。"),
    ("探雪", "一首诗的题目。"),
    ("踏雪", "踏雪寻梅。踏雪而归。"),
    ("踏雪寻梅", "踏雪。"),
    ("踏雪归来", "踏雪。"),
]


def _grams(text: str) -> list[str]:
    t = "".join(fold(text).split())
    return [t[i : i + 2] for i in range(len(t) - 1)]


def _term_stats(pages: Sequence[tuple[str, str]]) -> TermStats:
    """The document frequencies of fields' terms over ``pages`` (title, body), as an index gives them."""

    def holds(title: str, body: str, field: str, value: str) -> bool:
        text = title if field.startswith("title") else body
        if field.endswith("_grams"):
            return value in _grams(text)
        return value in segment(text)

    def stats(terms: Sequence[tuple[str, str]]) -> tuple[int, list[int]]:
        return len(pages), [sum(holds(t, b, f, v) for t, b in pages) for f, v in terms]

    return stats


term_stats = _term_stats(PAGES)


def _phrase_count(pages: Sequence[tuple[str, str]]) -> PhraseCount:
    """How many of ``pages`` hold a run of bigrams in a row, as an index counts them."""

    def count(grams: tuple[str, ...], titles_only: bool) -> int:
        run = grams[0] + "".join(g[1] for g in grams[1:])
        return sum(run in fold(t) or (not titles_only and run in fold(b)) for t, b in pages)

    return count


phrase_count = _phrase_count(PAGES)


def test_a_pinyin_typo_is_corrected_to_what_the_pages_say() -> None:
    corrector = SpellingCorrector(term_stats, phrase_count)
    fixed = corrector.correct("数据头视表")
    assert fixed is not None and fixed.query == "数据透视表"
    fixed = corrector.correct("条件格试")
    assert fixed is not None and fixed.query == "条件格式"


def test_a_long_run_no_page_holds_corrected_to_one_a_page_holds_is_sure() -> None:
    corrector = SpellingCorrector(term_stats, phrase_count)
    line = corrector.correct("创建数据头视表")  # a line copied with one slip
    assert line is not None and line.query == "创建数据透视表" and line.sure
    word = corrector.correct("条件格试")  # a short run: a word mistyped, not a copied line
    assert word is not None and not word.sure
    latin = corrector.correct("创建数据头视表 vlookp")
    assert latin is not None and latin.query == "创建数据透视表 vlookup" and not latin.sure


def test_an_idiom_with_a_slip_whose_pairs_are_all_on_pages_is_corrected_by_the_dictionary() -> None:
    # 无计, 计于 and 于事 are each on more pages than 无济 and 济于, so the bigrams see no
    # gain in 无济于事; the dictionary's word is one same-sound character away and two
    # pages hold it.
    pages = [
        *((f"无计可施{i}", f"他无计可施，统计于年底。{i}") for i in range(4)),
        ("于事无补", "于事无补。"),
        ("无济于事", "哭也无济于事。"),
        ("劝说", "劝说无济于事。"),
        ("表格", "表格排列整齐。表格。"),
    ]
    corrector = SpellingCorrector(_term_stats(pages), _phrase_count(pages))
    fixed = corrector.correct("无计于事")
    assert fixed is not None and fixed.query == "无济于事"
    assert corrector.correct("表格排序") is None  # two words no page puts together: not a slip of a word


def test_what_the_pages_say_is_left_as_typed() -> None:
    corrector = SpellingCorrector(term_stats, phrase_count)
    assert corrector.correct("数据透视表") is None
    assert corrector.correct("自动筛选") is None


def test_a_title_as_typed_is_a_name_not_a_typo() -> None:
    # 踏雪 is held far more often, but a page is titled 探雪.
    assert SpellingCorrector(term_stats, phrase_count).correct("探雪") is None


def test_a_latin_word_no_page_holds_becomes_the_commonest_one_edit_away() -> None:
    fixed = SpellingCorrector(term_stats, phrase_count).correct("vlookp")
    assert fixed is not None and fixed.query == "vlookup"


def test_pinyin_is_read_as_the_characters_the_pages_hold() -> None:
    reader = PinyinReader(term_stats, phrase_count)
    assert reader.read("shujutoushibiao") == "数据透视表"
    assert reader.read("zidong shaixuan") == "自动筛选"
    assert reader.read("qwxz") is None  # no reading any page holds a pair of


def test_pinyin_cut_two_ways_is_read_the_way_a_page_holds() -> None:
    # fangan is fan gan or fang an; 反感 and 干 are common pairs here, but only the
    # reading 创建方案 is a run a page holds.
    pages = [
        ("创建方案", "创建方案的步骤。"),
        ("反感", "反感。反感。反感。干活。干活。"),
        ("创建", "创建反应。创建。"),
    ]
    assert PinyinReader(_term_stats(pages), _phrase_count(pages)).read("chuangjianfangan") == "创建方案"


def test_initials_are_read_as_the_words_the_pages_hold_most() -> None:
    # 选择's 择 is not among the 150 characters of z most used as words alone, where the
    # characters' beam looked for it: the dictionary's words of initials xz find it.
    pages = [
        ("选择", "选择一个形状。"),
        ("选择对象", "选择。"),
        ("形状", "形状。"),
        ("现在", "现在选择。"),
        ("小镇", "无关。"),
    ]
    reading = PinyinReader(_term_stats(pages), _phrase_count(pages)).reading("xz")
    assert reading is not None and reading.words == ("选择", "形状", "现在", "小镇")  # 小镇: held by a title
    assert reading.pages == (3, 2, 1, 1) and reading.query == "选择 OR 形状 OR 现在 OR 小镇"
    # A word the dictionary lacks is still read by the characters' pairs (one reading).
    assert PinyinReader(term_stats, phrase_count).read("sjtsb") == "数据透视表"


def test_initials_that_spell_no_word_the_pages_hold_are_not_read() -> None:
    # English words and names (ODFF, hello) were read as runs of characters some pair
    # of which a page holds (藕的方法, 皇恩来了欧): a short query must be a word, a long
    # one a run some page holds.
    pages = [("方法", "这是我的方法啊。")]
    reader = PinyinReader(_term_stats(pages), _phrase_count(pages))
    assert reader.read("dff") is None  # 的方法: on a page, but no word
    assert reader.read("wdffa") == "我的方法啊"
    assert reader.read("odffa") is None  # no page holds 欧的, 偶的 …
    pairs = [("方法", "我的。的方。方法。法啊。")]  # each pair of 我的方法啊, not the run
    assert PinyinReader(_term_stats(pairs), _phrase_count(pairs)).read("wdffa") is None


def test_initials_of_two_words_in_a_row_are_read_as_the_pair_a_page_holds_in_a_row() -> None:
    # No dictionary word spells zdsx or tjgs; 自动 + 筛选 and 条件 + 格式 do, and a page
    # holds each pair in a row.
    reader = PinyinReader(term_stats, phrase_count)
    assert reader.read("zdsx") == "自动筛选"
    assert reader.read("tjgs") == "条件格式"
    # A dictionary word of the same initials held by fewer pages is searched beside it,
    # after it: an input method ranks a phrase and a word by how common each is.
    both = [("自动筛选", "自动筛选。"), ("筛选", "自动筛选。"), ("思想", "指导思想。")]
    reading = PinyinReader(_term_stats(both), _phrase_count(both)).reading("zdsx")
    assert reading is not None and reading.words == ("自动筛选", "指导思想") and reading.pages == (2, 1)
    assert reading.query == '"自动筛选" OR 指导思想'
    # Both words on a page, never in a row: not read (an English word spells such pairs).
    apart = [("自动", "自动。"), ("筛选", "筛选。")]
    assert PinyinReader(_term_stats(apart), _phrase_count(apart)).read("zdsx") is None


def test_the_query_language_is_not_corrected() -> None:
    corrector = SpellingCorrector(term_stats, phrase_count)
    fixed = corrector.correct("数据头视表 site:docs.example.cn")
    assert fixed is not None and fixed.query == "数据透视表 site:docs.example.cn"
    fixed = corrector.correct("vlookp OR 条件格式")
    assert fixed is not None and fixed.query == "vlookup OR 条件格式"  # OR stays, not "for" or "of"


def test_a_syllable_a_letter_apart_is_tried_only_where_a_bigram_is_on_no_page() -> None:
    # 帅选 for 筛选 (shuai for shai): where no page holds the pair, the typo is there and
    # every kind of candidate is tried; where a page holds it (元帅选拔), any character
    # may be the typo, and only the likelier kinds are: no typo people made needed one.
    pages = [*((f"自动筛选{i}", "自动筛选数据。") for i in range(30)), ("将士", "元帅选拔将士。")]
    corrector = SpellingCorrector(_term_stats(pages), _phrase_count(pages))
    fixed = corrector.correct("自动帅选")
    assert fixed is not None and fixed.query == "自动筛选"
    assert corrector.correct("帅选") is None
    assert SpellingCorrector(_term_stats(pages[:30]), _phrase_count(pages[:30])).correct("帅选") is not None


def test_of_two_corrections_the_likelier_slip_wins_unless_the_other_word_is_far_commoner() -> None:
    # 亲菜: 青菜 is a near syllable away (qin, qing), 亲爱 a letter away (cai, ai), a
    # slip a tenth as likely: a noisy channel weighs how common each word is by how
    # likely its slip.
    greens = [(f"青菜{i}", "青菜很好吃。") for i in range(5)]
    dears = [(f"亲爱{i}", "亲爱的朋友。") for i in range(12)]
    corrector = SpellingCorrector(_term_stats(greens + dears), _phrase_count(greens + dears))
    fixed = corrector.correct("亲菜")
    assert fixed is not None and fixed.query == "青菜"
    many = greens + dears * 5  # 60 pages say 亲爱: more than ten times as common as 青菜
    fixed = SpellingCorrector(_term_stats(many), _phrase_count(many)).correct("亲菜")
    assert fixed is not None and fixed.query == "亲爱"


def test_a_line_typed_as_read_on_a_taiwan_page_is_corrected_as_the_page_folded_it() -> None:
    # The page 選擇右鍵選單放置的位置 is held folded, 选择右键菜单放置的位置; the reader typed
    # 选单 as seen, and 指 for 置. The slip is found in the line as the page holds it,
    # and the correction keeps the reader's own words.
    pages = [("自訂", "在此選擇右鍵選單放置的位置，然後新增命令。"), ("右鍵選單", "右鍵選單的命令。")]
    corrector = SpellingCorrector(_term_stats(pages), _phrase_count(pages))
    fixed = corrector.correct("选择右键选单放指的位")
    assert fixed is not None and fixed.query == "选择右键选单放置的位" and fixed.sure
    assert corrector.correct("至字元") is None  # no traditional character: nothing to read otherwise


def test_a_slip_on_the_taiwan_word_itself_is_corrected_as_the_page_folded_it() -> None:
    pages = [("匯入", "可以選擇匯入元素內容，然後按確定。"), ("元素", "元素內容的說明。")]
    corrector = SpellingCorrector(_term_stats(pages), _phrase_count(pages))
    fixed = corrector.correct("可以选择汇如元素内容")
    assert fixed is not None and fixed.query == "可以选择汇入元素内容"


def test_a_two_character_run_is_weighed_as_a_word_not_as_a_bigram_of_other_words() -> None:
    # 里拜 is a bigram of the title 在这里拜佛 and of bodies (这里拜年), never a word, so
    # no title holds it as a name; 礼拜, a word of fewer pages than those bigrams, is
    # what was meant. 课系 is a bigram of 功课系统, and 科系 a word of two pages.
    pages = [("在这里拜佛", "我们在这里拜佛。"), *[(f"过年{i}", "大家在这里拜年。功课系统。") for i in range(6)],
             ("上个礼拜", "上个礼拜我们去了师大的科系。"), ("礼拜天", "礼拜天休息，选择科系。")]  # fmt: skip
    corrector = SpellingCorrector(_term_stats(pages), _phrase_count(pages))
    fixed = corrector.correct("里拜")
    assert fixed is not None and fixed.query == "礼拜"
    fixed = corrector.correct("课系")
    assert fixed is not None and fixed.query == "科系"
    assert corrector.correct("礼拜") is None


def test_of_two_corrections_the_one_users_search_wins_where_the_pages_alone_chose_the_other() -> None:
    # 60 pages say 亲爱 and 5 say 青菜: by the pages, 亲菜 is 亲爱 (as above). Users of
    # this site search 青菜: half of their searches hold it, worth half the pages.
    many = [(f"青菜{i}", "青菜很好吃。") for i in range(5)] + [(f"亲爱{i}", "亲爱的朋友。") for i in range(60)]
    searched = {"青菜": 0.5}
    corrector = SpellingCorrector(_term_stats(many), _phrase_count(many), lambda word: searched.get(word, 0.0))
    fixed = corrector.correct("亲菜")
    assert fixed is not None and fixed.query == "青菜"
    # What users search only weighs corrections the pages allow: a word no page holds is never one.
    searched = {"亲莱": 1.0}
    fixed = corrector.correct("亲菜")
    assert fixed is not None and fixed.query == "亲爱"


def test_what_users_search_never_keeps_a_correction_the_pages_allow_from_being_made() -> None:
    # One page holds 亲菜 as typed, so a correction needs 20 times its pages: 青菜 (60)
    # has them, 芹菜 (5) not. However much users search 芹菜, the correction is 青菜.
    pages = [("一页", "他说亲菜。")] + [(f"芹菜{i}", "芹菜很好吃。") for i in range(5)]
    pages += [(f"青菜{i}", "青菜很好吃。") for i in range(60)]
    corrector = SpellingCorrector(_term_stats(pages), _phrase_count(pages), lambda word: float(word == "芹菜"))
    fixed = corrector.correct("亲菜")
    assert fixed is not None and fixed.query == "青菜"
