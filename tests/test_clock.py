"""Paused time: the page's clock stands still between steps and each step lets its time pass."""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np
import pytest

import dynacu_gym  # noqa: F401 - registers the envs
from dynacu_gym import parse_action
from dynacu_gym.env import DynaCUEnv

pytestmark = pytest.mark.browser

# D6's page turns its banner every 6 s and its reviews every 7 s, each with a fade, so these
# steps catch the page before, during and after its changes; Tab moves the focus.
STEPS = ["wait 3", "click 640 300", "wait 4.5", "key Tab", "wait 6", "wait 6", "wait 2.2"]


def _play(env, think_s: float) -> list[tuple[str, float, np.ndarray]]:
    obs, _ = env.reset(seed=3)
    seen = [("pending", float(obs["elapsed"]), obs["screenshot"])]
    for action in STEPS:
        time.sleep(think_s)  # an agent that takes its time: the page must not notice
        obs, _, _, _, info = env.step(parse_action(action))
        seen.append((info["task_result"], float(obs["elapsed"]), obs["screenshot"]))
    return seen


def test_paused_time_replays_the_same_whatever_the_agent_takes(make_env):
    """Same seed, same actions: the same verdicts at the same page times, and the same screens.

    The screens may differ by one level where a rounded corner's anti-aliasing was drawn in a
    layer of its own or not (the compositor merges a finished animation's layer when it gets
    to it); what the page shows is the same.
    """
    quick = _play(make_env("D6", clock="paused"), think_s=0.0)
    slow = _play(make_env("D6", clock="paused"), think_s=1.0)
    times = [0.0, 3.0, 3.5, 8.0, 8.5, 14.5, 20.5, 22.7]
    for (result_a, t_a, shot_a), (result_b, t_b, shot_b), t in zip(quick, slow, times, strict=True):
        assert (result_a, t_a) == (result_b, t_b) == ("pending", pytest.approx(t))
        assert np.abs(shot_a.astype(int) - shot_b).max() <= 1, f"the screens differ at {t} s"
    # The page did move meanwhile: its banner and reviews turned.
    assert len({shot.tobytes() for _, _, shot in quick}) >= 4


def test_a_step_lets_exactly_its_time_pass(make_env):
    env = make_env("D6", clock="paused", action_time_s=0.25)
    env.reset(seed=0)
    page_now = "() => window.DynaCU.now()"
    browser = env.sandbox.browser_or_raise()
    for action, elapsed in (("wait 2.5", 2.5), ("click 10 10", 2.75), ("wait 0.1", 2.85)):
        obs, _, _, _, _ = env.step(parse_action(action))
        assert float(obs["elapsed"]) == pytest.approx(elapsed)
        assert browser.evaluate(page_now) == pytest.approx(elapsed)
    time.sleep(1.0)
    assert browser.evaluate(page_now) == pytest.approx(2.85)  # nothing passed meanwhile
    assert env.episode_time(time.monotonic()) == pytest.approx(2.85)


def test_the_clock_holds_on_a_machine_slow_between_install_and_pause(make_env, monkeypatch):
    """Playwright's installed clock runs until paused, and pausing at a time it has passed
    fails ("Cannot fast-forward to the past"): on a loaded machine it had, now and then."""
    from playwright.sync_api._generated import Clock  # the class of context.clock (not exported)

    install = Clock.install

    def slow_install(self, **kwargs):
        install(self, **kwargs)
        time.sleep(0.5)  # the machine is busy before the next call

    monkeypatch.setattr(Clock, "install", slow_install)
    env = make_env("S1", clock="paused")
    obs, _ = env.reset(seed=0)
    assert float(obs["elapsed"]) == 0.0
    obs, *_ = env.step(parse_action("wait 1.5"))
    assert float(obs["elapsed"]) == pytest.approx(1.5)


def test_a_time_limit_runs_out_on_the_page_clock(make_env):
    env = make_env("S1", clock="paused", time_limit_s=20)
    env.reset(seed=0)
    _, _, terminated, _, info = env.step(parse_action("wait 15"))
    assert not terminated
    time.sleep(6.0)  # more than the limit's remaining 5 s, in wall time
    _, _, terminated, _, info = env.step(parse_action("wait 4"))
    assert not terminated and info["task_result"] == "pending"
    _, _, terminated, _, info = env.step(parse_action("wait 2"))
    assert terminated and info["task_result"] == "timeout"


@pytest.mark.audio
@pytest.mark.slow
def test_paused_time_plays_and_hears_the_page_on_the_page_clock():
    """A5's podcast plays only while time passes; what the agent hears is stamped in page time.

    The show opens "You're listening to Granny Gear" 1 s in, and names Ridgeline coffee 13 s in.
    """
    env = gym.make("DynaCU-A5-v0", mode="aoi_audio", clock="paused")
    try:
        env.reset(seed=0)
        env.step(parse_action("wait 10"))
        time.sleep(12.0)  # the podcast must not play on while the agent thinks
        obs, _, _, _, info = env.step(parse_action("wait 10"))
        assert float(obs["elapsed"]) == pytest.approx(20.0)
        heard = info["audio"]["context"]
        assert all(s["end"] <= 20.5 for s in heard), heard
        starts = {key: [s["start"] for s in heard if key in s["text"].lower()] for key in (
            "listening to", "ridgeline")}  # fmt: skip
        assert 0.5 <= min(starts["listening to"], default=-1) <= 2.5, heard
        assert 11.5 <= min(starts["ridgeline"], default=-1) <= 15.0, heard
    finally:
        env.close()


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"clock": "frozen"}, ValueError, "expected clock in \\('realtime', 'paused'\\)"),
        ({"action_time_s": -1}, ValueError, "action_time_s"),
        ({"action_time_s": "0.5"}, TypeError, "action_time_s"),
    ],
)
def test_a_bad_clock_is_refused(probe_task, options, error, message):
    with pytest.raises(error, match=message):
        DynaCUEnv(probe_task, **options)
