"""Words too common to be required of a page.

A query of 中国的首都 must not fail for want of 的; such words still count inside
phrases, which only add score. Kept short on purpose: every word here is one a user
can no longer require, and Chinese function words are few.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

# The shipped defaults; an operator edits the list in the console or adds a file
# (services/dictionaries/), and ``set_stop_words`` installs it.
DEFAULT_STOP_WORDS = frozenset(
    """
    的 了 是 在 和 与 及 等 之 或 也 就 都 而 并 其 这 那 个 把 被 着 过 吗 呢 吧 啊
    a an the of to in on at by for from with and or is are was were be been it its as that this
    """.split()
)


class _Current:
    """The stop words in use, read as a set (``w in STOP_WORDS``), so that modules
    that imported the name see a list installed after their import."""

    def __init__(self, words: frozenset[str]) -> None:
        self.words = words

    def __contains__(self, word: object) -> bool:
        return word in self.words

    def __iter__(self) -> Iterator[str]:
        return iter(self.words)

    def __len__(self) -> int:
        return len(self.words)


STOP_WORDS = _Current(DEFAULT_STOP_WORDS)


def set_stop_words(words: Iterable[str] | None) -> None:
    """Use these folded words as stop words from now on; None: the defaults."""
    STOP_WORDS.words = DEFAULT_STOP_WORDS if words is None else frozenset(words)

# Words that make a question a question: 怎么 in 怎么安装软件包 says how the user asks,
# not what the page is about. A query never requires them (unless it is nothing else)
# and they add little score. Kept apart from STOP_WORDS because a page about "为什么"
# questions is still found by them.
QUESTION_WORDS = frozenset(
    """
    什么 怎么 怎样 怎么样 如何 为什么 为何 吗 呢 吧 请问 是否 能否 可否 哪些 哪个 哪里 哪儿
    多少 是不是 有没有 能不能 会不会 可不可以 怎么办 要不要 需不需要 可以 能 会 应该 需要
    how what why which when where who whom does do can could should
    """.split()
)
