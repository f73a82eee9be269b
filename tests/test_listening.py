"""A page that listens: speech written into the env's microphone is heard by the page, sent to
the task server, transcribed by Whisper, and decides the task. No typed fallback exists."""

from __future__ import annotations

import time

import pytest
from microphone import play_into_mic

from dynacu_gym.perception.tts import load_voice

pytestmark = [pytest.mark.browser, pytest.mark.audio]


@pytest.fixture(scope="module")
def voice():
    return load_voice()


def _say_into_mic(env, voice, text: str) -> None:
    """Play synthesised speech into this env's virtual microphone (as the speak channel will)."""
    play_into_mic(env, voice.synthesize(text).tobytes(), voice.sample_rate)


def _await_listening(env, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not env.evaluate_in_page("() => document.querySelector('#status.listening') !== null"):
        assert time.monotonic() < deadline, "the interview never opened its answer window"
        time.sleep(0.1)


def _await_result(env, timeout=20.0) -> str:
    deadline = time.monotonic() + timeout
    while (result := env.evaluate_in_page("() => window.getTaskResult()")) == "pending":
        assert time.monotonic() < deadline, "the page never decided"
        time.sleep(0.1)
    return result


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("The capital of Australia is Canberra.", "success"),
        ("I think it is Sydney.", "wrong_answer"),
    ],
)
def test_interview_page_hears_the_answer(make_env, voice, said, expected):
    env = make_env("H1")
    env.reset(seed=0)
    _await_listening(env)
    _say_into_mic(env, voice, said)
    assert _await_result(env) == expected
    heard = env.sandbox.server.heard
    assert (
        len(heard) == 1
        and heard[0].lower().rstrip(".").split()[-1] == said.lower().rstrip(".").split()[-1]
    )


def test_typing_does_not_answer_a_spoken_task(make_env):
    env = make_env("H1")
    env.reset(seed=0)
    _await_listening(env)
    env.step({"type": "click", "x": 460, "y": 350})
    env.step({"type": "type", "text": "Canberra"})
    _, reward, terminated, _, info = env.step({"type": "key", "key": "Enter"})
    assert (reward, terminated, info["task_result"]) == (0.0, False, "pending")
    assert env.sandbox.server.heard == []
