"""Observation channels, and the modes: named sets of them that the benchmark reports on.

A channel is a wrapper over the base env that adds keys to the observation and a section to
the record. Any set of channels that makes sense can be asked for
(``gym.make(id, channels=["elements", "transcript"])``); the modes are the presets:

| mode                | elements | keyframes | narration | transcript | speech |
|---------------------|----------|-----------|-----------|------------|--------|
| standard            | -        | -         | -         | -          | -      |
| standard_structured | yes      | -         | -         | -          | -      |
| aoi_visual          | yes      | yes       | yes       | -          | -      |
| aoi_audio           | yes      | -         | -         | yes        | -      |
| aoi_full            | yes      | yes       | yes       | yes        | -      |
| aoi_interactive     | yes      | yes       | yes       | yes        | yes    |

Every mode has the screenshot. ``standard_structured`` is the format-only control: the element
list and the same record layout as the AOI modes, and no new perception. A set that is not a
preset is named by its channels joined with ``+`` (``elements+keyframes``), which every command
that takes a mode also takes.

Rules: ``narration`` needs nothing else (the agent's notes persist in the record with or
without keyframes); ``speech`` needs ``transcript``, since a page the agent talks to talks
back and the agent must hear it. Channels wrap in :data:`CHANNELS` order: the element list is
read first, in the same instant as the screenshot, and keyframes wrap before the transcript,
which links the keyframes that fall inside each sentence.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable

import gymnasium as gym

from dynacu_gym.clock import CLOCKS  # noqa: F401 - how a page's time passes; named here too
from dynacu_gym.errors import ModeUnavailableError

# Every channel, in wrapping order.
CHANNELS = ("elements", "keyframes", "narration", "transcript", "speech")

# The channels each mode stacks.
MODE_CHANNELS: dict[str, tuple[str, ...]] = {
    "standard": (),
    "standard_structured": ("elements",),
    "aoi_visual": ("elements", "keyframes", "narration"),
    "aoi_audio": ("elements", "transcript"),
    "aoi_full": ("elements", "keyframes", "narration", "transcript"),
    "aoi_interactive": ("elements", "keyframes", "narration", "transcript", "speech"),
}
MODES = tuple(MODE_CHANNELS)

# A channel -> the channels it cannot do without, and why.
REQUIRES: dict[str, tuple[str, str]] = {
    "speech": (
        "transcript",
        "a page the agent talks to talks back, and without the transcript the agent cannot hear it",
    ),
}

# Channel name -> "module:Class" of its wrapper (imported when a mode needs it).
CHANNEL_WRAPPERS: dict[str, str] = {
    "elements": "dynacu_gym.wrappers.elements:PageElements",
    "keyframes": "dynacu_gym.wrappers.keyframes:KeyframeObservation",
    "narration": "dynacu_gym.wrappers.narration:NarrationMemory",
    "speech": "dynacu_gym.wrappers.speech:Speech",
    "transcript": "dynacu_gym.wrappers.transcript:AudioTranscript",
}


def check_channels(channels: Iterable[str]) -> tuple[str, ...]:
    """Check a set of channels; return it in wrapping order.

    Raises:
        ValueError: a name that is no channel (with the close match), a channel given twice,
            or a set that lacks what one of its channels needs.
    """
    if isinstance(channels, str):
        raise TypeError(f"expected channels as a list of names, got the string {channels!r}")
    names = list(channels)
    for name in names:
        if name not in CHANNELS:
            close = difflib.get_close_matches(str(name), CHANNELS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"unknown channel {name!r}{hint} (channels: {', '.join(CHANNELS)})")
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise ValueError(f"channel {twice!r} is given twice")
    for name in names:
        if name in REQUIRES:
            needed, why = REQUIRES[name]
            if needed not in names:
                raise ValueError(f"the {name} channel needs the {needed} channel: {why}")
    return tuple(c for c in CHANNELS if c in names)


def mode_name(channels: Iterable[str]) -> str:
    """The name of a channel set: its preset's, or its channels joined with ``+``."""
    ordered = check_channels(channels)
    for mode, preset in MODE_CHANNELS.items():
        if preset == ordered:
            return mode
    return "+".join(ordered)


def mode_channels(mode: str) -> tuple[str, ...]:
    """The channels of ``mode``: a preset's name, or channels joined with ``+``.

    Raises:
        ValueError: neither a preset nor a valid set of channels.
    """
    if not isinstance(mode, str):
        raise ValueError(
            f"expected a mode in {MODES} or channels joined with '+', got {mode!r} "
            f"({type(mode).__name__})"
        )
    if mode in MODE_CHANNELS:
        return MODE_CHANNELS[mode]
    if "+" in mode or mode in CHANNELS:
        return check_channels(part.strip() for part in mode.split("+"))
    close = difflib.get_close_matches(mode, [*MODES, *CHANNELS], n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ValueError(
        f"expected a mode in {MODES} or channels joined with '+' (from {', '.join(CHANNELS)}), "
        f"got {mode!r}{hint}"
    )


def mode_available(mode: str) -> bool:
    """Whether this version provides every channel of ``mode``."""
    return all(c in CHANNEL_WRAPPERS for c in mode_channels(mode))


def check_mode(mode: str) -> str:
    """Raise if ``mode`` is unknown or needs a channel that is not built; return its name.

    The name is the canonical one: ``"elements+keyframes+narration+transcript"`` is
    ``"aoi_full"``.

    Raises:
        ValueError: ``mode`` is neither a preset nor a valid channel set.
        ModeUnavailableError: the mode needs a channel this version lacks.
    """
    channels = mode_channels(mode)
    missing = [c for c in channels if c not in CHANNEL_WRAPPERS]
    if missing:
        available = [m for m in MODES if mode_available(m)]
        raise ModeUnavailableError(
            f"mode {mode!r} needs the {', '.join(missing)} channel(s), which this version of "
            f"dynacu-gym does not provide yet; available modes: {', '.join(available)}"
        )
    return mode_name(channels)


def channel_wrapper(channel: str) -> type[gym.Wrapper]:
    """The wrapper class of a channel."""
    module, name = CHANNEL_WRAPPERS[channel].split(":")
    return getattr(importlib.import_module(module), name)


def apply_channels(env: gym.Env, channels: Iterable[str], **channel_kwargs: dict) -> gym.Env:
    """Wrap the base env with ``channels`` (checked, in wrapping order).

    The base env's ``channels`` and ``mode`` say what it runs with (``info`` carries them).

    Args:
        env: the base env.
        channels: channel names, see :data:`CHANNELS`.
        channel_kwargs: channel name -> keyword arguments for its wrapper, e.g.
            ``transcript={"model": "/models/whisper-small"}``.
    """
    ordered = check_channels(channels)
    base = env.unwrapped
    base.channels = ordered  # type: ignore[attr-defined]
    for channel in ordered:
        env = channel_wrapper(channel)(env, **channel_kwargs.get(channel, {}))
    return env


def apply_mode(env: gym.Env, mode: str, **channel_kwargs: dict) -> gym.Env:
    """Wrap the base env with the channels of ``mode`` (a preset or ``a+b`` channels).

    Args:
        env: the base env.
        mode: one of :data:`MODES`, or channels joined with ``+``.
        channel_kwargs: channel name -> keyword arguments for its wrapper.
    """
    check_mode(mode)
    return apply_channels(env, mode_channels(mode), **channel_kwargs)
