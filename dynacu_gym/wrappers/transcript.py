"""The audio channel: the agent hears the page through real audio and Whisper.

page -> Chromium -> the env's PulseAudio speaker -> its monitor -> ``parec`` -> a 60 s ring
buffer -> energy gate -> faster-whisper -> two transcript layers in the observation:

- ``recent_audio``: what was said since the previous step, plus ``overlap_s`` before it so a
  sentence cut by the step boundary is whole, and any sentence committed since the previous step
  that ended before that (the transcript lags speech: a sentence committed late is news too);
  each sentence with its start and end time (and, with the keyframe channel on, the keyframes
  that fall inside it).
- ``audio_context``: the last ``context_s`` seconds, one line per sentence, ``(t s) text``.

Transcription runs in the background as audio arrives; a step only transcribes the utterance
still in progress. Silence never reaches the model.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from dynacu_gym.actions import TEXT_CHARSET, to_charset
from dynacu_gym.env import DynaCUEnv
from dynacu_gym.perception.asr import (
    Recognizer,
    StreamingTranscriber,
    TimedSegment,
    VoiceActivity,
    load_recognizer,
)
from dynacu_gym.record import render_record
from dynacu_gym.runtime.process import InfraError

PageTime = Callable[[float], float]  # a monotonic wall time -> page seconds (the env's clock)

MAX_RECENT = 8000  # characters of recent_audio
MAX_CONTEXT = 20000  # characters of audio_context


class AudioTranscript(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Adds ``recent_audio`` and ``audio_context`` (Text) to the observation.

    Args:
        env: a DynaCU env (any wrapper of one).
        model: Whisper model: None or ``"tiny.en"`` (bundled), a CTranslate2 folder, or a name
            in the local Hugging Face cache.
        device: ``"cpu"`` or ``"cuda"``.
        compute_type: CTranslate2 compute type (``"int8"`` on CPU).
        context_s: seconds the audio context covers.
        overlap_s: seconds of the previous interval repeated in ``recent_audio``.
        activity: how utterances are cut (energy threshold, end silence, ...).
    """

    def __init__(
        self,
        env: gym.Env,
        model: str | Path | None = None,
        device: str = "cpu",
        compute_type: str = "int8",
        context_s: float = 60.0,
        overlap_s: float = 3.5,
        activity: VoiceActivity | None = None,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, model=model, device=device, compute_type=compute_type,
            context_s=context_s, overlap_s=overlap_s, activity=activity,
        )  # fmt: skip
        gym.Wrapper.__init__(self, env)
        if not isinstance(env.unwrapped, DynaCUEnv):
            raise TypeError(
                f"AudioTranscript wraps a DynaCU env, got {type(env.unwrapped).__name__}"
            )
        self.base: DynaCUEnv = env.unwrapped
        self.recognizer: Recognizer = load_recognizer(model, device, compute_type)
        self.context_s = context_s
        self.overlap_s = overlap_s
        self.activity = activity or VoiceActivity()
        self.observation_space = spaces.Dict(
            {
                **env.observation_space.spaces,  # type: ignore[attr-defined]
                "recent_audio": spaces.Text(MAX_RECENT, min_length=0, charset=TEXT_CHARSET),
                "audio_context": spaces.Text(MAX_CONTEXT, min_length=0, charset=TEXT_CHARSET),
            }
        )
        self.base.enable_speaker_capture()
        self.base.needs_wall_clock("transcript")  # the page's sound plays on the wall clock
        self._transcriber: StreamingTranscriber | None = None
        self._last_step_t = 0.0  # page time of the previous observation
        self._shown: set[tuple[float, str]] = set()  # committed sentences a recent layer held
        self._model_seen = (0, 0.0)  # model calls and seconds reported so far

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset the env and start listening from the episode's start."""
        obs, info = self.env.reset(seed=seed, options=options)
        base = self.base
        if self._transcriber is not None:
            self._transcriber.stop()
        capture = base.sandbox.capture if base.sandbox is not None else None
        if capture is None:
            raise InfraError("the sandbox has no speaker capture")
        self._transcriber = StreamingTranscriber(capture, self.recognizer, self.activity)
        self._transcriber.start(from_time=base.episode_start)
        self._last_step_t = 0.0
        self._shown = set()
        self._model_seen = (0, 0.0)
        return self._observe(obs, info)

    def step(self, action: Any):
        """Step the env, then add what was heard."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        if truncated and "infra_error" in info:
            obs = {**obs, "recent_audio": "", "audio_context": ""}
            return obs, reward, terminated, truncated, info
        try:
            obs, info = self._observe(obs, info)
        except (InfraError, RuntimeError) as e:
            info = {**info, "infra_error": f"{type(e).__name__}: {e}"}
            obs = {**obs, "recent_audio": "", "audio_context": ""}
            truncated = True
        return obs, reward, terminated, truncated, info

    @property
    def transcriber(self) -> StreamingTranscriber:
        """The background transcriber of the current episode.

        Raises:
            gymnasium.error.ResetNeeded: before the first reset.
        """
        if self._transcriber is None:
            raise gym.error.ResetNeeded("call reset() first")
        return self._transcriber

    def close(self) -> None:
        """Stop listening, then close the env."""
        if self._transcriber is not None:
            self._transcriber.stop()
            self._transcriber = None
        super().close()

    def _observe(self, obs: dict[str, Any], info: dict[str, Any]):
        assert self._transcriber is not None
        base = self.base
        t = time.monotonic()
        heard = self._transcriber.snapshot()
        # Sentences are heard on the wall clock; the observation speaks in page time (the same
        # but for its start, unless time is paused between steps).
        page = base.episode_time
        now = page(time.monotonic())
        self._transcriber.prune(before=base.wall_time(now - self.context_s - 5.0))

        window_start = max(0.0, self._last_step_t - self.overlap_s)
        recent, self._shown = recent_sentences(heard, page, window_start, self._shown)
        context = [s for s in heard if page(s.start) >= now - self.context_s]
        keyframes = np.asarray(obs.get("keyframe_times", []), dtype=float)[
            : int(obs.get("keyframe_count", 0))
        ]
        recent_text = to_charset(
            _format_recent(recent, page, window_start, now, keyframes), MAX_RECENT
        )
        context_text = to_charset(_format_context(context, page), MAX_CONTEXT)
        self._last_step_t = now

        obs = {**obs, "recent_audio": recent_text, "audio_context": context_text}
        parts = info["record_parts"].with_section("audio_context", context_text)
        parts = parts.with_section("recent_audio", recent_text)
        obs["record"] = to_charset(render_record(parts), len(obs["record"]) + 100_000)
        timings = dict(info.get("timings", {}))
        timings["asr"] = time.monotonic() - t
        info = {
            **info,
            "record_parts": parts,
            "timings": timings,
            "audio": {
                "recent": [_as_dict(s, page) for s in recent],
                "context": [_as_dict(s, page) for s in context],
                # Model work since the previous observation, done in the background.
                "model_calls": self._transcriber.model_calls - self._model_seen[0],
                "model_seconds": self._transcriber.model_seconds - self._model_seen[1],
            },
        }
        self._model_seen = (self._transcriber.model_calls, self._transcriber.model_seconds)
        return obs, info


def recent_sentences(
    heard: list[TimedSegment],
    page: PageTime,
    window_start: float,
    shown: set[tuple[float, str]],
) -> tuple[list[TimedSegment], set[tuple[float, str]]]:
    """The recent layer's sentences, and the committed ones shown in a recent layer by now.

    A sentence is recent when it ends at ``window_start`` (page time) or later, or when it is
    committed and no recent layer has held it yet: the transcript lags speech, and a sentence
    committed more than the overlap after it ended (a long utterance, a busy machine) would
    otherwise reach only the audio context. ``shown`` holds (start, text) of committed
    sentences already shown; the set returned keeps only those still heard.
    """
    recent = [
        s
        for s in heard
        if page(s.end) >= window_start or (s.stable and (s.start, s.text) not in shown)
    ]
    committed = {(s.start, s.text) for s in heard if s.stable}
    now_shown = (shown | {(s.start, s.text) for s in recent if s.stable}) & committed
    return recent, now_shown


def _as_dict(segment: TimedSegment, page: PageTime) -> dict[str, Any]:
    return {
        "start": round(page(segment.start), 3),
        "end": round(page(segment.end), 3),
        "text": segment.text,
        "stable": segment.stable,
        "words": [
            {"start": round(page(w.start), 3), "end": round(page(w.end), 3), "text": w.text.strip()}
            for w in segment.words
        ],
    }


def _format_recent(
    segments: list[TimedSegment], page: PageTime, start: float, end: float, keyframes: np.ndarray
) -> str:
    """``start`` and ``end`` are page times; the segments' are wall times, ``page`` maps them."""
    lines = [
        f"[RECENT AUDIO — last {end - start:.1f} seconds ({start:.1f}s–{end:.1f}s), "
        "synced with visual]"
    ]
    if not segments:
        lines.append("  (no speech)")
    for seg in segments:
        a, b = page(seg.start), page(seg.end)
        more = "" if seg.stable else "  (still speaking)"
        if b < start:  # committed since the previous step, though said before its window
            more = "  (transcribed late)"
        lines.append(f'({a:.1f}s–{b:.1f}s) "{seg.text}"{more}')
        if keyframes.size:
            inside = [k + 1 for k, kt in enumerate(keyframes) if a <= kt <= b]
            if inside:
                names = ", ".join(f"keyframe {k}" for k in inside)
                count = f"{len(inside)} keyframe{'s' if len(inside) > 1 else ''}"
                lines.append(f"  ↳ During this audio: {count} captured ({names})")
    return "\n".join(lines)


def _format_context(segments: list[TimedSegment], page: PageTime) -> str:
    return "\n".join(f"({page(seg.start):.1f}s) {seg.text}" for seg in segments)
