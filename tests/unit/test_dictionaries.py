"""The operator's dictionaries: reading the texts, and installing them into a process's
analysis (segmenter, synonyms, stop words) from the store and from files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from services.common.adapters.sqlite.dictionaries import SqliteDictionaryStore
from services.common.analysis import dictionary_version, segment, stop_words, subwords, synonyms, words
from services.common.config import Settings
from services.common.domain.dictionaries import STOP_WORDS, SYNONYMS, USER_WORDS
from services.dictionaries.rules import parse_stop_words, parse_synonyms, parse_user_words
from services.dictionaries.sync import DictionarySync, default_text
from services.search.query_plan import _words


@pytest.fixture(autouse=True)
def shipped_defaults() -> Iterator[None]:
    """Every test starts and ends with the shipped dictionaries: they are process-wide."""
    yield
    words.set_user_words([])
    synonyms.set_table(None)
    stop_words.set_stop_words(None)


def test_the_shipped_synonyms_read_back_as_rules_are_the_table_in_use() -> None:
    parsed = parse_synonyms(synonyms.default_rules())
    # 演示文稿 splits into 演示 / 文稿: a query for it expands to nothing, but 简报 still finds it.
    assert all(not p.fatal for p in parsed.problems) and "「演示文稿」会被切成 演示 / 文稿" in parsed.problems[0].message
    assert {w: tuple(n) for w, n in parsed.synonyms.items()} == dict(synonyms.DEFAULT_SYNONYMS)


def test_synonym_rules_are_folded_and_one_way_rules_go_one_way() -> None:
    parsed = parse_synonyms("# 注释\n電腦, 计算机，PC\nexcel => 电子表格、Calc\n只有一个\n甲 => \n")
    assert parsed.synonyms == {"电脑": ["计算机", "pc"], "计算机": ["电脑", "pc"], "pc": ["电脑", "计算机"],
                               "excel": ["电子表格", "calc"]}  # fmt: skip
    assert [(p.line, p.fatal) for p in parsed.problems] == [(4, True), (5, True)]
    assert "至少要两个" in parsed.problems[0].message


def test_a_synonym_the_segmenter_splits_is_kept_with_a_warning_to_add_it_as_a_user_word() -> None:
    parsed = parse_synonyms("探索引擎, tansuo\n")
    assert parsed.synonyms["探索引擎"] == ["tansuo"]
    (problem,) = parsed.problems
    assert not problem.fatal and "探索 / 引擎" in problem.message and "用户词典" in problem.message


def test_user_words_must_be_han_and_latin_words_need_no_entry() -> None:
    parsed = parse_user_words("探索引擎\n清華大學 200 nt\nCS101\nC语言\n坏 词频x\n")
    assert parsed.user_words == {"探索引擎": None, "清华大学": 200}
    messages = {p.line: (p.fatal, p.message) for p in parsed.problems}
    assert messages[3][0] is False and "本来就是一个词" in messages[3][1]
    assert messages[4][0] is True and "汉字以外" in messages[4][1]
    assert messages[5][0] is True and "词频" in messages[5][1]


def test_stop_words_are_split_by_spaces_commas_and_lines() -> None:
    assert parse_stop_words("的 了，吗\nThe\n").stop_words == {"的", "了", "吗", "the"}


def test_user_words_change_how_index_and_query_split_and_the_planners_memory() -> None:
    assert segment("探索引擎很快") == ["探索", "引擎", "很快"] and _words("探索引擎") == ("探索", "引擎")
    before = dictionary_version.current()
    words.set_user_words([("探索引擎", None)])
    assert segment("探索引擎很快") == ["探索引擎", "很快"]
    assert _words("探索引擎") == ("探索引擎",)  # the planner's cache was cleared
    assert {"探索", "引擎"} <= set(subwords("探索引擎"))  # its dictionary parts stay sub-words
    words.set_user_words([])
    assert segment("探索引擎很快") == ["探索", "引擎", "很快"] and _words("探索引擎") == ("探索", "引擎")
    assert dictionary_version.current() == before  # only an install (sync) moves it


def test_the_sync_installs_what_the_console_saved_then_follows_its_changes(tmp_path: Path) -> None:
    store = SqliteDictionaryStore(tmp_path / "d.sqlite3")
    sync = DictionarySync(Settings(data_dir=tmp_path), lambda: store)
    assert sync.refresh() is True and synonyms.synonyms("电子表格") == ("试算表",)
    assert "的" in stop_words.STOP_WORDS
    assert [s.origin for s in sync.installed.reports[SYNONYMS]] == ["defaults"]
    version = dictionary_version.current()
    assert sync.refresh() is False  # nothing changed: nothing read but the version

    store.save(USER_WORDS, "探索引擎\n", 1.0)
    store.save(SYNONYMS, "探索引擎, tansuo\n", 1.0)
    store.save(STOP_WORDS, "很快\n", 1.0)
    assert sync.refresh() is True and dictionary_version.current() != version
    assert segment("探索引擎很快") == ["探索引擎", "很快"]
    assert synonyms.synonyms("探索引擎") == ("tansuo",) and synonyms.synonyms("电子表格") == ()
    assert "很快" in stop_words.STOP_WORDS and "的" not in stop_words.STOP_WORDS
    # The synonym is checked against the new user words: no warning that it splits.
    assert sync.installed.reports[SYNONYMS][0].problems == ()
    assert sync.installed.user_words

    store.remove(SYNONYMS)
    assert sync.refresh() is True and synonyms.synonyms("电子表格") == ("试算表",)


def test_a_dictionary_file_adds_to_the_console_and_is_read_again_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "synonyms.txt"
    path.write_text("笔记本, 手提电脑\n", encoding="utf-8")
    store = SqliteDictionaryStore(tmp_path / "d.sqlite3")
    sync = DictionarySync(Settings(data_dir=tmp_path, analysis_synonyms_file=path), lambda: store)
    sync.refresh()
    assert synonyms.synonyms("笔记本") == ("手提电脑",) and synonyms.synonyms("电子表格") == ("试算表",)
    assert [s.origin for s in sync.installed.reports[SYNONYMS]] == ["defaults", "file"]
    path.write_text("笔记本, 手提电脑, 笔电\n", encoding="utf-8")
    assert sync.refresh() is True and synonyms.synonyms("笔记本") == ("手提电脑", "笔电")


def test_a_missing_dictionary_file_fails_at_start_up(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no such file"):
        Settings(analysis_user_words_file=tmp_path / "missing.txt")


def test_an_unreachable_store_keeps_the_dictionaries_in_use(tmp_path: Path) -> None:
    store = SqliteDictionaryStore(tmp_path / "d.sqlite3")
    store.save(USER_WORDS, "探索引擎\n", 1.0)
    alive = [True]

    def get() -> SqliteDictionaryStore:
        if not alive[0]:
            raise ConnectionError("store down")
        return store

    sync = DictionarySync(Settings(data_dir=tmp_path), get)
    sync.refresh()
    alive[0] = False
    assert sync.refresh() is False and "store down" in sync.installed.error
    assert segment("探索引擎") == ["探索引擎"]


def test_the_default_texts_name_the_shipped_entries() -> None:
    assert "电子表格, 试算表" in default_text(SYNONYMS) and "的" in default_text(STOP_WORDS).split()
    assert default_text(USER_WORDS) == ""
