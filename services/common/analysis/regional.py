"""A word's name in the other region, for queries: 列印 ↔ 打印, 软体 → 软件, 滑鼠 ↔ 鼠标.

Pages are folded in place (``fold.py``): a Han run that holds a traditional character
goes through OpenCC's Taiwan phrase table (軟體 → 软件) where the length holds. A
query word typed alone misses that: 列印 holds no traditional character, so it stays
列印 while the title 列印選項 became 打印选项; 软体 (a Taiwan word in simplified
characters) is not 软件. So a query word also looks for its other region's form,
both ways, as OpenCC's ``tw2sp`` and ``s2twp`` phrase tables give it:

- the mainland form of a Taiwan word (列印 → 打印, 软体 → 软件, 程式 → 程序),
  folded as a Taiwan page's run is (with the phrase table), unless the word is itself
  mainland usage (one OpenCC spells otherwise for Taiwan: a mainland user's 程序 is a
  program, not Taiwan's 程序, a mainland 进程);
- the Taiwan form of a mainland word folded as a page holding it is folded
  (打印 → 列印, 鼠标 → 滑鼠, 内存 → 记忆体), which differs from the mainland word
  where the Taiwan word holds no traditional character, or the phrase table would
  change its length.
"""

from __future__ import annotations

import functools

from services.common.analysis.fold import convert, fold, regional_fold
from services.common.analysis.han import HAN_RUN


@functools.lru_cache(maxsize=16384)
def regional_variants(word: str) -> tuple[str, ...]:
    """Other-region forms of a folded query word, folded as pages are; () for most words."""
    if not HAN_RUN.fullmatch(word):
        return ()
    traditional = convert("s2t", word)
    taiwan = convert("s2twp", word)
    out: list[str] = []
    if taiwan == traditional:  # no other Taiwan spelling: it may be the Taiwan word
        out.append(regional_fold(traditional, word))
    out.append(fold(taiwan))
    return tuple(v for v in dict.fromkeys(out) if v != word and v)


@functools.lru_cache(maxsize=4096)
def taiwan_reading(folded: str) -> str:
    """Folded text read as a Taiwan page's line typed in simplified characters one by
    one (对话方块中的软体 → 对话方块中的软件): each Han run put back in traditional script
    and folded as a page's run is, where that keeps its length and the run has a
    traditional character to put back; the same length, so its bigrams stand where the
    text's do."""

    def read(run: str) -> str:
        traditional = convert("s2t", run)
        if traditional == run or len(traditional) != len(run):
            # No traditional character: a page's run like it is folded as it is (至字元).
            return run
        reading = regional_fold(traditional, run)
        return reading if len(reading) == len(run) else run

    return HAN_RUN.sub(lambda m: read(m.group()), folded)
