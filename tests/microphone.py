"""Playing audio into an env's virtual microphone, as a person speaking to the page would."""

from __future__ import annotations

import subprocess

from dynacu_gym.env import DynaCUEnv
from dynacu_gym.runtime.audio import MIC_SINK


def play_into_mic(env: DynaCUEnv, pcm: bytes, rate: int, latency_ms: int | None = None) -> None:
    """Play 16-bit mono ``pcm`` into ``env``'s microphone, to the end.

    ``latency_ms``: the player's buffer (pacat's default when None).
    """
    latency = [f"--latency-msec={latency_ms}"] if latency_ms is not None else []
    subprocess.run(
        ["pacat", "--playback", "--raw", "--format=s16le", f"--rate={rate}", "--channels=1",
         f"--device={MIC_SINK}", *latency],
        input=pcm, env=env.sandbox.audio.client_env(), check=True, timeout=30,
    )  # fmt: skip
