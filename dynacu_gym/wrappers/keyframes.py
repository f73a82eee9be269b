"""The visual-temporal channel: the keyframes the screen showed between two steps.

A screenshot per step misses what appeared and went while the agent thought: a toast, a slide,
a number that ticked past. This wrapper runs a :class:`KeyframeCapture` beside the episode and
adds to each observation the keyframes grabbed between the previous step's screenshot and this
one's, less what the agent has seen (its own input taking effect, frames like the one before):

- ``keyframes``: (K, 720, 1280, 3) uint8, the first ``keyframe_count`` filled, oldest first,
  the rest zero;
- ``keyframe_times``: (K,) float32, seconds since the episode started;
- ``keyframe_count``: how many are filled.

The record's ``[VISUAL]`` section lists them with their times; the audio channel, when on,
links the ones that fall inside each sentence. When more than K arrived, the most informative
are kept (see :mod:`dynacu_gym.perception.keyframes`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from dynacu_gym.actions import SCREEN_HEIGHT, SCREEN_WIDTH, to_charset
from dynacu_gym.env import MAX_ELAPSED_S, DynaCUEnv
from dynacu_gym.imaging import frame_space
from dynacu_gym.perception.clip_gate import DEFAULT_ARCH, DEFAULT_THRESHOLD, load_clip_gate
from dynacu_gym.perception.keyframes import (
    MAX_FPS,
    Keyframe,
    KeyframeCapture,
    gate_view,
    select_keyframes,
    unseen,
)
from dynacu_gym.record import render_record
from dynacu_gym.runtime.process import InfraError

MAX_KEYFRAMES = 16  # the largest K the observation may ask for (each frame is 2.7 MB)


# Long (~180 lines, a fifth its docstring): a Gymnasium wrapper's whole contract (spaces,
# reset, step, close) around the capture it starts and stops with the episode.
class KeyframeObservation(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Adds ``keyframes``, ``keyframe_times`` and ``keyframe_count`` to the observation.

    Args:
        env: a DynaCU env (any wrapper of one).
        max_keyframes: K, the most keyframes one step returns.
        fps: frames grabbed per second (3 by default; up to 30).
        change_threshold: the pixel gate: fraction of pixels that must change (0.01).
        pool_size: keyframes held between two steps before the least informative are
            dropped (default 4 K).
        clip_weights: turns the CLIP gate on: a checkpoint file, a pretrained tag in a local
            cache, or ``"random"`` (tests only); see :mod:`dynacu_gym.perception.clip_gate`.
        clip_arch: the open_clip model the weights belong to.
        clip_cache_dir: where to look for a pretrained tag.
        clip_threshold: cosine distance below which the CLIP gate suppresses a frame.
    """

    def __init__(
        self,
        env: gym.Env,
        max_keyframes: int = 5,
        fps: float = 3.0,
        change_threshold: float = 0.01,
        pool_size: int | None = None,
        clip_weights: str | Path | None = None,
        clip_arch: str = DEFAULT_ARCH,
        clip_cache_dir: str | Path | None = None,
        clip_threshold: float = DEFAULT_THRESHOLD,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, max_keyframes=max_keyframes, fps=fps, change_threshold=change_threshold,
            pool_size=pool_size, clip_weights=clip_weights, clip_arch=clip_arch,
            clip_cache_dir=clip_cache_dir, clip_threshold=clip_threshold,
        )  # fmt: skip
        gym.Wrapper.__init__(self, env)
        if not isinstance(env.unwrapped, DynaCUEnv):
            raise TypeError(
                f"KeyframeObservation wraps a DynaCU env, got {type(env.unwrapped).__name__}"
            )
        if not isinstance(max_keyframes, int) or not 1 <= max_keyframes <= MAX_KEYFRAMES:
            raise ValueError(f"expected max_keyframes in 1..{MAX_KEYFRAMES}, got {max_keyframes!r}")
        if not 0 < fps <= MAX_FPS:
            raise ValueError(f"expected fps in (0, {MAX_FPS:g}], got {fps!r}")
        if not 0 <= change_threshold < 1:
            raise ValueError(f"expected change_threshold in [0, 1), got {change_threshold!r}")
        self.base: DynaCUEnv = env.unwrapped
        self.base.needs_wall_clock("keyframes")  # frames are grabbed on the wall clock
        self.max_keyframes = max_keyframes
        self.fps = fps
        self.change_threshold = change_threshold
        self.pool_size = pool_size or 4 * max_keyframes
        if self.pool_size < max_keyframes:
            raise ValueError(f"expected pool_size >= max_keyframes, got {pool_size!r}")
        self.clip = (
            None
            if clip_weights is None
            else load_clip_gate(clip_weights, clip_arch, clip_cache_dir, clip_threshold)
        )
        k = max_keyframes
        self.observation_space = spaces.Dict(
            {
                **env.observation_space.spaces,  # type: ignore[attr-defined]
                "keyframes": frame_space((k, SCREEN_HEIGHT, SCREEN_WIDTH, 3)),
                "keyframe_times": spaces.Box(0.0, MAX_ELAPSED_S, shape=(k,), dtype=np.float32),
                "keyframe_count": spaces.Discrete(k + 1),
            }
        )
        self._capture: KeyframeCapture | None = None
        self._seen: np.ndarray | None = None  # gate view of the last screenshot returned
        self._stats_seen: dict[str, float] = {}

    @property
    def capture(self) -> KeyframeCapture:
        """The capture of the current episode.

        Raises:
            gymnasium.error.ResetNeeded: before the first reset.
        """
        if self._capture is None:
            raise gym.error.ResetNeeded("call reset() first")
        return self._capture

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset the env and start capturing from its first screen."""
        self._stop_capture()
        obs, info = self.env.reset(seed=seed, options=options)
        base = self.base
        sandbox = base.sandbox
        if sandbox is None:
            raise InfraError("the env has no sandbox after reset")
        self._capture = KeyframeCapture(
            sandbox.display.grab,
            fps=self.fps,
            change_threshold=self.change_threshold,
            pool_size=self.pool_size,
            clip=self.clip,
            release=sandbox.display.release_grab,
        )
        self._capture.start(obs["screenshot"], base.episode_start)
        self._seen = gate_view(obs["screenshot"])
        self._stats_seen = {}
        return self._observe(obs, info, [], 0)

    def step(self, action: Any):
        """Step the env, then add what the screen showed since the previous screenshot."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        if truncated and "infra_error" in info:
            return self._observe(obs, info, [], 0)[0], reward, terminated, truncated, info
        t = time.monotonic()
        base = self.base
        # Up to the screenshot: what came after it belongs to the next step, measured from it.
        until = base.screenshot_time
        try:
            pool = self.capture.collect(until=until)
        except InfraError as e:
            info = {**info, "infra_error": f"{type(e).__name__}: {e}"}
            return self._observe(obs, info, [], 0)[0], reward, terminated, True, info
        assert self._seen is not None  # set by reset
        current = gate_view(obs["screenshot"])
        fresh = unseen(pool, self._seen, base.input_window, self.change_threshold)
        seen = [self._seen, current]
        kept = select_keyframes(fresh, self.max_keyframes, seen, until, self.capture.interval)
        self._seen = current
        obs, info = self._observe(obs, info, kept, len(fresh))
        info["timings"] = {**info.get("timings", {}), "keyframes": time.monotonic() - t}
        return obs, reward, terminated, truncated, info

    def close(self) -> None:
        """Stop capturing, then close the env."""
        self._stop_capture()
        super().close()

    def _stop_capture(self) -> None:
        if self._capture is not None:
            self._capture.stop()
            self._capture = None

    def _observe(
        self, obs: dict[str, Any], info: dict[str, Any], kept: list[Keyframe], arrived: int
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        k = self.max_keyframes
        frames = np.empty((k, SCREEN_HEIGHT, SCREEN_WIDTH, 3), dtype=np.uint8)
        for i, keyframe in enumerate(kept):
            frames[i] = keyframe.frame
        frames[len(kept) :] = 0
        times = np.zeros(k, dtype=np.float32)
        times[: len(kept)] = [max(0.0, self.base.episode_time(kf.time)) for kf in kept]
        stats = self._capture.stats.as_dict() if self._capture is not None else {}
        since = {
            name: value - self._stats_seen.get(name, 0.0)
            for name, value in stats.items()
            if name != "fps"
        }
        self._stats_seen = stats
        # Keyframes that reached the pool since the last step, with ones the pool let go.
        arrived = max(arrived + int(since.get("pool_dropped", 0)), len(kept))
        obs = {
            **obs,
            "keyframes": frames,
            "keyframe_times": times,
            "keyframe_count": np.int64(len(kept)),
        }
        section = to_charset(_format_visual(kept, times, arrived), 20_000)
        parts = info["record_parts"].with_section("visual", section)
        obs["record"] = render_record(parts)
        info = {
            **info,
            "record_parts": parts,
            "keyframes": {
                "times": [round(float(x), 3) for x in times[: len(kept)]],
                "changes": [round(kf.change, 4) for kf in kept],
                "arrived": arrived,
                "kept": len(kept),
                "since_last_step": since,
                "fps": stats.get("fps", 0.0),
            },
        }
        return obs, info


def _format_visual(kept: list[Keyframe], times: np.ndarray, arrived: int) -> str:
    lines = ["[VISUAL — keyframes captured since last step]"]
    if not kept:
        lines.append("  (no change on screen)")
    for i, keyframe in enumerate(kept):
        lines.append(
            f"  keyframe {i + 1} at {times[i]:.1f}s ({keyframe.change:.0%} of the screen changed)"
        )
    if arrived > len(kept):
        lines.append(
            f"  ({arrived} captured; the {len(kept)} most distinct and longest-lasting are kept)"
        )
    return "\n".join(lines)
