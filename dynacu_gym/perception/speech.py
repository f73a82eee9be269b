"""The agent's voice: text -> piper -> the env's virtual microphone, in real time.

The player (:class:`dynacu_gym.runtime.voice.VoicePlayer`, one persistent ``pacat`` per env)
plays into the env's mic sink, whose monitor is the microphone the page records. A
**synthesiser** thread turns each queued text into audio phrase by phrase (a long first
sentence is cut at its first clause, so the first words are on their way while the rest is
made) and hands every chunk to the player's play clock.

Piper makes audio several times faster than real time, so once the first phrase plays, the rest
is always ready before it is due and speech has no gaps. Each :class:`Utterance` knows when it
starts, and when it ends as soon as its last phrase is made.
"""

from __future__ import annotations

import queue
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dynacu_gym.perception.tts import Voice
from dynacu_gym.runtime.audio import AudioServer
from dynacu_gym.runtime.process import InfraError
from dynacu_gym.runtime.voice import (  # noqa: F401 - named here, where they were
    DEVICE_LATENCY_S,
    PLAYBACK_LATENCY_MS,
    VoicePlayer,
)

FIRST_PHRASE_WORDS = 6  # a first sentence longer than this is cut at a clause break, if any
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


# "seventy-five": piper says the hyphen, and Whisper heard "7 to 5".
_COMPOUND_NUMBER = re.compile(
    r"\b(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)-"
    r"(one|two|three|four|five|six|seven|eight|nine)\b",
    re.IGNORECASE,
)


def phrases(text: str, first_words: int = FIRST_PHRASE_WORDS) -> list[str]:
    """Split ``text`` into the pieces synthesised one after another.

    Sentences stay whole (their intonation depends on it), except a first sentence longer than
    ``first_words`` words with a clause break (a comma, semicolon, colon or dash) after at
    least three of its first ``2 * first_words`` words: it is cut there, so its first words can
    play while the rest is synthesised. A cut between two words of one clause ("I think organic
    search had the | most sign-ups.") was heard as "organics are had that most sign ups"; whole,
    the sentence was heard right, and piper makes it in a few hundredths of a second more.

    A compound number is said without its hyphen: "seventy-five projects", said with it, was
    heard as "7 to 5 projects" (of the 72 compounds from twenty-one to ninety-nine in three
    sentences, through the voice and Whisper: 4 misheard with the hyphen, 1 without).
    """
    text = _COMPOUND_NUMBER.sub(r"\1 \2", " ".join(text.split()))
    if not text:
        return []
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if s]
    first, rest = sentences[0], sentences[1:]
    words = first.split(" ")
    if len(words) > first_words:
        cut = next(
            (i + 1 for i, w in enumerate(words[: 2 * first_words]) if i >= 2 and w[-1] in ",;:—-"),
            None,
        )
        if cut is not None and cut < len(words):
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
        self.rate = rate
        self.chars_per_second = CHARS_PER_SECOND * rate
        self.player = VoicePlayer(audio, workdir, voice.sample_rate)
        self._texts: queue.Queue[Utterance | None] = queue.Queue()
        self._lock = threading.Lock()
        self._synthesiser: threading.Thread | None = None
        self._pending: list[Utterance] = []
        self._stopping = threading.Event()

    def start(self) -> None:
        """Start the player and the synthesiser that feeds it."""
        self.player.start()
        self._synthesiser = threading.Thread(
            target=self._synthesise_loop, name="speech-synth", daemon=True
        )
        self._synthesiser.start()

    def alive(self) -> bool:
        """Whether the player and the synthesiser run."""
        synthesiser = self._synthesiser
        return self.player.alive() and synthesiser is not None and synthesiser.is_alive()

    @property
    def pid(self) -> int | None:
        """The player's (``pacat``'s) process id, None when it is not running."""
        return self.player.pid

    def say(self, text: str) -> Utterance:
        """Queue ``text``; it plays after whatever is queued before it.

        Raises:
            InfraError: the output is not running (``pacat`` died).
        """
        if self.player.error or not self.alive():
            reason = self.player.error or self.player.log_tail()
            raise InfraError(f"the speech output is not running: {reason}")
        utterance = Utterance(text=text, queued_at=time.monotonic())
        with self._lock:
            self._pending.append(utterance)
        self._texts.put(utterance)
        return utterance

    def busy_until(self) -> float:
        """When everything said so far has played (monotonic; in the past when idle)."""
        return self.player.busy_until()

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
        self.player.stop()
        if self._synthesiser is not None:
            self._synthesiser.join(timeout=5.0)
            self._synthesiser = None

    # ---- the synthesiser -------------------------------------------------------------------

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
        start, end = self.player.schedule(pcm)
        with self._lock:
            if utterance.starts_at is None:
                utterance.starts_at = start
            utterance.ends_at = end
            utterance.samples += len(pcm)
