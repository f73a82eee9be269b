"""The speak channel: the agent's words go through piper into the page's real microphone, and
a listening page decides the task on what Whisper heard. Nothing typed counts as speech."""

from __future__ import annotations

import base64
import io
import os
import signal
import time
import wave
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from microphone import play_into_mic

import dynacu_gym  # noqa: F401 - registers the envs
from dynacu_gym.env import DynaCUEnv
from dynacu_gym.modes import apply_mode
from dynacu_gym.perception.speech import phrases
from dynacu_gym.perception.tts import load_voice
from dynacu_gym.tasks import load_task
from dynacu_gym.wrappers.speech import Speech

FIXTURES = Path(__file__).parent / "fixtures" / "tasks" / "H"
PROBE = FIXTURES / "90-listen-probe"
OVER_AUDIO = FIXTURES / "91-answer-over-audio"


def test_phrases_cut_only_a_long_first_sentence_at_a_clause_break():
    assert phrases("  The capital is   Canberra. ") == ["The capital is Canberra."]
    # A break before the third word does not count, and without a break the sentence is whole:
    # cut inside a clause, "organic search had the | most sign-ups" was misheard.
    assert phrases("Well, I think the capital of Australia is Canberra. Thanks.") == [
        "Well, I think the capital of Australia is Canberra.",
        "Thanks.",
    ]
    assert phrases("I think organic search had the most sign-ups.") == [
        "I think organic search had the most sign-ups."
    ]
    assert phrases("I think, after a long day of travel, that it is Canberra. Yes.") == [
        "I think, after a long day of travel,",
        "that it is Canberra.",
        "Yes.",
    ]
    assert phrases("one two three four five six seven eight nine") == [
        "one two three four five six seven eight nine"
    ]
    assert phrases("   ") == []
    # A compound number loses its hyphen ("seventy-five" was heard "7 to 5"); other words not.
    assert phrases("It allows Seventy-five projects.") == ["It allows Seventy five projects."]
    assert phrases("A well-known sign-up.") == ["A well-known sign-up."]


@pytest.mark.audio
def test_the_voice_says_the_same_text_the_same_way():
    """A spoken answer is heard the same way in every episode: piper draws no noise."""
    voice = load_voice()
    first, again = (
        voice.synthesize("Wednesday had the fewest sign-ups."),
        voice.synthesize("Wednesday had the fewest sign-ups."),
    )
    assert len(first) > voice.sample_rate  # over a second of speech
    assert np.array_equal(first, again)
    # Two speaking rates are two takes, not one take resampled: the rate still applies.
    assert len(voice.synthesize("Wednesday had the fewest sign-ups.", rate=1.3)) < len(first)


def _until(env, predicate: str, timeout: float = 30.0, step_s: float = 0.5):
    """Wait in steps until a page expression holds (privileged read, for the test only)."""
    base = env.unwrapped
    deadline = time.monotonic() + timeout
    while not base.evaluate_in_page(f"() => Boolean({predicate})"):
        assert time.monotonic() < deadline, f"never: {predicate}"
        env.step({"type": "wait", "seconds": step_s})


def _finish(env, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while True:
        obs, reward, terminated, truncated, info = env.step({"type": "wait", "seconds": 0.5})
        assert not truncated, info.get("infra_error")
        if terminated:
            return reward, info
        assert time.monotonic() < deadline, "the page never decided"


@pytest.mark.browser
@pytest.mark.audio
@pytest.mark.parametrize(
    ("said", "expected"),
    [("The capital of Australia is Canberra.", "success"), ("It is Sydney.", "wrong_answer")],
)
def test_spoken_answer_decides_a_listening_page(said, expected):
    env = gym.make("DynaCU-H1-v0", mode="aoi_interactive")
    try:
        env.reset(seed=0)
        _until(env, "document.querySelector('#status.listening')")
        obs, _, terminated, _, info = env.step({"type": "speak", "text": said})
        speech = info["speech"]
        assert not terminated and obs["last_action_error"] == ""
        # The step returns once the speech is scheduled, before it has been said: on the
        # page's clock, not the wall's (the step's own synthesis and observation took 0.6 to
        # 1.1 s on two loaded cores, longer than "It is Sydney." takes to say).
        now = float(obs["elapsed"])
        assert speech["ends_at_exact"]
        assert now - 1.5 <= speech["starts_at"] <= now + 0.5 and now < speech["ends_at"]
        assert speech["ends_at"] - speech["starts_at"] == pytest.approx(speech["duration"], 0.01)
        assert 0.5 < speech["duration"] < 4.0
        assert f'speak "{said}"' in obs["record"]
        reward, info = _finish(env)
        heard = env.unwrapped.heard  # what the page's recogniser heard, as an episode line keeps it
    finally:
        env.close()
    assert info["task_result"] == expected and reward == (1.0 if expected == "success" else 0.0)
    assert len(heard) == 1 and said.rstrip(".").split()[-1].lower() in heard[0].lower()


@pytest.mark.slow  # by default, test_eval's null agent on H1 times out on the same silence
@pytest.mark.browser
@pytest.mark.audio
def test_silence_times_out():
    env = gym.make("DynaCU-H1-v0", mode="aoi_interactive")
    try:
        env.reset(seed=0)
        while True:
            obs, reward, terminated, truncated, info = env.step({"type": "wait", "seconds": 10.0})
            assert not truncated
            if terminated:
                break
            assert float(obs["elapsed"]) < 45.0
        heard = env.unwrapped.sandbox.server.heard
    finally:
        env.close()
    assert info["task_result"] == "timeout" and reward == 0.0 and heard == []


@pytest.mark.browser
@pytest.mark.audio
def test_page_hears_the_agent_while_it_plays_audio_itself():
    task = load_task(OVER_AUDIO)
    env = apply_mode(DynaCUEnv(task), "aoi_interactive")
    try:
        base = env.unwrapped
        env.reset(seed=0)
        env.step({"type": "wait", "seconds": 5.2 - base.elapsed})
        obs, _, _, _, info = env.step(
            {"type": "speak", "text": "The capital of Australia is Canberra."}
        )
        speech = info["speech"]
        reward, info = _finish(env)
        mic = base.evaluate_in_page("() => window.DynaCU.mic")
        started = base.evaluate_in_page("() => performance.now() - window.DynaCU.now() * 1000")
    finally:
        env.close()
    # The interviewer's second clip plays from 4.5 s to 11 s: the agent spoke inside it.
    clip = task.script[1]
    assert clip.t < speech["starts_at"] and speech["ends_at"] < clip.t + 6.5
    onset = (mic["log"][0]["onset"] - started) / 1000
    assert clip.t < onset < clip.t + 6.5
    assert info["task_result"] == "success" and reward == 1.0
    assert "canberra" in mic["heard"][0].lower()


@pytest.mark.browser
@pytest.mark.audio
def test_speeches_queue_and_reset_silences_the_voice():
    env = apply_mode(DynaCUEnv(load_task(PROBE)), "aoi_interactive")
    try:
        base = env.unwrapped
        env.reset(seed=0)
        _until(env, "document.querySelector('#state.listening')", step_s=0.2)
        _, _, _, _, first = env.step({"type": "speak", "text": "I saw a blue whale."})
        _, _, _, _, second = env.step({"type": "speak", "text": "It was near the harbour."})
        a, b = first["speech"], second["speech"]
        assert b["queued_behind"] == 1 and a["queued_behind"] == 0
        assert b["starts_at"] == pytest.approx(a["ends_at"], abs=0.01)  # back to back
        _until(env, "window.DynaCU.mic.heard.join(' ').toLowerCase().includes('harbo')", 15.0)
        heard = " ".join(base.evaluate_in_page("() => window.DynaCU.mic.heard")).lower()
        assert "whale" in heard and heard.index("whale") < heard.index("harbo")
        # A long speech cut off by reset never reaches the next episode's page.
        env.step({"type": "speak", "text": "Here is a long story about whales. " * 6})
        env.reset(seed=1)
        _until(env, "document.querySelector('#state.listening')", step_s=0.2)
        env.step({"type": "wait", "seconds": 3.0})
        mic = base.evaluate_in_page("() => window.DynaCU.mic")
    finally:
        env.close()
    assert mic["onsets"] == [] and mic["heard"] == []


@pytest.mark.browser
def test_speak_without_the_speak_channel_is_an_agent_mistake(probe_task):
    env = apply_mode(DynaCUEnv(probe_task), "aoi_visual")
    try:
        env.reset(seed=0)
        obs, _, terminated, truncated, info = env.step({"type": "speak", "text": "hello"})
    finally:
        env.close()
    assert "aoi_interactive" in obs["last_action_error"] and "speech" not in info
    assert not terminated and not truncated


@pytest.mark.browser
def test_page_microphones_have_no_echo_cancellation(probe_task):
    env = DynaCUEnv(probe_task)
    try:
        env.reset(seed=0)
        settings = env.evaluate_in_page(
            """async () => {
              // A page asking for processing gets a raw microphone all the same.
              const s = await navigator.mediaDevices.getUserMedia(
                {audio: {echoCancellation: true, noiseSuppression: true, autoGainControl: true}});
              const got = s.getAudioTracks()[0].getSettings();
              s.getTracks().forEach((t) => t.stop());
              return got;
            }"""
        )
    finally:
        env.close()
    assert settings["echoCancellation"] is False
    assert settings["noiseSuppression"] is False and settings["autoGainControl"] is False


# Keeps each audio upload the page sends to the recogniser, as base64 (test instrumentation).
KEEP_UPLOADS = """() => {
  window.__uploads = [];
  const fetch0 = window.fetch;
  window.fetch = async (url, init) => {
    if (String(url).endsWith("/api/listen")) {
      const bytes = new Uint8Array(await init.body.arrayBuffer());
      let s = "";
      for (let i = 0; i < bytes.length; i += 32768) {
        s += String.fromCharCode(...bytes.subarray(i, i + 32768));
      }
      window.__uploads.push(btoa(s));
    }
    return fetch0(url, init);
  };
}"""
# A busy page: its thread is taken 80 ms in every 120 ms (layout, scripts, screenshots).
BUSY_PAGE = """() => {
  setInterval(() => { const t = performance.now(); while (performance.now() - t < 80) {} }, 120);
}"""


def _listening_probe():
    """The listening probe page, listening, with its uploads kept (KEEP_UPLOADS)."""
    env = apply_mode(DynaCUEnv(load_task(PROBE)), "aoi_interactive")
    try:
        env.reset(seed=0)
        _until(env, "document.querySelector('#state.listening')", step_s=0.2)
        env.unwrapped.evaluate_in_page(KEEP_UPLOADS)
    except BaseException:
        env.close()
        raise
    return env


def _first_upload(env) -> tuple[np.ndarray, int]:
    """The first audio the page sent to the recogniser (KEEP_UPLOADS), as floats, and its rate."""
    _until(env, "window.__uploads.length > 0", 20.0, step_s=0.2)
    upload = base64.b64decode(env.unwrapped.evaluate_in_page("() => window.__uploads[0]"))
    with wave.open(io.BytesIO(upload)) as w:
        rate = w.getframerate()
        audio = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float64) / 32768
    return audio, rate


@pytest.mark.browser
@pytest.mark.audio
def test_a_busy_page_hears_every_sample_of_the_microphone():
    """A tone played into the microphone reaches the recogniser whole while the page is busy.

    Each half period of the tone must be as long as it was played: a block dropped or repeated
    by the page's recorder breaks that. A ScriptProcessor, which runs on the page's thread,
    broke about 20 here; an AudioWorklet, on Web Audio's clock, broke none on a quiet machine
    but lost up to a tenth of the tone with two other envs running.
    """
    env = _listening_probe()
    try:
        base = env.unwrapped
        base.evaluate_in_page(BUSY_PAGE)
        rate, hz, seconds = 22050, 440.0, 2.0
        t = np.arange(int(seconds * rate)) / rate
        tone = (0.3 * 32767 * np.sin(2 * np.pi * hz * t)).astype("<i2").tobytes()
        # A deep buffer: the player never runs dry, so any loss is the page's.
        play_into_mic(base, tone, rate, latency_ms=300)
        audio, got_rate = _first_upload(env)
    finally:
        env.close()
    loud = np.flatnonzero(np.abs(audio) > 0.1)
    heard = audio[loud[0] : loud[-1] + 1]
    crossings = np.flatnonzero(np.signbit(heard[1:]) != np.signbit(heard[:-1]))
    broken = np.abs(np.diff(crossings) - got_rate / hz / 2) > 2
    assert broken.sum() == 0, f"{broken.sum()} half periods of the tone broken"


@pytest.mark.browser
@pytest.mark.audio
def test_the_voice_has_no_hole_when_its_player_is_late():
    """The agent's voice reaches the page whole when its player is woken 80 ms late.

    A busy machine wakes the player late now and then. With a 20 ms buffer the voice ran dry
    about 25 times an episode with two other envs running, the page heard digital silence
    inside words, and Whisper heard "truck" as "track".
    """
    env = _listening_probe()
    try:
        base = env.unwrapped
        said = "The monthly fee is four thousand eight hundred dollars."
        _, _, _, _, info = env.step({"type": "speak", "text": said})
        speaker = env
        while not isinstance(speaker, Speech):
            speaker = speaker.env
        pid = speaker.output.pid
        time.sleep(
            max(0.0, base.episode_start + info["speech"]["starts_at"] + 0.3 - time.monotonic())
        )
        for _ in range(3):  # three stalls while it speaks
            os.kill(pid, signal.SIGSTOP)
            time.sleep(0.08)
            os.kill(pid, signal.SIGCONT)
            time.sleep(0.5)
        audio, rate = _first_upload(env)
    finally:
        env.close()
    loud = np.flatnonzero(np.abs(audio) > 0.02)
    silent = np.abs(audio[loud[0] : loud[-1] + 1]) < 1e-6
    # Runs of exact zeros: piper's own pauses have none longer than a fraction of a millisecond.
    edges = np.flatnonzero(np.diff(np.concatenate([[0], silent.astype(np.int8), [0]])))
    holes = (edges[1::2] - edges[::2]) / rate
    assert not (holes > 0.005).any(), f"holes in the voice (s): {holes[holes > 0.005].round(3)}"
