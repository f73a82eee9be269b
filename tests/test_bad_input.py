"""Bad input through the env: every malformed action is the agent's mistake, reported in a line,
with nothing done and the env going on; unknown modes and ids fail at construction, clearly."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import dynacu_gym  # noqa: F401 - registers the envs
from dynacu_gym import parse_action
from dynacu_gym.actions import KEY_VOCABULARY
from dynacu_gym.env import DynaCUEnv
from dynacu_gym.runtime.process import descendants

HUGE = 10**5000  # an int too long for str()
BIG_TEXT = "x" * 100_000  # 100 kB

# (action, what the error says): each field out of range and of the wrong type, huge values,
# unknown fields and key names, control characters.
BAD_ACTIONS = [
    ({}, "the action has no 'type'"),
    ({"type": 7}, "expected an action type"),
    ({"type": -1}, "expected an action type"),
    ({"type": 1.5}, "expected an action type"),
    ({"type": None}, "expected an action type"),
    ({"type": [0]}, "expected an action type"),
    ({"type": "fly"}, "expected an action type"),
    ({"type": HUGE}, "expected an action type"),
    ({"type": "click", "x": -1, "y": 10}, "off the screen"),
    ({"type": "click", "x": 1280, "y": 10}, "off the screen"),
    ({"type": "click", "x": 10, "y": 720}, "off the screen"),
    ({"type": "click", "x": HUGE, "y": 10}, "off the screen"),
    ({"type": "click", "x": "10", "y": 10}, "expected an integer for 'x'"),
    ({"type": "click", "x": 10.5, "y": 10}, "expected an integer for 'x'"),
    ({"type": "click", "x": 10, "y": None}, "expected an integer for 'y'"),
    ({"type": "click", "x": True, "y": 10}, "expected an integer for 'x'"),
    ({"type": "click", "x": np.array([1, 2]), "y": 10}, "expected an integer for 'x'"),
    ({"type": "click", "x": float("nan"), "y": 10}, "expected an integer for 'x'"),
    ({"type": "click", "x": BIG_TEXT, "y": 10}, "expected an integer for 'x'"),
    ({"type": "click", "x": 10}, "a click action needs 'x' and 'y'"),
    ({"type": "type", "text": BIG_TEXT}, "at most 4096"),
    ({"type": "type", "text": 5}, "expected a string for 'text'"),
    ({"type": "type", "text": b"bytes"}, "expected a string for 'text'"),
    ({"type": "type", "text": None}, "expected a string for 'text'"),
    ({"type": "type"}, "a type action needs 'text'"),
    ({"type": "speak", "text": BIG_TEXT}, "at most 4096"),
    ({"type": "speak", "text": "  "}, "speak needs some words"),
    ({"type": "type", "text": "a\x00b"}, "control character U+0000"),
    ({"type": "type", "text": "bell\x07"}, "control character U+0007"),
    ({"type": "type", "text": "esc\x1b"}, "control character U+001B"),
    ({"type": "type", "text": "enter\r"}, "control character U+000D"),
    ({"type": "type", "text": "del\x7f"}, "control character U+007F"),
    ({"type": "speak", "text": "hello\x00"}, "control character U+0000"),
    ({"type": "key", "key": "Hyper"}, "unknown key 'Hyper'"),
    ({"type": "key", "key": "Control+Foo"}, "unknown key 'Foo'"),
    ({"type": "key", "key": ""}, "expected a key such as 'Enter'"),
    ({"type": "key", "key": " Enter"}, "expected a key such as 'Enter'"),
    ({"type": "key", "key": BIG_TEXT}, "at most 64"),
    ({"type": "key", "key": len(KEY_VOCABULARY)}, "an index in 0.."),
    ({"type": "key", "key": -1}, "an index in 0.."),
    ({"type": "key", "key": HUGE}, "an index in 0.."),
    ({"type": "key", "key": 1.5}, "expected an integer for 'key'"),
    ({"type": "key", "key": None}, "expected an integer for 'key'"),
    ({"type": "scroll", "direction": "sideways"}, "scroll direction 'up' or 'down'"),
    ({"type": "scroll", "direction": 2}, "scroll direction 'up' or 'down', got 2"),
    ({"type": "scroll", "direction": None}, "expected an integer for 'direction'"),
    ({"type": "scroll", "amount": 0}, "scroll amount in 1..20"),
    ({"type": "scroll", "amount": 21}, "scroll amount in 1..20"),
    ({"type": "scroll", "amount": HUGE}, "scroll amount in 1..20"),
    ({"type": "scroll", "amount": "3"}, "expected an integer for 'amount'"),
    ({"type": "scroll", "amount": 2.5}, "expected an integer for 'amount'"),
    ({"type": "wait", "seconds": -1}, "wait seconds in [0, 30]"),
    ({"type": "wait", "seconds": 31}, "wait seconds in [0, 30]"),
    ({"type": "wait", "seconds": float("nan")}, "finite"),
    ({"type": "wait", "seconds": float("inf")}, "finite"),
    ({"type": "wait", "seconds": HUGE}, "finite"),
    ({"type": "wait", "seconds": "2"}, "expected a number of seconds"),
    ({"type": "wait", "seconds": None}, "expected a number of seconds"),
    ({"type": "done", "narration": BIG_TEXT}, "at most 2000"),
    ({"type": "done", "narration": 5}, "expected a string for 'narration'"),
    ({"type": "scroll", "directon": "up"}, "unknown field 'directon' in the action; did you mean"),
    ({"type": "click", "x": 1, "y": 2, "button": "right"}, "unknown field 'button'"),
    ({"type": "done", 3: 4}, "unknown field 3"),
    ("click 1 2", "expected an action dict"),
    (None, "expected an action dict"),
    (["click", 1, 2], "expected an action dict"),
]


def _page_state(env) -> dict:
    return env.evaluate_in_page(
        "() => ({probe: window.probe, value: document.getElementById('field').value,"
        " result: window.getTaskResult()})"
    )


@pytest.mark.browser
def test_every_bad_action_is_a_clear_mistake_and_nothing_happens(probe_env):
    env = probe_env
    env.reset(seed=0)
    env.step(parse_action("click 640 200"))  # the field has focus: a stray key would land there
    before = _page_state(env)
    for case, (raw, message) in enumerate(BAD_ACTIONS):
        obs, reward, terminated, truncated, info = env.step(raw)
        error = info["last_action_error"]
        assert message in error, (case, error)
        assert error.startswith("ActionError: ") and len(error) < 400, (case, error)
        assert (reward, terminated, truncated) == (0.0, False, False), case
        assert "infra_error" not in info, case
    assert _page_state(env) == before  # nothing was typed, pressed, clicked or scrolled
    assert env.observation_space.contains(obs)
    assert obs["record"].count("(invalid action)") == 10  # the last ten, each a short line
    assert len(obs["record"]) < 10_000
    # The env goes on: the next good actions act, and the episode is decided as usual.
    env.step(parse_action('type "the Blue Whale"'))
    _, reward, terminated, truncated, info = env.step(parse_action("key Enter"))
    assert (reward, terminated, truncated, info["task_result"]) == (1.0, True, False, "success")


@pytest.mark.browser
def test_text_in_other_scripts_is_typed_as_given(probe_env):
    env = probe_env
    env.reset(seed=0)
    env.step(parse_action("click 640 200"))
    text = "Grüße Привет مرحبا ελληνικά 日本語 😀\t!"
    obs, _, terminated, truncated, info = env.step({"type": "type", "text": text})
    assert info["last_action_error"] == "" and not terminated and not truncated
    assert env.evaluate_in_page("() => document.getElementById('field').value") == text
    # The record shows it in the observation's characters (others become U+FFFD).
    assert env.observation_space.contains(obs)
    assert 'type "Grüße Привет مرحبا ελληνικά \ufffd\ufffd\ufffd \ufffd\t!"' in obs["record"]


@pytest.mark.browser
@pytest.mark.audio
def test_speak_takes_any_script_and_refuses_what_cannot_be_said(make_env, probe_task):
    from dynacu_gym.wrappers.speech import Speech

    env = Speech(make_env(probe_task))
    try:
        env.reset(seed=0)
        for text in ("Привет, мир.", "日本語です。", "مرحبا 😀"):
            _, _, _, truncated, info = env.step({"type": "speak", "text": text})
            assert info["last_action_error"] == "" and not truncated, info.get("infra_error")
            assert info["speech"]["text"] == text
        for text, message in (
            ("hello \x00 there", "control character U+0000"),
            (BIG_TEXT, "at most 4096"),
        ):
            _, reward, terminated, truncated, info = env.step({"type": "speak", "text": text})
            assert message in info["last_action_error"]
            assert (reward, terminated, truncated) == (0.0, False, False)
            assert "infra_error" not in info and "speech" not in info
        _, _, _, truncated, info = env.step({"type": "speak", "text": "Hello there."})
        assert not truncated and info["speech"]["text"] == "Hello there."
    finally:
        env.close()


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        (("DynaCU-A1-v0",), {"mode": "aoi_everything"}, ValueError, "expected a mode in"),
        (("DynaCU-A1-v0",), {"mode": 5}, ValueError, "expected a mode in"),
        (("DynaCU-Z99-v0",), {}, gym.error.Error, "DynaCU-Z99"),
        (("DynaCU-A1-v0",), {"colour": "red"}, TypeError, "colour"),
        (("DynaCU-A1-v0",), {"clock": "sundial"}, ValueError, "expected clock in"),
    ],
)
def test_unknown_modes_and_ids_fail_at_make(args, kwargs, error, message):
    before = descendants()
    with pytest.raises(error, match=message):
        gym.make(*args, **kwargs)
    assert descendants() - before == set()  # nothing was started


def test_an_unknown_task_id_names_the_close_ones():
    with pytest.raises(ValueError, match="no task 'A99'"):
        DynaCUEnv("A99")
    with pytest.raises(TypeError, match="expected a task id or TaskSpec, got int"):
        DynaCUEnv(1)  # type: ignore[arg-type]
