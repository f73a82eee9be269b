"""EnvConfig: every setting of the env checked against its unit and range, where it is given."""

import dataclasses
import math

import pytest

from dynacu_gym.config import MAX_ELAPSED_S, Bounds, EnvConfig
from dynacu_gym.env import DynaCUEnv


def test_the_defaults_are_the_benchmarks():
    config = EnvConfig()
    assert (config.clock, config.reward_mode, config.time_limit_s, config.variety) == (
        "realtime",
        "binary",
        None,
        False,
    )
    assert (config.ready_timeout_s, config.max_restarts, config.action_time_s) == (30.0, 3, 0.5)


def test_every_field_says_what_it_is():
    for f in dataclasses.fields(EnvConfig):
        assert f.metadata["doc"], f.name
        assert ("bounds" in f.metadata) != ("choices" in f.metadata), f.name
        if f.name.endswith("_s"):
            assert f.metadata["bounds"].unit == "seconds", f.name


@pytest.mark.parametrize(
    ("field", "value", "error", "message"),
    [
        ("ready_timeout_s", 0, ValueError, r"expected 0 < ready_timeout_s <= 3600 seconds, got 0"),
        ("ready_timeout_s", "30", TypeError, r"expected ready_timeout_s as seconds \(a number\)"),
        ("max_restarts", -1, ValueError, r"expected 0 <= max_restarts <= 100, got -1"),
        ("max_restarts", 1.5, TypeError, r"max_restarts as a count \(a whole number\), got 1.5"),
        ("max_restarts", True, TypeError, "max_restarts as a count"),
        ("action_time_s", 31, ValueError, r"expected 0 <= action_time_s <= 30 seconds, got 31"),
        ("action_time_s", math.nan, ValueError, "action_time_s"),
        ("time_limit_s", 0, ValueError, r"expected 0 < time_limit_s <= 86400 seconds, got 0"),
        ("time_limit_s", "60", TypeError, r"time_limit_s as seconds \(a number\) or None"),
        ("time_limit_s", math.inf, ValueError, "time_limit_s"),
        ("clock", "sundial", ValueError, r"expected clock in \('realtime', 'paused'\)"),
        ("reward_mode", "partial", ValueError, r"expected reward_mode in \('binary', 'checklist'"),
        ("variety", 1, TypeError, "expected variety as True or False, got 1"),
    ],
)
def test_a_bad_setting_names_itself_and_what_was_expected(field, value, error, message):
    with pytest.raises(error, match=message):
        EnvConfig(**{field: value})


def test_numbers_are_kept_as_floats_and_the_bounds_hold_at_their_ends():
    config = EnvConfig(time_limit_s=MAX_ELAPSED_S, action_time_s=0, ready_timeout_s=5)
    assert isinstance(config.time_limit_s, float) and config.time_limit_s == MAX_ELAPSED_S
    assert isinstance(config.action_time_s, float) and isinstance(config.ready_timeout_s, float)
    assert EnvConfig(max_restarts=0).max_restarts == 0
    assert EnvConfig(time_limit_s=None).time_limit_s is None
    with pytest.raises(TypeError, match="or None"):
        Bounds("seconds", 0, 1, optional=True).check("x", [])
    with pytest.raises(TypeError, match="expected x as seconds"):
        Bounds("seconds", 0, 1).check("x", None)


def test_the_env_checks_its_settings_before_anything_starts():
    # The task id is not even looked up: the settings fail first, and no browser starts.
    with pytest.raises(ValueError, match="ready_timeout_s"):
        DynaCUEnv("A1", ready_timeout_s=-1)
    with pytest.raises(TypeError, match="max_restarts"):
        DynaCUEnv("A1", max_restarts="3")  # type: ignore[arg-type]
    env = DynaCUEnv("A1", clock="paused", action_time_s=2)
    try:
        assert env.config == EnvConfig(clock="paused", action_time_s=2.0)
        assert (env.clock, env.action_time_s, env.page_clock.paused) == ("paused", 2.0, True)
        assert env.sandbox is None
    finally:
        env.close()
