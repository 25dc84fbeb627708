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
