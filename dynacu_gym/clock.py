"""The page's clock: the wall clock's time, or, paused, the time the steps let pass.

In real time (the benchmark's) the page's seconds are the wall clock's since the episode
started. In paused time the page stands still between steps, and each step lets a stretch of
page time pass; the clock keeps every stretch (wall start, wall end, page start, page end), so
what a channel caught at a wall time can be stamped with the page time it showed, and the
other way round.
"""

from __future__ import annotations

import time
from typing import NamedTuple

from gymnasium.error import ResetNeeded

CLOCKS = ("realtime", "paused")


class Stretch(NamedTuple):
    """One stretch in which paused page time passed."""

    wall_start: float
    wall_end: float
    page_start: float
    page_end: float


class PageClock:
    """One env's page clock (see the module docstring).

    Args:
        kind: ``"realtime"`` or ``"paused"``.
    """

    def __init__(self, kind: str = "realtime") -> None:
        if kind not in CLOCKS:
            raise ValueError(f"expected clock in {CLOCKS}, got {kind!r}")
        self.kind = kind
        self._start: float | None = None  # monotonic time the episode's clock started
        self._page = 0.0  # paused: the page seconds passed
        self.stretches: list[Stretch] = []

    @property
    def paused(self) -> bool:
        """Whether page time stands still between steps."""
        return self.kind == "paused"

    @property
    def running(self) -> bool:
        """Whether an episode's clock has started (and not been stopped)."""
        return self._start is not None

    def start(self) -> None:
        """Start an episode's clock at page time 0, now."""
        self._start = time.monotonic()
        self._page = 0.0
        self.stretches = []

    def stop(self) -> None:
        """Stop it: the episode is over (the env closed)."""
        self._start = None

    @property
    def start_time(self) -> float:
        """Monotonic time the clock started.

        Raises:
            gymnasium.error.ResetNeeded: before an episode started.
        """
        if self._start is None:
            raise ResetNeeded("call reset() first")
        return self._start

    @property
    def elapsed(self) -> float:
        """Seconds of page time since the start (0 before it)."""
        if self._start is None:
            return 0.0
        return self._page if self.paused else time.monotonic() - self._start

    def passed(self, wall_start: float, wall_end: float, seconds: float) -> None:
        """Note that ``seconds`` of paused page time passed from ``wall_start`` to ``wall_end``."""
        start = self._page
        self._page = start + seconds
        self.stretches.append(Stretch(wall_start, wall_end, start, self._page))

    def page_at(self, wall: float) -> float:
        """The page time at monotonic wall time ``wall``.

        In real time ``wall - start_time``. Paused, the page time stands still between the
        stretches, so a time between them is the end of the one before.
        """
        if not self.paused:
            return wall - self.start_time
        passed = 0.0
        for stretch in self.stretches:
            if wall < stretch.wall_start:
                break
            if wall <= stretch.wall_end:
                span = max(stretch.wall_end - stretch.wall_start, 1e-9)
                share = (wall - stretch.wall_start) / span
                return stretch.page_start + share * (stretch.page_end - stretch.page_start)
            passed = stretch.page_end
        return passed

    def wall_at(self, page: float) -> float:
        """The first monotonic wall time at which page time ``page`` was reached.

        The inverse of :meth:`page_at`: the start for a page time before 0, now for one not
        reached yet.
        """
        start = self.start_time
        if not self.paused:
            return start + page
        if page <= 0:
            return start
        for stretch in self.stretches:
            if page <= stretch.page_end:
                page_span = max(stretch.page_end - stretch.page_start, 1e-9)
                share = max(0.0, (page - stretch.page_start) / page_span)
                return stretch.wall_start + share * (stretch.wall_end - stretch.wall_start)
        return time.monotonic()
