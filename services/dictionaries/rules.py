"""Reading the operator's dictionaries: user words, synonym rules and stop words, each
a text of one entry a line, ``#`` starting a comment.

- User words, jieba's user-dictionary format: ``word [frequency]`` (a part-of-speech
  tag after it is allowed and ignored). A word must be Han text: the segmenter splits
  text into runs by script first, so only a Han run can be kept whole (a Latin word
  such as ``CS101`` or ``wi-fi`` already is one).
- Synonyms, Solr's and Elasticsearch's format: ``a, b, c`` (equivalent, each finds the
  others) or ``a, b => c, d`` (a and b find c and d, not the reverse).
- Stop words: words separated by spaces, commas or lines.

Every entry is folded as page text is (traditional to simplified, width, case), so a
rule written in either script applies to both. A line that cannot be used is left
out and reported; an entry that is used but may not do what was meant (a synonym the
segmenter splits into several words) is reported too. Reports are in Chinese: the
console shows them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from services.common.analysis import MAX_TOKEN_CHARS, fold, segment
from services.common.analysis.han import HAN

_HAN_WORD = re.compile(rf"[{HAN}]+")
_TAG = re.compile(r"[a-z]+")
_SEPARATORS = re.compile(r"[,，、]")
_WORD_SEPARATORS = re.compile(r"[\s,，、]+")
MAX_ENTRIES = 100_000


@dataclass(frozen=True)
class Problem:
    line: int  # from 1
    text: str  # the line as written
    message: str
    fatal: bool = True  # the line was left out; False: used, with a caveat


@dataclass
class Parsed:
    """What one dictionary text gives: user words, a synonym table or stop words."""

    user_words: dict[str, int | None] = field(default_factory=dict)
    synonyms: dict[str, list[str]] = field(default_factory=dict)
    stop_words: set[str] = field(default_factory=set)
    problems: list[Problem] = field(default_factory=list)
    entries: int = 0


def folded(text: str) -> str:
    """An entry as the analysis sees it."""
    return fold(text.strip()).casefold()


def _lines(text: str) -> list[tuple[int, str, str]]:
    """(number, line as written, content without its comment) of each non-empty line."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        content = line.split("#", 1)[0].strip()
        if content:
            out.append((n, line.strip(), content))
    return out[:MAX_ENTRIES]


def parse_user_words(text: str) -> Parsed:
    parsed = Parsed()
    for n, line, content in _lines(text):
        parts = content.split()
        word = folded(parts[0])
        freq: int | None = None
        if len(parts) > 1 and parts[1].isdigit():
            freq = int(parts[1]) or None
        elif len(parts) > 1 and not _TAG.fullmatch(parts[1]):  # jieba's part-of-speech tags: a-z
            parsed.problems.append(Problem(n, line, f"词频应是正整数，而不是「{parts[1][:20]}」"))
            continue
        if len(word) > MAX_TOKEN_CHARS:
            parsed.problems.append(Problem(n, line, f"词太长：最多 {MAX_TOKEN_CHARS} 个字"))
        elif _HAN_WORD.fullmatch(word):
            parsed.user_words[word] = freq
            parsed.entries += 1
        elif segment(word) == [word]:
            parsed.problems.append(Problem(n, line, f"「{parts[0]}」本来就是一个词，无需加入", fatal=False))
        else:
            parsed.problems.append(
                Problem(n, line, f"「{parts[0]}」含有汉字以外的字符：切分先按文字类别分开，只有纯汉字的词能整体保留")
            )
    return parsed


def _terms(side: str) -> list[str]:
    return [t for t in (folded(part) for part in _SEPARATORS.split(side)) if t]


def _split_warning(term: str, effect: str) -> str:
    """A caveat when the segmenter splits ``term`` into several words: synonyms and stop
    words are looked up by whole query word, so such an entry does not apply as one."""
    words = segment(term)
    if words == [term]:
        return ""
    shown = " / ".join(words) if words else "（无）"
    return f"「{term}」会被切成 {shown}：{effect}；要让它整体生效，请加入用户词典"


def parse_synonyms(text: str) -> Parsed:
    parsed = Parsed()
    for n, line, content in _lines(text):
        if "=>" in content:
            left, _, right = content.partition("=>")
            sources, targets = _terms(left), _terms(right)
            if not sources or not targets or "=>" in right:
                parsed.problems.append(Problem(n, line, "单向同义词应写成「甲, 乙 => 丙, 丁」"))
                continue
        else:
            sources = targets = _terms(content)
            if len(set(sources)) < 2:
                parsed.problems.append(Problem(n, line, "一组同义词至少要两个不同的词，用逗号分开"))
                continue
        for source in dict.fromkeys(sources):
            names = parsed.synonyms.setdefault(source, [])
            names.extend(t for t in targets if t != source and t not in names)
        parsed.entries += 1
        effect = "搜索它不会带出同义词（别的词仍能找到它）"
        warnings = [w for w in (_split_warning(t, effect) for t in dict.fromkeys(sources)) if w]
        if warnings:
            parsed.problems.append(Problem(n, line, "；".join(warnings), fatal=False))
    return parsed


def parse_stop_words(text: str) -> Parsed:
    parsed = Parsed()
    for n, line, content in _lines(text):
        for word in (folded(w) for w in _WORD_SEPARATORS.split(content)):
            if not word:
                continue
            parsed.stop_words.add(word)
            parsed.entries += 1
            warning = _split_warning(word, "查询里没有这个词，停用不会生效")
            if warning:
                parsed.problems.append(Problem(n, line, warning, fatal=False))
    return parsed


# Each dictionary's reader, by name (services.common.domain.dictionaries.NAMES).
PARSERS: dict[str, Callable[[str], Parsed]] = {
    "user_words": parse_user_words,
    "synonyms": parse_synonyms,
    "stop_words": parse_stop_words,
}
