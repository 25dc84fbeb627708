"""Query-time synonyms: regional words both ways, nicknames and Taiwan usage one way."""

from services.common.analysis import fold, segment
from services.common.analysis.synonyms import synonyms


def test_taiwan_wording_for_how_a_program_works_finds_the_mainland_words() -> None:
    assert segment(fold("安裝程式如何運作")) == ["安装程序", "如何", "运作"]
    assert synonyms("运作") == ("工作", "运行")
    assert "运作" not in synonyms("工作")  # one way: 工作 alone is not widened


def test_regional_equivalents_go_both_ways_and_nicknames_one_way() -> None:
    assert "试算表" in synonyms("电子表格") and "电子表格" in synonyms("试算表")
    assert synonyms("excel") == ("电子表格", "calc") and "excel" not in synonyms("电子表格")
