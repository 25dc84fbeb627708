"""Which link fields a ranker run writes: material rank moves and any anchor change."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from services.common.domain.documents import feature_precision
from services.ranker.rank_writes import (
    RANK_CHANGE,
    WrittenFields,
    feature_precision_array,
    text_hash,
)

IDS = np.array([3, 0, 7])


def written_once(rank: list[float], anchors: list[str]) -> WrittenFields:
    written = WrittenFields()
    written.remember(IDS, np.array(rank), hashes(anchors))
    return written


def hashes(texts: list[str]) -> np.ndarray:
    return np.array([text_hash(t) for t in texts], dtype=np.int64)


def test_a_page_never_written_is_written() -> None:
    assert WrittenFields().material(IDS, np.array([1.0, 0.5, 2.0]), hashes(["", "", "首页"])).all()


def test_a_move_below_the_threshold_is_not_written_and_a_material_move_is() -> None:
    written = written_once([1.0, 0.5, 2.0], ["首页", "", ""])
    tiny = 1 + RANK_CHANGE / 2  # float noise, a few new pages far away: within one feature step or two
    material = 1 + 2 * RANK_CHANGE
    new_rank = np.array([1.0 * tiny, 0.5 / tiny, 2.0 * material])
    assert written.material(IDS, new_rank, hashes(["首页", "", ""])).tolist() == [False, False, True]


def test_an_anchor_change_is_written_even_when_the_rank_stays() -> None:
    written = written_once([1.0, 0.5, 2.0], ["首页", "", "安装手册"])
    changed = written.material(IDS, np.array([1.0, 0.5, 2.0]), hashes(["首页", "常见问题", "安装手册 | 安装"]))
    assert changed.tolist() == [False, True, True]


def test_the_threshold_is_above_the_rank_features_precision() -> None:
    # One step of the 9-bit feature is 2^-8 of the value: a threshold below it would
    # rewrite pages sitting on a step boundary on float noise.
    assert RANK_CHANGE > 2**-8


def test_a_later_id_beyond_the_remembered_ones_counts_as_never_written() -> None:
    written = written_once([1.0, 0.5, 2.0], ["", "", ""])
    assert written.material(np.array([0, 10_000]), np.array([0.5, 1.0]), hashes(["", ""])).tolist() == [False, True]


@given(st.lists(st.floats(min_value=0, max_value=1e30, allow_nan=False), max_size=50))
def test_the_array_rounding_matches_the_index_features_rounding(values: list[float]) -> None:
    assert feature_precision_array(np.array(values, dtype=np.float64)).tolist() == [feature_precision(v) for v in values]
