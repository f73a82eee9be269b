"""Gymnasium's own checker on the unwrapped env of every registered id."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from tasks_sample import ALL_TASKS, CHANNEL_SAMPLE, task_params

import dynacu_gym
from dynacu_gym.modes import ModeUnavailableError

pytestmark = pytest.mark.browser
REGISTERED = [i for i in ALL_TASKS if f"DynaCU-{i}-v0" in gym.registry]


def test_every_task_is_registered():
    assert REGISTERED == ALL_TASKS
    spec = gym.spec("DynaCU-H1-v0")
    assert spec.entry_point == "dynacu_gym.env:make_env"
    assert spec.max_episode_steps and spec.nondeterministic


@pytest.mark.parametrize("task_id", task_params(REGISTERED, sample=CHANNEL_SAMPLE))
def test_check_env(task_id):
    env = gym.make(f"DynaCU-{task_id}-v0")
    try:
        check_env(env.unwrapped)
    finally:
        env.close()


def test_check_env_with_the_keyframe_channel():
    # The checker steps with sampled actions; the wrapped observations must fit their spaces.
    env = gym.make("DynaCU-D1-v0", mode="aoi_visual", max_keyframes=3, keyframe_fps=10)
    try:
        check_env(env.unwrapped)  # the base env, as above ...
        obs, _ = env.reset(seed=0)  # ... and the wrapped spaces hold the wrapped observations
        for _ in range(3):
            assert env.observation_space.contains(obs), {
                k: v for k, v in obs.items() if not env.observation_space[k].contains(v)
            }
            obs, *_ = env.step({"type": "wait", "seconds": 2.0})
        assert obs["keyframes"].shape == (3, 720, 1280, 3)
        assert 0 < int(obs["keyframe_count"]) <= 3
    finally:
        env.close()


def test_channel_arguments_need_their_mode():
    with pytest.raises(ValueError, match="keyframes channel"):
        gym.make("DynaCU-D1-v0", mode="aoi_audio", max_keyframes=3)
    with pytest.raises(ValueError, match="max_keyframes"):
        gym.make("DynaCU-D1-v0", mode="aoi_visual", max_keyframes=0)
    with pytest.raises(ValueError, match="fps"):
        gym.make("DynaCU-D1-v0", mode="aoi_visual", keyframe_fps=100)


def test_unknown_mode_is_a_clear_error():
    with pytest.raises(ValueError, match="expected a mode in"):
        gym.make("DynaCU-H1-v0", mode="aoi_everything")


@pytest.mark.parametrize("mode", [m for m in dynacu_gym.MODES if m != "standard"])
def test_unbuilt_mode_says_so(mode):
    try:
        env = gym.make("DynaCU-H1-v0", mode=mode)
    except ModeUnavailableError as e:
        assert "does not provide yet" in str(e) and "standard" in str(e)
    else:  # the channel exists: the mode must then work
        env.close()


def test_unknown_id_is_a_clear_error():
    with pytest.raises(gym.error.Error, match="DynaCU-Z9"):
        gym.make("DynaCU-Z9-v0")


def test_render_rgb_array(make_env):
    env = make_env("H1", render_mode="rgb_array")
    obs, _ = env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (720, 1280, 3) and (frame == obs["screenshot"]).all()
    with pytest.raises(ValueError, match="render_mode"):
        make_env("H1", render_mode="human")
