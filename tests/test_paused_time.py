"""Paused time in the real page: where its clock starts, and that time passes as asked."""

from __future__ import annotations

from datetime import datetime, timezone

import gymnasium as gym

import dynacu_gym  # noqa: F401 - registers the envs
from dynacu_gym import parse_action

EPOCH_MS = datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp() * 1000

# Each firing of a 250 ms interval, at the page's Date.
TICKS_SCRIPT = """() => {
  window.__ticks = [];
  setInterval(() => window.__ticks.push(Date.now()), 250);
}"""


def test_each_paused_episode_starts_at_the_epoch_and_runs_the_timers_it_passes() -> None:
    """Every episode's page starts on 2026-01-01 (not where the last one ended, nor in a year
    the clock's units made up) and a wait runs the page's timers for just that long."""
    env = gym.make("DynaCU-D6-v0", clock="paused")
    try:
        for episode in range(2):
            env.reset(seed=episode)
            browser = env.unwrapped.sandbox.browser_or_raise()
            start = browser.evaluate("() => Date.now()")
            assert 0 <= start - EPOCH_MS < 1000, f"episode {episode}: page date {start}"
            browser.evaluate(TICKS_SCRIPT)
            for _ in range(3):
                env.step(parse_action("wait 1"))
            ticks = browser.evaluate("() => window.__ticks")
            assert [t - ticks[0] for t in ticks] == [250 * i for i in range(12)], ticks
            assert browser.evaluate("() => Date.now()") - start == 3000
    finally:
        env.close()
