"""Channel sets and the presets: names, rules and the errors for sets that make no sense."""

from __future__ import annotations

import gymnasium as gym
import pytest

import dynacu_gym  # noqa: F401
from dynacu_gym.modes import (
    CHANNELS,
    MODE_CHANNELS,
    MODES,
    check_channels,
    check_mode,
    mode_channels,
    mode_name,
)


def test_the_presets_and_their_channels():
    assert MODES == (
        "standard",
        "standard_structured",
        "aoi_visual",
        "aoi_audio",
        "aoi_full",
        "aoi_interactive",
    )
    assert MODE_CHANNELS["standard"] == ()
    assert MODE_CHANNELS["standard_structured"] == ("elements",)
    # Following the reference interface, every AOI mode lists the page's elements.
    assert all("elements" in MODE_CHANNELS[m] for m in MODES if m.startswith("aoi_"))
    assert MODE_CHANNELS["aoi_full"] == ("elements", "keyframes", "narration", "transcript")


@pytest.mark.parametrize(
    ("channels", "name"),
    [
        ([], "standard"),
        (["elements"], "standard_structured"),
        (["transcript", "narration", "keyframes", "elements"], "aoi_full"),
        (["keyframes"], "keyframes"),  # keyframes without narration: the paper's ablation
        (["narration"], "narration"),  # narration needs nothing else
        (["transcript", "keyframes"], "keyframes+transcript"),
        (["elements", "transcript", "speech"], "elements+transcript+speech"),
    ],
)
def test_a_set_is_named_by_its_preset_or_its_channels(channels, name):
    assert mode_name(channels) == name
    assert mode_channels(name) == check_channels(channels)
    assert check_mode(name) == name


def test_a_set_given_in_another_order_is_the_same_mode():
    assert check_mode("transcript+elements+narration+keyframes") == "aoi_full"
    assert check_channels(["speech", "transcript"]) == ("transcript", "speech")


@pytest.mark.parametrize(
    ("channels", "message"),
    [
        (["keyframe"], "unknown channel 'keyframe'; did you mean 'keyframes'?"),
        (["elements", "elements"], "channel 'elements' is given twice"),
        (["speech"], "the speech channel needs the transcript channel"),
        (["elements", "keyframes", "speech"], "without the transcript the agent cannot hear"),
    ],
)
def test_impossible_sets_say_why(channels, message):
    with pytest.raises(ValueError, match=message):
        check_channels(channels)


def test_channels_as_one_string_is_refused():
    with pytest.raises(TypeError, match="a list of names"):
        check_channels("elements")


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("aoi_fll", "did you mean 'aoi_full'"),
        ("standard_structure", "did you mean 'standard_structured'"),
        ("elements+voice", "unknown channel 'voice'"),
        ("speech+elements", "needs the transcript channel"),
    ],
)
def test_bad_mode_names_say_what_was_expected(mode, message):
    with pytest.raises(ValueError, match=message):
        check_mode(mode)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "aoi_full", "channels": ["elements"]}, "expected mode or channels, not both"),
        ({"channels": ["speech"]}, "needs the transcript channel"),
        ({"channels": ["elemnts"]}, "did you mean 'elements'"),
        ({"channels": ["elements"], "max_keyframes": 3}, "need the keyframes channel"),
        ({"channels": ["keyframes"], "narration_chars": 500}, "needs the narration channel"),
        ({"mode": "standard", "max_elements": 10}, "max_elements needs the elements channel"),
        ({"channels": ["narration"], "asr_model": "x"}, "need the transcript channel"),
    ],
)
def test_make_refuses_what_cannot_run(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gym.make("DynaCU-S1-v0", **kwargs)


def test_every_channel_has_a_wrapper_and_every_preset_is_valid():
    from dynacu_gym.modes import CHANNEL_WRAPPERS, channel_wrapper

    assert set(CHANNEL_WRAPPERS) == set(CHANNELS)
    for channel in CHANNELS:
        assert issubclass(channel_wrapper(channel), gym.Wrapper)
    for mode, channels in MODE_CHANNELS.items():
        assert check_channels(channels) == channels, mode
