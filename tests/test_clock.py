"""The page clock's arithmetic: real time, and paused time's stretches both ways."""

from __future__ import annotations

import time

import pytest
from gymnasium.error import ResetNeeded

from dynacu_gym.clock import PageClock, Stretch


def test_real_time_is_the_wall_clocks() -> None:
    clock = PageClock()
    assert clock.elapsed == 0.0 and not clock.running
    with pytest.raises(ResetNeeded):
        clock.start_time  # noqa: B018 - the property raises
    clock.start()
    start = clock.start_time
    assert clock.page_at(start + 2.5) == pytest.approx(2.5)
    assert clock.wall_at(4.0) == pytest.approx(start + 4.0)
    time.sleep(0.02)
    assert 0.02 <= clock.elapsed < 1.0
    clock.stop()
    assert not clock.running and clock.elapsed == 0.0


def test_paused_time_passes_only_in_its_stretches() -> None:
    clock = PageClock("paused")
    clock.start()
    start = clock.start_time
    # 2 s of page time over 1 s of wall time, a pause of 3 s, then 1 s over 1 s.
    clock.passed(start + 1.0, start + 2.0, 2.0)
    clock.passed(start + 5.0, start + 6.0, 1.0)
    assert clock.elapsed == 3.0
    assert clock.stretches == [
        Stretch(start + 1.0, start + 2.0, 0.0, 2.0),
        Stretch(start + 5.0, start + 6.0, 2.0, 3.0),
    ]
    assert clock.page_at(start + 0.5) == 0.0  # before any stretch: still 0
    assert clock.page_at(start + 1.5) == pytest.approx(1.0)  # halfway through the first
    assert clock.page_at(start + 4.0) == 2.0  # between them: where the first ended
    assert clock.page_at(start + 5.25) == pytest.approx(2.25)
    assert clock.page_at(start + 9.0) == 3.0
    # And back: the first wall time each page time was reached.
    assert clock.wall_at(-1.0) == start
    assert clock.wall_at(1.0) == pytest.approx(start + 1.5)
    assert clock.wall_at(2.0) == pytest.approx(start + 2.0)
    assert clock.wall_at(2.5) == pytest.approx(start + 5.5)
    before = time.monotonic()
    assert clock.wall_at(10.0) >= before  # not reached yet: now


def test_a_new_episode_starts_the_clock_afresh_and_a_bad_kind_is_named() -> None:
    clock = PageClock("paused")
    clock.start()
    clock.passed(clock.start_time, clock.start_time + 0.1, 5.0)
    clock.start()
    assert clock.elapsed == 0.0 and clock.stretches == []
    with pytest.raises(ValueError, match=r"expected clock in \('realtime', 'paused'\), got 'wall"):
        PageClock("wall")
