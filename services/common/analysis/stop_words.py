"""Words too common to be required of a page.

A query of 中国的首都 must not fail for want of 的; such words still count inside
phrases, which only add score. Kept short on purpose: every word here is one a user
can no longer require, and Chinese function words are few.
"""

from __future__ import annotations

STOP_WORDS = frozenset(
    """
    的 了 是 在 和 与 及 等 之 或 也 就 都 而 并 其 这 那 个 把 被 着 过 吗 呢 吧 啊
    a an the of to in on at by for from with and or is are was were be been it its as that this
    """.split()
)

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
