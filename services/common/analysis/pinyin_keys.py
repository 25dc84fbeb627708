"""Pinyin of Han text, without tones: what a pinyin input method is typed with.

Search uses it to find what a user meant: a typo picked from an input method's
candidate list sounds like the word it replaced (数据头视表 for 数据透视表), and a
query typed in pinyin (shujutoushibiao) or its initials (sjtsb) spells the words it
wants. pypinyin (MIT) gives each character's readings; the first, the most common,
is taken, and ü is written v as on a keyboard.
"""

from __future__ import annotations

import functools

from pypinyin import Style, lazy_pinyin

from services.common.analysis.han import HAN_RUN

# Pairs an input method user mixes up: regional accents (zh/z, ch/c, sh/s, n/l) and
# the nasal finals (in/ing, en/eng, an/ang).
INITIAL_CONFUSIONS = (("zh", "z"), ("ch", "c"), ("sh", "s"), ("n", "l"))
FINAL_CONFUSIONS = (("ing", "in"), ("eng", "en"), ("ang", "an"))


@functools.lru_cache(maxsize=65536)
def char_pinyin(ch: str) -> str:
    """A Han character's toneless pinyin ('' for anything else)."""
    if not HAN_RUN.fullmatch(ch):
        return ""
    readings = lazy_pinyin(ch, style=Style.NORMAL, v_to_u=False, errors="ignore")
    return readings[0] if readings else ""  # a rare character pypinyin does not know


def syllables(text: str) -> list[str]:
    """The toneless pinyin of each Han character of ``text``, in order; other characters left out."""
    return [char_pinyin(ch) for ch in text if HAN_RUN.fullmatch(ch)]


def pinyin_of(text: str) -> str:
    """``text``'s Han characters in toneless pinyin, run together: 数据透视表 → shujutoushibiao."""
    return "".join(syllables(text))


def initials_of(text: str) -> str:
    """The first letter of each syllable: 数据透视表 → sjtsb."""
    return "".join(s[0] for s in syllables(text) if s)


def fuzzy_key(syllable: str) -> str:
    """A syllable with the usual confusions merged (zh → z, ng-finals → n-finals, n → l),
    so that two syllables an input method user mixes up share a key."""
    for long, short in INITIAL_CONFUSIONS:
        if syllable.startswith(long):
            syllable = short + syllable[len(long) :]
            break
    for long, short in FINAL_CONFUSIONS:
        if syllable.endswith(long):
            syllable = syllable[: -len(long)] + short
            break
    return syllable
