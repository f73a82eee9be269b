"""A trace of one episode on disk: everything the agent observed and did, and what it heard.

Layout of ``DIR``::

    trace.jsonl          one line per step: action, agent info, reward, result, timings,
                         keyframe times, speech, errors, Whisper calls (asr_calls, audio
                         modes); step 0 is the reset
    records/0003.txt     the observation record of each step
    screens/0003.png     the screenshot of each step
    keyframes/0003-1.png the keyframes each step returned (keyframe modes)
    speaker.wav          what the page played, from the env's speaker (16 kHz mono)
    episode.json         the episode's result line

The speaker audio is pulled from the env's speaker capture after every step, so the file holds
the whole episode however long it runs (the capture's own buffer keeps only 60 s).
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
from dynacu_gym.runtime.process import InfraError
from dynacu_gym.runtime.speaker import RATE

TRACE_FILE = "trace.jsonl"  # a trace's steps, one line each
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


class TraceRecorder:
    """Writes a trace while an episode runs; pass :meth:`on_step` to ``run_episode``.

    Args:
        env: the env (any wrapping); speaker capture is turned on for it.
        out: the trace directory (created; an existing trace in it is replaced).
    """

    def __init__(self, env: Any, out: str | Path) -> None:
        self.env = env
        self.base = env.unwrapped
        self.out = Path(out)
        self._lines: TextIO | None = None
        self._wav: wave.Wave_write | None = None
        self._next_sample: int | None = None
        with self._writing():
            for sub in ("records", "screens", "keyframes"):
                (self.out / sub).mkdir(parents=True, exist_ok=True)
                for old in (self.out / sub).glob("*"):
                    old.unlink()
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
            self._lines.write(json.dumps(line) + "\n")
            self._lines.flush()
            self._pull_audio()

    def _pull_audio(self) -> None:
        sandbox = self.base.sandbox
        capture = sandbox.capture if sandbox is not None else None
        if capture is None or not capture.alive():
            return
        total, origin = capture.position()
        if self._next_sample is None:
            if origin is None:
                return
            # Start at the episode's start.
            self._next_sample = max(0, int((self.base.episode_start - origin) * RATE))
            self._wav = wave.open(str(self.out / "speaker.wav"), "wb")
            self._wav.setnchannels(1)
            self._wav.setsampwidth(2)
            self._wav.setframerate(RATE)
        samples = capture.read(self._next_sample, total)
        self._next_sample = total
        assert self._wav is not None
        pcm = np.clip(samples, -1.0, 1.0) * 32767.0
        self._wav.writeframes(pcm.astype("<i2").tobytes())

    def finish(self, result: dict[str, Any]) -> None:
        """Write the result line and close the files.

        Raises:
            InfraError: the result could not be written.
        """
        with self._writing():
            (self.out / OUTCOME_FILE).write_text(json.dumps(_json_safe(result), indent=2) + "\n")
        self.close()

    def close(self) -> None:
        """Close the trace's files, keeping what reached the disk. Idempotent."""
        # What is still buffered may not fit on a full disk: closing must free the files anyway.
        if self._lines is not None:
            with suppress(OSError):
                self._lines.close()
            self._lines = None
        if self._wav is not None:
            with suppress(OSError):
                self._wav.close()
            self._wav = None
