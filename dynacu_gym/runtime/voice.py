"""The voice's player: one persistent ``pacat`` that plays audio into the env's microphone.

It plays raw 16-bit mono audio into the env's mic sink, whose monitor is the microphone the
page records (``dynacu_mic``), on a play clock: a chunk plays when the one before it ends, or
now plus the device latency when the mic is idle. A writer thread pushes the scheduled audio
into ``pacat`` (the pipe holds ~1.5 s; the writer blocks, whoever schedules does not). What
is said, and how it is made, is :mod:`dynacu_gym.perception.speech`'s.
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from pathlib import Path

import numpy as np

from dynacu_gym.runtime.audio import MIC_SINK, AudioServer
from dynacu_gym.runtime.process import ChildProcess

DEVICE_LATENCY_S = 0.03  # from a write to its first sample in the mic, less piper's lead
# pacat's buffer. At 200 ms the server holds ~120 ms of the voice ahead, so a pacat that a busy
# machine wakes late leaves no gap. At 20 ms (15 ms held) the voice ran dry ~25 times an
# episode with two other envs running, and Whisper heard "truck" as "track". The server starts
# playing once 100 ms is held, which every phrase exceeds, so the voice starts no later.
PLAYBACK_LATENCY_MS = 200


class VoicePlayer:
    """Plays scheduled audio into one env's microphone, in order.

    Args:
        audio: the env's PulseAudio daemon.
        workdir: where ``pacat``'s log goes.
        sample_rate: the audio's samples per second.
    """

    def __init__(self, audio: AudioServer, workdir: Path, sample_rate: int) -> None:
        self.audio = audio
        self.workdir = workdir
        self.sample_rate = sample_rate
        self.error = ""  # why pacat stopped taking audio, once it has
        self._proc: ChildProcess | None = None
        self._chunks: queue.Queue[bytes | None] = queue.Queue()
        self._play_end = 0.0  # when the last scheduled sample plays
        self._lock = threading.Lock()
        self._writer: threading.Thread | None = None

    def start(self) -> None:
        """Start ``pacat`` and the thread that feeds it."""
        self._proc = ChildProcess(
            "pacat",
            [
                "pacat",
                "--playback",
                "--raw",
                "--format=s16le",
                f"--rate={self.sample_rate}",
                "--channels=1",
                f"--device={MIC_SINK}",
                f"--latency-msec={PLAYBACK_LATENCY_MS}",
                "--client-name=dynacu-voice",
            ],
            log_path=self.workdir / "pacat-voice.log",
            env=self.audio.client_env(),
            stdin=subprocess.PIPE,
        )
        self._writer = threading.Thread(target=self._write_loop, name="speech-write", daemon=True)
        self._writer.start()

    def alive(self) -> bool:
        """Whether ``pacat`` and its writer run."""
        return (
            self._proc is not None
            and self._proc.alive()
            and self._writer is not None
            and self._writer.is_alive()
        )

    @property
    def pid(self) -> int | None:
        """``pacat``'s process id, None when it is not running."""
        return self._proc.popen.pid if self._proc is not None else None

    def schedule(self, pcm: np.ndarray) -> tuple[float, float]:
        """Queue ``pcm`` (int16 samples) after what is queued; when it starts and ends playing.

        Both are monotonic seconds.
        """
        duration = len(pcm) / self.sample_rate
        with self._lock:
            start = max(self._play_end, time.monotonic() + DEVICE_LATENCY_S)
            self._play_end = start + duration
            end = self._play_end
        self._chunks.put(pcm.astype("<i2", copy=False).tobytes())
        return start, end

    def busy_until(self) -> float:
        """When everything scheduled so far has played (monotonic; in the past when idle)."""
        with self._lock:
            return self._play_end

    def stop(self) -> None:
        """Drop what is queued and stop ``pacat`` at once. Idempotent."""
        self._chunks.put(None)
        if self._proc is not None:
            self._proc.stop(timeout=2.0)
            self._proc = None
        if self._writer is not None:
            self._writer.join(timeout=5.0)
            self._writer = None

    def log_tail(self) -> str:
        """The end of ``pacat``'s log, to say why it stopped."""
        return self._proc.log_tail() if self._proc is not None else "not started"

    def _write_loop(self) -> None:
        while (chunk := self._chunks.get()) is not None:
            proc = self._proc
            if proc is None or proc.popen.stdin is None:
                return
            try:
                proc.popen.stdin.write(chunk)
                proc.popen.stdin.flush()
            except (BrokenPipeError, OSError, ValueError) as e:
                self.error = f"pacat stopped taking audio: {e}"
                return
