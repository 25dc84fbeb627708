"""Characters a Chinese user types in place of another, for spelling correction.

Most typos of Chinese users come from a pinyin input method: the right syllables, the
wrong candidate (头 for 透 in 数据透视表), or a near syllable where a regional accent
merges zh/z, ch/c, sh/s, n/l or the nasal finals (in/ing, en/eng, an/ang). Some come
from shape: a handwriting or stroke input method, or a glance (己/已). So the candidates
for a character are:

- the characters of the same toneless pinyin (tones are not typed);
- those of a near pinyin (``pinyin_keys.fuzzy_key``);
- those alike in shape (pycorrector's ``same_stroke`` groups, Apache-2.0, in
  ``data/same_shape.txt``).

Candidates come from GB2312's 6,763 characters, the most used first (jieba's
dictionary frequencies), so a correction never proposes a rare character the index
would not hold anyway.
"""

from __future__ import annotations

import functools
from importlib import resources

import rjieba

from services.common.analysis.pinyin_keys import char_pinyin, fuzzy_key


@functools.cache
def _inventory() -> tuple[str, ...]:
    """GB2312's Han characters, level 1 (most used) first."""
    chars = []
    for hi in range(0xB0, 0xF8):
        for lo in range(0xA1, 0xFF):
            try:
                ch = bytes((hi, lo)).decode("gb2312")
            except UnicodeDecodeError:
                continue
            chars.append(ch)
    return tuple(chars)


@functools.cache
def _by_sound() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(toneless pinyin → characters, fuzzy key → characters), each most used first
    (by the segmenter's dictionary frequencies, which rjieba gives)."""
    same: dict[str, list[str]] = {}
    near: dict[str, list[str]] = {}
    for ch in sorted(_inventory(), key=lambda c: -rjieba.suggest_freq(c)):
        sound = char_pinyin(ch)
        if sound:
            same.setdefault(sound, []).append(ch)
            near.setdefault(fuzzy_key(sound), []).append(ch)
    return same, near


@functools.cache
def _by_shape() -> dict[str, tuple[str, ...]]:
    text = resources.files("services.search").joinpath("data/same_shape.txt").read_text(encoding="utf-8")
    groups: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        chars = [c for c in line.split("\t") if len(c) == 1]
        for ch in chars:
            groups.setdefault(ch, []).extend(c for c in chars if c != ch)
    return {ch: tuple(dict.fromkeys(others)) for ch, others in groups.items()}


@functools.cache
def _one_letter_apart() -> dict[str, tuple[str, ...]]:
    """Each syllable's syllables one letter longer or shorter (shuai and shai: 帅选
    typed for 筛选), a slip of the fingers on a pinyin keyboard. Changing a letter is
    left out: su and du, ge and de are different syllables, not slips."""
    same, _ = _by_sound()
    sounds = set(same)
    out: dict[str, tuple[str, ...]] = {}
    letters = "abcdefghijklmnopqrstuvwxyz"
    for s in sounds:
        near = {s[:i] + s[i + 1 :] for i in range(len(s))}
        near |= {s[:i] + c + s[i:] for i in range(1, len(s) + 1) for c in letters}
        out[s] = tuple(sorted((near & sounds) - {s}))
    return out


# What each kind of candidate costs a correction, as a factor on how much more common
# its bigrams must be: a same-pinyin slip is the likeliest.
SAME_SOUND, NEAR_SOUND, SAME_SHAPE, ONE_LETTER = 1.0, 3.0, 3.0, 10.0


@functools.lru_cache(maxsize=8192)
def candidates(ch: str, limit: int = 120) -> tuple[tuple[str, float], ...]:
    """(character, cost) of each character a user may have meant where ``ch`` was
    typed, likeliest kinds first: same pinyin, alike in shape, near pinyin, pinyin one
    letter longer or shorter; at most ``limit``."""
    same, near = _by_sound()
    sound = char_pinyin(ch)
    if not sound:
        return ()
    out: dict[str, float] = {}
    kinds = (
        (same.get(sound, ()), SAME_SOUND),
        (_by_shape().get(ch, ()), SAME_SHAPE),
        (near.get(fuzzy_key(sound), ()), NEAR_SOUND),
        # Level-1 characters only from the syllables a letter apart: they are many.
        ([c for other in _one_letter_apart().get(sound, ()) for c in same[other][:12]], ONE_LETTER),
    )
    for chars, cost in kinds:
        for c in chars:
            if c != ch and c not in out:
                out[c] = cost
    return tuple(out.items())[:limit]


def sounds_alike(a: str, b: str) -> bool:
    """Whether two characters share a toneless or near pinyin (an input method's slip)."""
    pa, pb = char_pinyin(a), char_pinyin(b)
    return bool(pa) and bool(pb) and (pa == pb or fuzzy_key(pa) == fuzzy_key(pb))


def inventory_by_sound() -> dict[str, list[str]]:
    """Toneless pinyin → its GB2312 characters, most used first (for pinyin queries)."""
    return _by_sound()[0]
