"""Observation modes: which perception channels wrap the base env.

| mode            | screenshot | keyframes | transcript | speak |
|-----------------|------------|-----------|------------|-------|
| standard        | yes        | -         | -          | -     |
| aoi_visual      | yes        | yes       | -          | -     |
| aoi_audio       | yes        | -         | yes        | -     |
| aoi_full        | yes        | yes       | yes        | -     |
| aoi_interactive | yes        | yes       | yes        | yes   |

The keyframe modes also keep the agent's narration (``narration``): notes on frames are what
carries them past the step that shows them. Keyframes wrap first, so the transcript can link
the keyframes that fall inside each sentence.
"""

from __future__ import annotations

import importlib

import gymnasium as gym

MODES = ("standard", "aoi_visual", "aoi_audio", "aoi_full", "aoi_interactive")
# How a page's time passes (see DynaCUEnv): the benchmark's wall clock, or paused between steps.
CLOCKS = ("realtime", "paused")

# The channels each mode stacks, in wrapping order.
MODE_CHANNELS: dict[str, tuple[str, ...]] = {
    "standard": (),
    "aoi_visual": ("keyframes", "narration"),
    "aoi_audio": ("transcript",),
    "aoi_full": ("keyframes", "narration", "transcript"),
    "aoi_interactive": ("keyframes", "narration", "transcript", "speech"),
}

# Channel name -> "module:Class" of its wrapper (imported when a mode needs it).
CHANNEL_WRAPPERS: dict[str, str] = {
    "keyframes": "dynacu_gym.wrappers.keyframes:KeyframeObservation",
    "narration": "dynacu_gym.wrappers.narration:NarrationMemory",
    "speech": "dynacu_gym.wrappers.speech:Speech",
    "transcript": "dynacu_gym.wrappers.transcript:AudioTranscript",
}


class ModeUnavailableError(ValueError):
    """A mode whose channels this version of dynacu-gym does not provide."""


def mode_available(mode: str) -> bool:
    """Whether this version provides every channel of ``mode`` (a known mode)."""
    return all(c in CHANNEL_WRAPPERS for c in MODE_CHANNELS[mode])


def check_mode(mode: str) -> None:
    """Raise if ``mode`` is unknown or needs a channel that is not built.

    Raises:
        ValueError: ``mode`` is not one of :data:`MODES`.
        ModeUnavailableError: the mode needs a channel this version lacks.
    """
    if mode not in MODES:
        raise ValueError(f"expected a mode in {MODES}, got {mode!r}")
    missing = [c for c in MODE_CHANNELS[mode] if c not in CHANNEL_WRAPPERS]
    if missing:
        available = [m for m in MODES if mode_available(m)]
        raise ModeUnavailableError(
            f"mode {mode!r} needs the {', '.join(missing)} channel(s), which this version of "
            f"dynacu-gym does not provide yet; available modes: {', '.join(available)}"
        )


def channel_wrapper(channel: str) -> type[gym.Wrapper]:
    """The wrapper class of a channel."""
    module, name = CHANNEL_WRAPPERS[channel].split(":")
    return getattr(importlib.import_module(module), name)


def apply_mode(env: gym.Env, mode: str, **channel_kwargs: dict) -> gym.Env:
    """Wrap the base env with the channels of ``mode``.

    Args:
        env: the base env.
        mode: one of :data:`MODES`.
        channel_kwargs: channel name -> keyword arguments for its wrapper, e.g.
            ``transcript={"model": "/models/whisper-small"}``.
    """
    check_mode(mode)
    for channel in MODE_CHANNELS[mode]:
        env = channel_wrapper(channel)(env, **channel_kwargs.get(channel, {}))
    return env
