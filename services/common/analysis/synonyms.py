"""Words a query should also find by another name: query-time expansion, as
Elasticsearch's search-time synonym filter does, so the index never changes with it.

Two kinds, in folded form (what ``fold`` and the segmenter make of them):

- Regional vocabulary that folding cannot map in place because the words differ in
  length (Taiwan's 試算表 is 电子表格, 記憶體 is 内存): equivalent both ways.
- Names users type for office modules (excel, ppt, word): one way only, from the
  nickname to the names the pages use.

Kept short and curated: every entry widens what a word matches. These are the shipped
defaults: an operator edits them in the console or adds a file
(services/dictionaries/), and ``set_table`` installs the result.
"""

from __future__ import annotations

from collections.abc import Mapping

_EQUIVALENT = (
    ("电子表格", "试算表"),
    ("演示文稿", "简报"),
    ("内存", "记忆体"),
    ("宏", "巨集"),
    ("硬盘", "硬碟"),
    ("鼠标", "滑鼠"),
    ("界面", "介面"),
    ("函数", "函式"),
    ("程序", "程式"),
    ("单元格", "储存格"),
    ("数据透视表", "枢纽分析表"),
)
_NICKNAMES = {
    "运作": ("工作", "运行"),  # Taiwan's 運作 for how a program works or runs
    "excel": ("电子表格", "calc"),
    "xls": ("电子表格", "calc"),
    "ppt": ("演示文稿", "impress", "幻灯片"),
    "powerpoint": ("演示文稿", "impress", "幻灯片"),
    "word": ("文本文档", "writer"),
}


def _table() -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    for group in _EQUIVALENT:
        for word in group:
            table.setdefault(word, []).extend(w for w in group if w != word)
    for nickname, names in _NICKNAMES.items():
        table.setdefault(nickname, []).extend(names)
    return {w: tuple(dict.fromkeys(names)) for w, names in table.items()}


DEFAULT_SYNONYMS = _table()
_SYNONYMS: Mapping[str, tuple[str, ...]] = DEFAULT_SYNONYMS


_OFFICE_NICKNAMES = frozenset(w for w in _NICKNAMES if w.isascii())


def is_nickname(word: str) -> bool:
    """Whether a folded query word is a name users give a module the pages call
    otherwise (excel, ppt): a hint of what is meant, never a word a page must hold."""
    return word in _OFFICE_NICKNAMES


def synonyms(word: str) -> tuple[str, ...]:
    """Other names of a folded query word; () for most words."""
    return _SYNONYMS.get(word, ())


def set_table(table: Mapping[str, tuple[str, ...]] | None) -> None:
    """Use ``table`` (folded word -> its other names) from now on; None: the defaults."""
    global _SYNONYMS
    _SYNONYMS = DEFAULT_SYNONYMS if table is None else table


def default_rules() -> str:
    """The defaults as synonym rules (Solr's and Elasticsearch's format): one group of
    equivalent words a line, ``a => b, c`` for one-way names."""
    lines = [", ".join(group) for group in _EQUIVALENT]
    lines += [f"{nickname} => {', '.join(names)}" for nickname, names in _NICKNAMES.items()]
    return "\n".join(lines) + "\n"
