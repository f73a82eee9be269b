"""Speaker capture: what the page plays, recorded from the env's own speaker monitor.

One persistent ``parec`` per env, started with the sandbox (a recorder connected later gets its
first data 1-2 s late, as an idle null sink renders in blocks), read by a thread into a ring
buffer of 16 kHz mono float32 stamped on the monotonic clock.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import numpy as np

from dynacu_gym.runtime.audio import SPEAKER_SINK, AudioServer
from dynacu_gym.runtime.process import ChildProcess, InfraError

RATE = 16000  # samples per second (what Whisper takes)
BYTES_PER_SAMPLE = 4  # float32


class SpeakerCapture:
    """A ring buffer of the last ``seconds`` of the speaker monitor.

    Sample ``i`` (counted since the recorder started) was played at
    ``origin + i / RATE`` on the monotonic clock. ``origin`` is the earliest start consistent
    with every chunk's arrival (arrival minus the audio received so far), so delivery latency
    does not skew the stamps.
    """

    def __init__(
        self,
        audio: AudioServer,
        workdir: Path,
        seconds: float = 60.0,
        device: str = f"{SPEAKER_SINK}.monitor",
        name: str = "parec",
    ):
        self.audio = audio
        self.workdir = workdir
        self.device = device  # any source: the microphone sink's monitor records the voice
        self.name = name  # of its log file, and in errors
        self.capacity = int(seconds * RATE)
        self._ring = np.zeros(self.capacity, dtype=np.float32)
        self._total = 0  # samples received since start
        self._origin: float | None = None
        self._lock = threading.Lock()
        self._proc: ChildProcess | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the recorder and its reader thread."""
        self._proc = ChildProcess(
            self.name,
            [
                "parec",
                f"--device={self.device}",
                f"--rate={RATE}",
                "--channels=1",
                "--format=float32le",
                "--raw",
                "--latency-msec=20",
            ],
            log_path=self.workdir / f"{self.name}.log",
            env=self.audio.client_env(),
            stdout=subprocess.PIPE,
        )
        with self._lock:
            self._total = 0
            self._origin = None
        self._thread = threading.Thread(target=self._read, name="dynacu-capture", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self._proc is not None and self._proc.popen.stdout is not None
        fd = self._proc.popen.stdout.fileno()
        rest = b""
        while True:
            try:
                data = os.read(fd, 8192)
            except OSError:
                return
            if not data:
                return
            arrived = time.monotonic()
            data = rest + data
            usable = len(data) - len(data) % BYTES_PER_SAMPLE
            rest = data[usable:]
            chunk = np.frombuffer(data[:usable], dtype=np.float32)
            with self._lock:
                start = self._total % self.capacity
                first = min(len(chunk), self.capacity - start)
                self._ring[start : start + first] = chunk[:first]
                if first < len(chunk):
                    self._ring[: len(chunk) - first] = chunk[first:]
                self._total += len(chunk)
                origin = arrived - self._total / RATE
                if self._origin is None or origin < self._origin:
                    self._origin = origin

    def alive(self) -> bool:
        """Whether the recorder runs."""
        return self._proc is not None and self._proc.alive()

    @property
    def pid(self) -> int | None:
        """Process id of the recorder."""
        return self._proc.pid if self._proc else None

    def position(self) -> tuple[int, float | None]:
        """(samples received so far, monotonic time of sample 0 or None before any data)."""
        with self._lock:
            return self._total, self._origin

    def read(self, first: int, last: int) -> np.ndarray:
        """Samples ``first`` (inclusive) to ``last`` (exclusive), clipped to what the buffer holds.

        Raises:
            InfraError: the recorder died.
        """
        if not self.alive():
            what = "speaker" if self.device == f"{SPEAKER_SINK}.monitor" else self.device
            raise InfraError(f"the {what} capture ({self.name}) died")
        with self._lock:
            last = min(last, self._total)
            first = max(first, self._total - self.capacity, 0)
            if last <= first:
                return np.zeros(0, dtype=np.float32)
            idx = np.arange(first, last) % self.capacity
            return self._ring[idx].copy()

    def stop(self) -> None:
        """Stop the recorder (SIGINT: parec flushes its tail) and join the reader. Idempotent."""
        if self._proc is not None:
            self._proc.stop(signal.SIGINT, timeout=2.0)
            self._proc = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
