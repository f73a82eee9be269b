"""A trace of one episode on disk: everything the agent observed and did, and what it heard.

Layout of ``DIR``::

    trace.jsonl          one line per step: action, agent info, reward, result, timings,
                         keyframe times, speech (when and what the agent said), errors; in
                         audio modes the Whisper calls (asr_calls) and the sentences the
                         step's record heard (transcript: start, end, text, stable, in
                         episode seconds); step 0 is the reset
    records/0003.txt     the observation record of each step
    screens/0003.png     the screenshot of each step
    keyframes/0003-1.png the keyframes each step returned (keyframe modes)
    speaker.wav          what the page played, from the env's speaker (16 kHz mono)
    voice.wav            what the agent said, from the microphone's sink (modes that speak)
    episode.mp4          with ``video_fps``: the screen recorded at that rate, its sound, and
                         the steps and actions drawn over it (:mod:`~.video`)
    episode.json         the episode's result line

The speaker audio is pulled from the env's speaker capture after every step, so the file holds
the whole episode however long it runs (the capture's own buffer keeps only 60 s); the voice
likewise from a recorder of the microphone's sink the trace runs itself. Both start at the
episode's start.
"""

from __future__ import annotations

import json
import wave
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from dynacu_gym.imaging import save_png
from dynacu_gym.runtime.audio import MIC_SINK
from dynacu_gym.runtime.process import InfraError
from dynacu_gym.runtime.recording import ScreenRecording
from dynacu_gym.runtime.speaker import RATE, SpeakerCapture

TRACE_FILE = "trace.jsonl"  # a trace's steps, one line each
SPEAKER_FILE = "speaker.wav"  # what the page played
VOICE_FILE = "voice.wav"  # what the agent said into the microphone (speaking modes)
SCREEN_FILE = "screen.mp4"  # the screen recording, while the episode runs (video_fps)
VIDEO_FILE = "episode.mp4"  # the episode as a video: screen, sound and steps (video_fps)
OUTCOME_FILE = "episode.json"  # a trace's outcome (not a run's episodes.jsonl: EPISODES_FILE)
EPISODE_FILE = OUTCOME_FILE  # its name before it was told apart from EPISODES_FILE
_INFO_KEYS = ("task_result", "last_action_error", "timings", "speech", "infra_error")


def _json_safe(value: Any) -> Any:
    """``value`` with numpy scalars and arrays turned into plain JSON values."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist() if value.size <= 64 else f"<array {value.shape} {value.dtype}>"
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


class _WavTrack:
    """A capture's samples since the episode began, appended to a WAV file after each step."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._wav: wave.Wave_write | None = None
        self._next_sample: int | None = None

    def pull(self, capture: SpeakerCapture | None, episode_start: float) -> None:
        if capture is None or not capture.alive():
            return
        total, origin = capture.position()
        if self._next_sample is None:
            if origin is None:
                return
            self._wav = wave.open(str(self.path), "wb")
            self._wav.setnchannels(1)
            self._wav.setsampwidth(2)
            self._wav.setframerate(RATE)
            # Start at the episode's start: silence first when the capture began after it.
            late = int((origin - episode_start) * RATE)
            if late > 0:
                self._wav.writeframes(bytes(2 * late))
            self._next_sample = max(0, -late)
        samples = capture.read(self._next_sample, total)
        self._next_sample = total
        assert self._wav is not None
        pcm = np.clip(samples, -1.0, 1.0) * 32767.0
        self._wav.writeframes(pcm.astype("<i2").tobytes())

    def close(self) -> None:
        if self._wav is not None:
            with suppress(OSError):
                self._wav.close()
            self._wav = None


class TraceRecorder:
    """Writes a trace while an episode runs; pass :meth:`on_step` to ``run_episode``.

    Args:
        env: the env (any wrapping); speaker capture is turned on for it.
        out: the trace directory (created; an existing trace in it is replaced).
    """

    def __init__(self, env: Any, out: str | Path, video_fps: float | None = None) -> None:
        self.env = env
        self.base = env.unwrapped
        self.out = Path(out)
        if video_fps is not None and self.base.clock != "realtime":
            raise ValueError(
                "a video records the screen as it runs: it needs the realtime clock, "
                f"not {self.base.clock!r}"
            )
        self.video_fps = video_fps
        self._screen: ScreenRecording | None = None
        self._screen_offset = 0.0
        self._lines: TextIO | None = None
        self._speaker = _WavTrack(self.out / SPEAKER_FILE)
        self._voice_track = _WavTrack(self.out / VOICE_FILE)
        self._voice: SpeakerCapture | None = None
        with self._writing():
            for sub in ("records", "screens", "keyframes"):
                (self.out / sub).mkdir(parents=True, exist_ok=True)
                for old in (self.out / sub).glob("*"):
                    old.unlink()
            for name in (SCREEN_FILE, VIDEO_FILE, VOICE_FILE):
                (self.out / name).unlink(missing_ok=True)
            self._lines = (self.out / TRACE_FILE).open("w", encoding="utf-8")
        self.base.enable_speaker_capture()

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Turn a failed write (a full disk, say) into a clear error, with the files closed.

        Raises:
            InfraError: a file of the trace could not be written.
        """
        try:
            yield
        except OSError as e:
            self.close()
            raise InfraError(f"could not write the trace in {self.out}: {e}") from e

    def on_step(
        self,
        step: int,
        action: Any,
        agent_info: dict[str, Any],
        obs: dict[str, Any],
        info: dict[str, Any],
    ) -> None:
        """Save one step (``run_episode`` calls this).

        Raises:
            InfraError: the step could not be written; the trace's files are closed.
        """
        with self._writing():
            assert self._lines is not None, "the trace is closed"
            name = f"{step:04d}"
            (self.out / "records" / f"{name}.txt").write_text(str(obs["record"]), encoding="utf-8")
            save_png(obs["screenshot"], self.out / "screens" / f"{name}.png")
            count = int(obs.get("keyframe_count", 0))
            for k in range(count):
                save_png(obs["keyframes"][k], self.out / "keyframes" / f"{name}-{k + 1}.png")
            line = {
                "step": step,
                "elapsed": round(float(obs["elapsed"]), 3),
                "action": _json_safe(action),
                "agent": _json_safe(agent_info),
                "keyframe_times": [
                    round(float(t), 3) for t in obs.get("keyframe_times", [])[:count]
                ],
                **{key: _json_safe(info[key]) for key in _INFO_KEYS if key in info},
            }
            if "audio" in info:  # the transcript channel: Whisper calls since the last step
                line["asr_calls"] = int(info["audio"].get("model_calls", 0))
                line["transcript"] = [
                    {key: seg[key] for key in ("start", "end", "text", "stable") if key in seg}
                    for seg in info["audio"].get("recent", [])
                ]
            self._lines.write(json.dumps(line) + "\n")
            self._lines.flush()
            self._pull_audio()
        self._start_screen()

    def _start_screen(self) -> None:
        sandbox = self.base.sandbox
        if self.video_fps is None or self._screen is not None or sandbox is None:
            return
        display = sandbox.display
        assert display.display is not None, "the sandbox runs, so its display does"
        self._screen = ScreenRecording(
            display.display, (display.width, display.height), self.out / SCREEN_FILE, self.video_fps
        )
        self._screen.start()
        assert self._screen.started_at is not None
        self._screen_offset = float(self.base.episode_time(self._screen.started_at))

    def _pull_audio(self) -> None:
        sandbox = self.base.sandbox
        if sandbox is None:
            return
        if self._voice is None and "speech" in self.base.channels:
            # The microphone's sink carries the agent's voice, as the page's recorder gets it.
            self._voice = SpeakerCapture(
                sandbox.audio, sandbox.workdir, device=f"{MIC_SINK}.monitor", name="parec-voice"
            )
            self._voice.start()
        self._speaker.pull(sandbox.capture, self.base.episode_start)
        self._voice_track.pull(self._voice, self.base.episode_start)

    def finish(self, result: dict[str, Any]) -> None:
        """Write the result line and close the files.

        Raises:
            InfraError: the result could not be written.
        """
        with self._writing():
            (self.out / OUTCOME_FILE).write_text(json.dumps(_json_safe(result), indent=2) + "\n")
        screen = self._screen
        self.close()
        if screen is not None:
            from dynacu_gym.harness.video import compose_video

            recording = self.out / SCREEN_FILE
            compose_video(self.out, recording, self._screen_offset, self.out / VIDEO_FILE)
            recording.unlink(missing_ok=True)

    def close(self) -> None:
        """Close the trace's files, keeping what reached the disk. Idempotent."""
        # What is still buffered may not fit on a full disk: closing must free the files anyway.
        if self._lines is not None:
            with suppress(OSError):
                self._lines.close()
            self._lines = None
        if self._screen is not None:
            self._screen.stop()
            self._screen = None
        self._speaker.close()
        self._voice_track.close()
        if self._voice is not None:
            self._voice.stop()
            self._voice = None
