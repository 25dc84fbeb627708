"""Anchor fields and aliases computed on id arrays equal the per-page rules."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from services.ranker.anchor_text import join_anchors, joined_by_node
from services.ranker.link_snapshot import follow_aliases

TEXTS = {0: "首页", 1: "下一页", 2: "安装手册", 3: "APT 指南", 4: "长" * 1500}


@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from(sorted(TEXTS))), max_size=60))
def test_each_nodes_field_is_join_anchors_of_its_texts(rows: list[tuple[int, int]]) -> None:
    node = np.array([n for n, _ in rows], dtype=np.int64)
    text = np.array([t for _, t in rows], dtype=np.uint32)
    where, joined = joined_by_node(6, node, text, TEXTS)
    for n in range(6):
        expected = join_anchors([TEXTS[t] for m, t in rows if m == n])
        assert (joined[where[n]] if where[n] >= 0 else "") == expected


def test_alias_chains_end_at_the_page_and_loops_alias_nothing() -> None:
    assert follow_aliases({1: 2, 2: 3}) == {1: 3, 2: 3}
    assert follow_aliases({1: 2, 2: 1}) == {}
