"""The indexer's poll size follows the pace at which it handles events."""

from __future__ import annotations

from services.indexer.poll_size import PollSize


def test_polls_start_at_the_batch_size_and_stay_there_while_the_index_keeps_up() -> None:
    size = PollSize(largest=1000, interval_s=1.0)
    assert size.size == 1000
    size.observe(1000, 0.5)  # 2,000 events a second
    assert size.size == 1000


def test_a_stalled_index_shrinks_the_next_poll_and_a_recovered_one_grows_it_back() -> None:
    size = PollSize(largest=1000, interval_s=1.0)
    size.observe(1000, 0.5)
    size.observe(1000, 20.0)  # the index stopped answering for most of a poll
    assert size.size < 1000
    stalled = size.size
    size.observe(50, 30.0)
    assert size.size == 10 < stalled  # never fewer than ten
    for _ in range(8):
        size.observe(size.size, size.size / 2000)
    assert size.size == 1000


def test_a_poll_that_found_nothing_says_nothing_about_the_pace() -> None:
    size = PollSize(largest=500, interval_s=0.5)
    size.observe(100, 0.5)
    assert size.size == 100
    size.observe(0, 0.0)
    assert size.size == 100
