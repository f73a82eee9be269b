"""RL libraries: the adapters give stable-baselines3 spaces it accepts; vector envs run apart."""

from __future__ import annotations

import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3 import PPO
from stable_baselines3.common.env_checker import check_env

import dynacu_gym  # noqa: F401 - registers the envs
from dynacu_gym.env import DynaCUEnv
from dynacu_gym.runtime.process import descendants
from dynacu_gym.wrappers.rl import DiscreteActions, ImageObservation, downscale, hash_words


def test_a_grid_of_clicks_waits_and_keys_become_one_discrete(probe_task):
    env = DiscreteActions(DynaCUEnv(probe_task), grid=(4, 2), waits=(0.5, 2), keys=("space",),
                          done=True)  # fmt: skip
    assert env.action_space == gym.spaces.Discrete(4 * 2 + 2 + 1 + 1)
    assert env.action(0) == {"type": "click", "x": 160, "y": 180}
    assert env.action(np.int64(7)) == {"type": "click", "x": 1120, "y": 540}
    assert [env.describe(i) for i in range(8, 12)] == ["wait 0.5", "wait 2", "key Space", "done"]
    points = DiscreteActions(DynaCUEnv(probe_task), grid=(0, 0), points=[(351, 433)], waits=(0.25,))
    assert points.actions == [
        {"type": "click", "x": 351, "y": 433},
        {"type": "wait", "seconds": 0.25},
    ]
    for bad in (12, -1, 2.0, True, "3"):
        with pytest.raises(ValueError, match="expected an action index in 0..11"):
            env.action(bad)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"grid": (0, 3)}, "expected grid as \\(columns, rows\\)"),
        ({"grid": (2000, 3)}, "expected grid"),
        ({"waits": (0,)}, "expected each wait in \\(0, 30\\]"),
        ({"keys": ("Hyper+q",)}, "Hyper"),
        ({"grid": (0, 0), "waits": ()}, "expected at least one action"),
        ({"points": [(1280, 5)]}, "expected each point as \\(x, y\\) pixels within 1280x720"),
    ],
)
def test_a_bad_action_adapter_is_refused(probe_task, options, message):
    with pytest.raises(ValueError, match=message):
        DiscreteActions(DynaCUEnv(probe_task), **options)


def test_the_screen_is_scaled_down_by_averaging_its_cells():
    image = np.zeros((720, 1280, 3), dtype=np.uint8)
    image[:360, :640] = 200  # the top-left quarter
    small = downscale(image, 72, 128)
    assert small.shape == (72, 128, 3)
    assert (small[:36, :64] == 200).all() and (small[36:, :] == 0).all()
    assert downscale(image, 3, 3)[0, 0, 0] == 200 and downscale(image, 3, 3)[1, 1, 0] == 50
    with pytest.raises(ValueError, match="within 720x1280"):
        downscale(image, 721, 10)


def test_heard_words_hash_to_the_same_counts_every_time():
    a = hash_words("The code is ROASTRIDE, the code!", 32)
    assert a.shape == (32,) and a.dtype == np.float32
    assert np.array_equal(a, hash_words("the CODE is roastride the code", 32))
    assert a.max() == pytest.approx(np.log1p(2.0))  # "the" and "code", twice each
    assert not hash_words("", 32).any()


@pytest.mark.browser
def test_stable_baselines3_accepts_the_adapted_env_and_ppo_runs_on_it():
    env = ImageObservation(DiscreteActions(gym.make("DynaCU-J1-v0", clock="paused")))
    try:
        check_env(env)
        obs, _ = env.reset(seed=0)
        assert obs.shape == (72, 128, 3) and obs.dtype == np.uint8 and obs.std() > 0  # the page
        PPO("CnnPolicy", env, n_steps=16, batch_size=16, n_epochs=1).learn(16)
    finally:
        env.close()


@pytest.mark.browser
@pytest.mark.slow
def test_the_dict_adapter_carries_keyframes_time_and_heard_words():
    base = gym.make("DynaCU-A5-v0", mode="aoi_full", clock="paused", max_keyframes=3)
    env = ImageObservation(DiscreteActions(base, keys=("Space",)), extras=True, text_features=64)
    try:
        check_env(env)
        env.reset(seed=0)
        wait = next(i for i, a in enumerate(env.env.actions) if a["type"] == "wait")
        for _ in range(8):  # 8 s of the podcast
            obs, *_ = env.step(wait)
        assert obs["elapsed"][0] == pytest.approx(8.0)
        assert obs["keyframes"].shape == (72, 128, 9)
        assert obs["text"].sum() > 0  # the host's first words
        PPO("MultiInputPolicy", env, n_steps=8, batch_size=8, n_epochs=1).learn(8)
    finally:
        env.close()


@pytest.mark.browser
def test_an_async_vector_env_runs_each_env_in_its_own_sandbox_and_closes_clean():
    # Earlier tests may have left long-lived helpers of their own (a multiprocessing resource
    # tracker, a session fixture's sandbox); only what this vector env starts must end with it.
    before = descendants()
    envs = gym.make_vec(
        "DynaCU-J1-v0",
        num_envs=2,
        vectorization_mode="async",
        clock="paused",
        wrappers=[lambda e: DiscreteActions(e, grid=(4, 3)), ImageObservation],
    )
    try:
        obs, infos = envs.reset(seed=[1, 2])
        assert obs.shape == (2, 72, 128, 3)
        started = descendants() - before
        displays = [pid for pid in started if program(pid).endswith("Xvfb")]
        assert len(displays) == 2, displays  # a display (and browser, audio) per env
        for _ in range(4):
            obs, rewards, terminated, truncated, infos = envs.step(envs.action_space.sample())
            assert obs.shape == (2, 72, 128, 3) and not truncated.any()
    finally:
        envs.close()
    deadline = time.monotonic() + 10
    while descendants() - before and time.monotonic() < deadline:
        time.sleep(0.2)
    left = {pid: program(pid) for pid in descendants() - before}
    assert not left, f"processes outlived the vector env: {left}"


def program(pid: int) -> str:
    """The program a process runs, or "" once it has gone."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except OSError:
        return ""
