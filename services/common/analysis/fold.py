"""Folding: the one normalisation applied to page text and to queries alike.

Traditional and simplified Chinese must find each other, and so must full-width and
half-width letters, or upper and lower case. Folding maps both sides to one form
before segmentation: NFKC character by character (Ａｐｔ → Apt, ① stays one
character), lower case, and traditional → simplified with OpenCC (設置頁面格式 →
设置页面格式; with Taiwan vocabulary where it keeps the text's length, 軟體 → 软件).

The folded text always has the length of the original, character for character, so
an offset found in the folded text is an offset in the original: highlighting marks
what the user's page says, in its own script, and folded text is never shown.
Mappings that would change the length (ß → ss, 記憶體 → 内存) are skipped, and a
Han run whose regional conversion changes length, or shifts characters anywhere in
it, falls back to word-by-word, then to character-by-character conversion.
"""

from __future__ import annotations

import array
import difflib
import functools
import re
import threading
import unicodedata

import opencc
import rjieba

from services.common.analysis.han import HAN_RUN
from services.common.runtime.native_code import native

# Code points whose NFKC form or lower case is worth a table entry: the BMP and the
# CJK Compatibility Ideographs Supplement.
_TABLE_RANGES = (range(0x10000), range(0x2F800, 0x2FA20))
# Ideographs that OpenCC may convert one by one.
_IDEOGRAPHS = (range(0x3400, 0x4DC0), range(0x4E00, 0xA000), range(0xF900, 0xFB00))

_lock = threading.Lock()


@functools.cache
def _converter(config: str) -> opencc.OpenCC:
    return opencc.OpenCC(config)


def convert(config: str, text: str) -> str:
    """``text`` through one of OpenCC's conversions (s2t, tw2sp, s2twp …)."""
    return _convert(config, text)


def _convert(config: str, text: str) -> str:
    # One converter per process is shared by threads; OpenCC's C++ object keeps no
    # per-call state, but its Python wrapper's creation is not guarded.
    with _lock:
        conv = _converter(config)
    return conv.convert(text)


def _width_and_case(ch: str) -> str:
    folded = unicodedata.normalize("NFKC", ch)
    if len(folded) != 1:
        return ch
    lower = folded.lower()
    return lower if len(lower) == 1 else folded


@functools.cache
def _tables() -> tuple[dict[int, str], dict[int, str]]:
    """(the whole folding table, its traditional → simplified part alone)."""
    table: dict[int, str] = {}
    for block in _TABLE_RANGES:
        for cp in block:
            ch = chr(cp)
            if (folded := _width_and_case(ch)) != ch:
                table[cp] = folded
    chars = [chr(cp) for block in _IDEOGRAPHS for cp in block]
    # Newlines keep OpenCC from reading neighbours as a phrase: this is the
    # character table alone.
    simplified = _convert("t2s", "\n".join(chars)).split("\n")
    t2s: dict[int, str] = {}
    for ch, simple in zip(chars, simplified, strict=True):
        base = table.get(ord(ch), ch)
        if len(simple) == 1 and simple != base:
            t2s[ord(ch)] = simple
    table.update(t2s)
    # Compatibility ideographs fold by NFKC first; their t2s target wins where both apply.
    # A character mapped to one the table maps again (薴 → 苧 → 苎) takes the end of
    # the chain, so that folding folded text changes nothing.
    for part in (table, t2s):
        for cp, ch in part.items():
            seen = {cp}
            while ord(ch) in table and ord(ch) not in seen:
                seen.add(ord(ch))
                ch = table[ord(ch)]
            part[cp] = ch
    return table, t2s


@functools.cache
def _traditional() -> re.Pattern[str]:
    """Any character the traditional → simplified table maps. One regex search of a
    character class, about a tenth of the cost of translating the text to compare."""
    changed = sorted(cp for cp, simple in _tables()[1].items() if simple != chr(cp))
    return re.compile("[" + "".join(re.escape(chr(cp)) for cp in changed) + "]")


# Taiwan words whose OpenCC phrase conversion reads a shorter word first and goes wrong
# (儲存格, "cell", becomes 保存格 by 儲存, "save"): fixed before OpenCC, same length.
_REGIONAL_FIXES = {"儲存格": "单元格", "伺服器": "服务器", "函式": "函数", "預設值": "默认值"}
_REGIONAL_FIX = re.compile("|".join(map(re.escape, _REGIONAL_FIXES)))


def fold_is_contextual(text: str) -> bool:
    """Whether ``text`` holds a traditional character, whose folding may depend on the
    characters around it (函式 → 函数: 式 alone stays 式)."""
    return _traditional().search(text) is not None


def regional_fold(run: str, by_char: str) -> str:
    """``_regional``: how a traditional run is folded, for a query word (regional.py)."""
    return _regional(run, by_char)


# Pages repeat their runs (a help site's boilerplate, a menu's labels): each is
# converted once. ``by_char`` follows from the run, so a run has one entry.
@functools.lru_cache(maxsize=1 << 15)
def _regional(run: str, by_char: str) -> str:
    """Taiwan vocabulary and phrase-level conversion of one traditional Han run,
    keeping it aligned with the run character for character; ``by_char`` is the run
    already folded character by character.

    OpenCC's conversion of the whole run is taken where each of its phrases keeps its
    length (軟體 → 软件). Where one does not (對話方塊 → 对话框), the run is converted
    word by word instead, each of jieba's words taken where it keeps its length: also
    when two such phrases cancel out (字串 → 字符串 … 十進位制 → 十进制), which leave the
    run's length as it was but every character between them one place off."""
    run = _REGIONAL_FIX.sub(lambda m: _REGIONAL_FIXES[m.group()], run)
    phrase = _convert("tw2sp", run)
    if phrase == by_char or (len(phrase) == len(run) and _aligned(by_char, phrase)):
        return _settled(phrase)
    return _settled(_word_by_word(run, by_char))


def _settled(converted: str) -> str:
    """OpenCC's conversion applied again while it changes a traditional character it
    gave (薴 → 苧 → 苎), at the same length: folding folded text must change nothing. A
    character a phrase keeps (乾 of 乾隆) stays."""
    for _ in range(3):
        if _traditional().search(converted) is None:
            break
        again = _convert("tw2sp", converted)
        if again == converted or len(again) != len(converted):
            break
        converted = again
    return converted


def _aligned(by_char: str, phrase: str) -> bool:
    """Whether every change of ``phrase`` from ``by_char`` keeps its length: each one a
    phrase of the same number of characters, none that shifts the ones after it."""
    return all(i2 - i1 == j2 - j1 for (i1, i2), (j1, j2) in _changes(by_char, phrase))


def _word_by_word(run: str, by_char: str) -> str:
    out, pos = [], 0
    for word in rjieba.cut(run, hmm=True):
        converted = _convert("tw2sp", word)
        out.append(converted if len(converted) == len(word) else by_char[pos : pos + len(word)])
        pos += len(word)
    return "".join(out)


def _changes(by_char: str, phrase: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """``by_char`` and ``phrase`` cut into aligned pieces, each ((i1, i2), (j1, j2)):
    what they share, and what one phrase made of the characters between. A single
    shared character between two changes belongs to them: 印表機 becomes 打印机, whose
    印 is not the run's."""
    ops = difflib.SequenceMatcher(None, by_char, phrase, autojunk=False).get_opcodes()
    pieces: list[list[int]] = []
    for k, (op, i1, i2, j1, j2) in enumerate(ops):
        inside = 0 < k < len(ops) - 1 and i2 - i1 == 1
        if op == "equal" and not inside:
            pieces.append([i1, i2, j1, j2, 1])
        elif pieces and not pieces[-1][4]:
            pieces[-1][1], pieces[-1][3] = i2, j2
        else:
            pieces.append([i1, i2, j1, j2, 0])
    return [((i1, i2), (j1, j2)) for i1, i2, j1, j2, _ in pieces]


@functools.cache
def _foldable() -> re.Pattern[str]:
    """Runs of non-ASCII characters the folding table maps, as one character class of
    ranges. ASCII letters are folded apart (``_ascii_lower``)."""
    codes = sorted(cp for cp in _tables()[0] if cp >= 0x80)
    spans: list[list[int]] = []
    for cp in codes:
        if spans and cp == spans[-1][1] + 1:
            spans[-1][1] = cp
        else:
            spans.append([cp, cp])
    ranges = "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "") for a, b in spans)
    return re.compile(f"[{ranges}]+")


# The table's only ASCII entries are A-Z (tests/unit/test_analysis_fold.py checks it). In UTF-8
# every byte of a non-ASCII character is 0x80 or above, so translating the bytes
# lower-cases the ASCII letters alone.
_ASCII_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")


def _ascii_lower(text: str) -> str:
    """A-Z lower-cased and nothing else, in three calls into C. Before, every capital
    started its own regex replacement with a Python call: on English-heavy pages
    a third of folding."""
    if text.isascii():
        return text.lower()
    return text.encode("utf-8", "surrogatepass").translate(_ASCII_LOWER).decode("utf-8", "surrogatepass")


def _translated(run: re.Match[str]) -> str:
    return run.group().translate(_tables()[0])


def fold(text: str) -> str:
    """``text`` folded for matching; ``len(fold(text)) == len(text)`` always."""
    if native is not None:
        folded, traditional = native.fold_chars(text, native_tables())
    else:
        folded, traditional = fold_chars_in_python(text)
    if not traditional:
        return folded  # no traditional character: the common case
    parts: list[str] = []
    pos = 0
    trad = _traditional()
    for m in HAN_RUN.finditer(text):
        run = m.group()
        if trad.search(run) is None:
            continue
        parts.append(folded[pos : m.start()])
        parts.append(_regional(run, folded[m.start() : m.end()]))
        pos = m.end()
    parts.append(folded[pos:])
    return "".join(parts)


def fold_chars_in_python(text: str) -> tuple[str, bool]:
    """(``text`` folded character by character, whether any character is traditional):
    what the C module's ``fold_chars`` does, where it was not built."""
    # Only the runs of characters the table maps are translated: str.translate looks
    # every other character up in the table too (a new int object for each one
    # above U+00FF, so every Han character), about twice the time for the same string.
    folded = _foldable().sub(_translated, _ascii_lower(text))
    return folded, _traditional().search(text) is not None


# The C module's layout (_native.c): a folded code point for each BMP character and
# each of the CJK Compatibility Ideographs Supplement, 0 for "itself"; then a bit a BMP
# character, set for the traditional ones.
_SUPPLEMENT = range(0x2F800, 0x2FA20)


@functools.cache
def native_tables() -> bytes:
    """``_tables`` as the C module's ``fold_chars`` reads them (about 270 KB)."""
    table, t2s = _tables()
    codes = array.array("I", bytes(4 * (0x10000 + len(_SUPPLEMENT))))
    assert codes.itemsize == 4
    for cp, ch in table.items():
        codes[cp if cp < 0x10000 else 0x10000 + _SUPPLEMENT.index(cp)] = ord(ch)
    bits = bytearray(0x10000 // 8)
    for cp, simple in t2s.items():
        if simple != chr(cp):
            bits[cp >> 3] |= 1 << (cp & 7)
    return codes.tobytes() + bytes(bits)


def initialise() -> None:
    """Build the tables now (about a tenth of a second) rather than on first use."""
    _traditional()
    _foldable()
    if native is not None:
        native_tables()


@functools.cache
def _reverse() -> dict[str, str]:
    table, _ = _tables()
    out: dict[str, list[str]] = {}
    for cp, folded in table.items():
        out.setdefault(folded, [folded]).append(chr(cp))
    return {folded: "".join(dict.fromkeys(chars)) for folded, chars in out.items()}


def variants(ch: str) -> str:
    """Every character that folds to the folded character ``ch``, itself included, so
    that a pattern can find folded query text in the original page text (軟 for 软)."""
    return _reverse().get(ch, ch)


def regional_forms(folded: str) -> tuple[str, ...]:
    """Traditional spellings of folded text that character variants miss because the
    word differs (软件 → 軟體 in Taiwan), for highlighting; () when there are none."""
    if not HAN_RUN.search(folded):
        return ()
    forms = {_convert(config, folded) for config in ("s2twp", "s2hk")}
    return tuple(sorted(f for f in forms if len(f) == len(folded) and f.translate(_tables()[0]) != folded))
