"""The agent's voice: text -> piper -> the env's virtual microphone, in real time.

One persistent ``pacat`` per env plays raw 16-bit mono audio into the env's mic sink, whose
monitor is the microphone the page records (``dynacu_mic``). Two threads feed it:

- the **synthesiser** turns each queued text into audio phrase by phrase (a long first sentence
  is cut at its first clause, so the first words are on their way while the rest is made) and
  schedules every chunk on a play clock: a chunk plays when the one before it ends, or now
  plus the device latency when the mic is idle;
- the **writer** pushes scheduled audio into ``pacat`` (the pipe holds ~1.5 s; the writer
  blocks, the synthesiser does not).

Piper makes audio several times faster than real time, so once the first phrase plays, the rest
is always ready before it is due and speech has no gaps. Each :class:`Utterance` knows when it
starts, and when it ends as soon as its last phrase is made.
"""

from __future__ import annotations

import queue
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dynacu_gym.perception.tts import Voice
from dynacu_gym.runtime.audio import MIC_SINK, AudioServer
from dynacu_gym.runtime.process import ChildProcess, InfraError

DEVICE_LATENCY_S = 0.03  # from a write to its first sample in the mic, less piper's lead
# pacat's buffer. At 200 ms the server holds ~120 ms of the voice ahead, so a pacat that a busy
# machine wakes late leaves no gap. At 20 ms (15 ms held) the voice ran dry ~25 times an
# episode with two other envs running, and Whisper heard "truck" as "track". The server starts
# playing once 100 ms is held, which every phrase exceeds, so the voice starts no later.
PLAYBACK_LATENCY_MS = 200
FIRST_PHRASE_WORDS = 6  # a first sentence longer than this is cut at a clause (or word) break
CHARS_PER_SECOND = 14.0  # speaking rate before any utterance has been timed (joe-medium: ~14)


@dataclass
class Utterance:
    """One ``speak``: its text and when it plays (monotonic seconds).

    Attributes:
        text: what is said.
        queued_at: when ``say`` accepted it.
        starts_at: when its first sample plays (set when its first phrase is made).
        ends_at: when its last sample plays (set when its last phrase is made).
        error: why it could not be said, if it could not.
    """

    text: str
    queued_at: float
    starts_at: float | None = None
    ends_at: float | None = None
    error: str = ""
    samples: int = 0
    scheduled: threading.Event = field(default_factory=threading.Event, repr=False)


def phrases(text: str, first_words: int = FIRST_PHRASE_WORDS) -> list[str]:
    """Split ``text`` into the pieces synthesised one after another.

    Sentences stay whole (their intonation depends on it), except the first: if it is longer
    than ``first_words`` words it is cut at its first clause break (a comma, semicolon, colon
    or dash) after at least three words, else after ``first_words`` words, so its first words
    can play while the rest is synthesised.
    """
    text = " ".join(text.split())
    if not text:
        return []
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if s]
    first, rest = sentences[0], sentences[1:]
    words = first.split(" ")
    if len(words) > first_words:
        cut = next(
            (i + 1 for i, w in enumerate(words[: 2 * first_words]) if i >= 2 and w[-1] in ",;:—-"),
            first_words,
        )
        if cut < len(words):
            return [" ".join(words[:cut]), " ".join(words[cut:]), *rest]
    return [first, *rest]


class SpeechOutput:
    """Says texts into one env's microphone, in order, without blocking the caller.

    Args:
        voice: a loaded piper voice.
        audio: the env's PulseAudio daemon.
        workdir: where ``pacat``'s log goes.
        rate: speaking rate (1.0: the voice's own).
    """

    def __init__(self, voice: Voice, audio: AudioServer, workdir: Path, rate: float = 1.0):
        if not 0.5 <= rate <= 2.0:
            raise ValueError(f"expected a speaking rate in [0.5, 2.0], got {rate!r}")
        self.voice = voice
        self.audio = audio
        self.workdir = workdir
        self.rate = rate
        self.chars_per_second = CHARS_PER_SECOND * rate
        self._proc: ChildProcess | None = None
        self._texts: queue.Queue[Utterance | None] = queue.Queue()
        self._chunks: queue.Queue[bytes | None] = queue.Queue()
        self._play_end = 0.0  # when the last scheduled sample plays
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._pending: list[Utterance] = []
        self._error: str = ""
        self._stopping = threading.Event()

    def start(self) -> None:
        """Start ``pacat`` and the threads that feed it."""
        self._proc = ChildProcess(
            "pacat",
            [
                "pacat",
                "--playback",
                "--raw",
                "--format=s16le",
                f"--rate={self.voice.sample_rate}",
                "--channels=1",
                f"--device={MIC_SINK}",
                f"--latency-msec={PLAYBACK_LATENCY_MS}",
                "--client-name=dynacu-voice",
            ],
            log_path=self.workdir / "pacat-voice.log",
            env=self.audio.client_env(),
            stdin=subprocess.PIPE,
        )
        self._threads = [
            threading.Thread(target=self._synthesise_loop, name="speech-synth", daemon=True),
            threading.Thread(target=self._write_loop, name="speech-write", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def alive(self) -> bool:
        """Whether ``pacat`` and both threads run."""
        return (
            self._proc is not None
            and self._proc.alive()
            and all(t.is_alive() for t in self._threads)
        )

    @property
    def pid(self) -> int | None:
        """The player's (``pacat``'s) process id, None when it is not running."""
        return self._proc.popen.pid if self._proc is not None else None

    def say(self, text: str) -> Utterance:
        """Queue ``text``; it plays after whatever is queued before it.

        Raises:
            InfraError: the output is not running (``pacat`` died).
        """
        if self._error or not self.alive():
            raise InfraError(f"the speech output is not running: {self._error or self._log()}")
        utterance = Utterance(text=text, queued_at=time.monotonic())
        with self._lock:
            self._pending.append(utterance)
        self._texts.put(utterance)
        return utterance

    def busy_until(self) -> float:
        """When everything said so far has played (monotonic; in the past when idle)."""
        with self._lock:
            return self._play_end

    def queued(self) -> int:
        """Utterances said but not finished playing."""
        now = time.monotonic()
        with self._lock:
            self._pending = [u for u in self._pending if u.ends_at is None or u.ends_at > now]
            return len(self._pending)

    def estimate_end(self, utterance: Utterance) -> float:
        """When ``utterance`` ends: exact once scheduled, else from its length and the rate."""
        if utterance.ends_at is not None:
            return utterance.ends_at
        start = utterance.starts_at or max(self.busy_until(), time.monotonic() + 0.2)
        return start + len(utterance.text) / self.chars_per_second

    def stop(self) -> None:
        """Stop talking at once (queued speech is dropped) and stop ``pacat``. Idempotent."""
        self._stopping.set()
        self._texts.put(None)
        self._chunks.put(None)
        if self._proc is not None:
            self._proc.stop(timeout=2.0)
            self._proc = None
        for thread in self._threads:
            thread.join(timeout=5.0)
        self._threads = []

    # ---- threads ---------------------------------------------------------------------------

    def _synthesise_loop(self) -> None:
        while (utterance := self._texts.get()) is not None:
            try:
                for phrase in phrases(utterance.text):
                    for pcm in self.voice.stream(phrase, self.rate):
                        if self._stopping.is_set():
                            return
                        self._schedule(utterance, pcm)
                if utterance.starts_at is None:  # nothing to say (only punctuation)
                    utterance.starts_at = utterance.ends_at = time.monotonic()
                elif utterance.samples:
                    spoken = utterance.ends_at - utterance.starts_at  # type: ignore[operator]
                    if spoken > 0.5:
                        self.chars_per_second = len(utterance.text) / spoken
            except Exception as e:  # noqa: BLE001 - a voice failure is reported, not raised here
                utterance.error = f"{type(e).__name__}: {e}"
                utterance.starts_at = utterance.starts_at or time.monotonic()
                utterance.ends_at = utterance.ends_at or utterance.starts_at
            finally:
                utterance.scheduled.set()

    def _schedule(self, utterance: Utterance, pcm: np.ndarray) -> None:
        duration = len(pcm) / self.voice.sample_rate
        with self._lock:
            start = max(self._play_end, time.monotonic() + DEVICE_LATENCY_S)
            self._play_end = start + duration
            if utterance.starts_at is None:
                utterance.starts_at = start
            utterance.ends_at = self._play_end
            utterance.samples += len(pcm)
        self._chunks.put(pcm.astype("<i2", copy=False).tobytes())

    def _write_loop(self) -> None:
        while (chunk := self._chunks.get()) is not None:
            proc = self._proc
            if proc is None or proc.popen.stdin is None:
                return
            try:
                proc.popen.stdin.write(chunk)
                proc.popen.stdin.flush()
            except (BrokenPipeError, OSError, ValueError) as e:
                self._error = f"pacat stopped taking audio: {e}"
                return

    def _log(self) -> str:
        return self._proc.log_tail() if self._proc is not None else "not started"
