"""The Retry-After of a refusal grows while a worker keeps refusing, and comes back."""

from __future__ import annotations

from services.common.runtime.http.retry_after import RetryAfter
from tests.manual_clock import ManualClock


def _second(policy: RetryAfter, clock: ManualClock, admitted: int, refused: int) -> list[int]:
    """One window's traffic, then the clock moves past it; the Retry-Afters sent."""
    sent = []
    for _ in range(admitted):
        policy.admitted()
    for _ in range(refused):
        sent.append(policy.refused())
    clock.now += 1.0
    return sent


def test_a_refusal_carries_the_floor_until_a_window_has_closed() -> None:
    clock = ManualClock()
    policy = RetryAfter(1, 30, clock=clock)
    assert set(_second(policy, clock, admitted=100, refused=50)) == {1}


def test_sustained_refusals_double_it_up_to_the_ceiling() -> None:
    clock = ManualClock()
    policy = RetryAfter(1, 30, clock=clock)
    seen = [_second(policy, clock, admitted=300, refused=100)[0] for _ in range(8)]
    assert seen == [1, 2, 4, 8, 16, 30, 30, 30]


def test_a_few_refusals_under_the_target_share_leave_it_alone() -> None:
    clock = ManualClock()
    policy = RetryAfter(1, 30, target=0.05, clock=clock)
    for _ in range(5):
        _second(policy, clock, admitted=1000, refused=10)  # 1%
    assert policy.seconds == 1


def _overloaded(floor_s: int) -> tuple[RetryAfter, ManualClock]:
    """A policy after five seconds of half its requests refused: at the ceiling."""
    clock = ManualClock()
    policy = RetryAfter(floor_s, 30, clock=clock)
    for _ in range(5):
        _second(policy, clock, admitted=10, refused=10)
    assert policy.seconds == 30
    return policy, clock


def test_windows_without_refusals_bring_it_down_an_eighth_at_a_time() -> None:
    policy, clock = _overloaded(floor_s=2)
    seen = []
    for _ in range(12):
        _second(policy, clock, admitted=50, refused=0)
        seen.append(policy.seconds)
    # 30 → 27 → 24 …: slowly, so clients told to stay away do not all come back at once.
    assert seen == [27, 24, 21, 19, 17, 15, 14, 13, 12, 11, 10, 9]


def test_it_comes_down_to_the_floor_and_stays() -> None:
    policy, clock = _overloaded(floor_s=2)
    for _ in range(40):
        _second(policy, clock, admitted=50, refused=0)
    assert policy.seconds == 2


def test_a_quiet_worker_forgets_an_old_overload() -> None:
    policy, clock = _overloaded(floor_s=1)
    clock.now += 60.0  # nobody came for a minute
    assert policy.refused() == 1


def test_the_floor_is_at_least_one_second_and_the_ceiling_not_below_it() -> None:
    policy = RetryAfter(0, 0)
    assert (policy.floor_s, policy.ceiling_s, policy.refused()) == (1, 1, 1)
