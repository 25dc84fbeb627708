"""Character bigrams: a second index of Han text that does not depend on segmentation.

A segmenter splits a sentence by its context, so a fragment copied from a page may
segment differently from the page (折号替换… against 破折号 / 替换 …) and then share
no words with it. Overlapping bigrams (破折, 折号, 号替, …) are the same wherever the
fragment is cut, so a phrase query over them finds every page that holds the exact
string. This is what Lucene's CJK bigram filter does: a Han run of one character is
its own unigram, and non-Han words pass through as whole tokens, so a quoted phrase
can mix scripts ("apt-get 安装").
"""

from __future__ import annotations

from services.common.analysis.fold import fold
from services.common.analysis.words import MAX_TOKEN_CHARS, RUNS
from services.common.runtime.native_code import native


def grams_of_folded(text: str) -> list[str]:
    """The bigram stream of already folded text, in order (in C where it was built:
    a document read back to be rewritten, or copied by ``tansuo force-merge``, has
    its bigram fields built again)."""
    if native is not None:
        return native.grams_of_runs(native.scan(text)[0])
    return grams_in_python(text)


def grams_in_python(text: str) -> list[str]:
    """``grams_of_folded`` without the C module."""
    out: list[str] = []
    for m in RUNS.finditer(text):
        if m.lastgroup == "han":
            add_han_grams(m.group(), out)
        else:
            add_word_gram(m.group(), out)
    return out


def add_han_grams(run: str, out: list[str]) -> None:
    """Append the bigrams of one Han run of ``RUNS`` (a lone character is its own)."""
    if len(run) == 1:
        out.append(run)
    else:
        out.extend([run[i : i + 2] for i in range(len(run) - 1)])


def add_word_gram(run: str, out: list[str]) -> None:
    """Append a non-Han run of ``RUNS`` whole, as the bigram stream keeps it."""
    if len(run) <= MAX_TOKEN_CHARS:
        out.append(run.casefold())


def grams(text: str) -> list[str]:
    """The bigram stream of ``text``: 安装软件 → 安装 装软 软件."""
    return grams_of_folded(fold(text))
