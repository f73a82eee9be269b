"""Adapters for reinforcement-learning libraries: spaces that stable-baselines3 accepts.

The env speaks in a Dict action (a type and its fields, text included) and a Dict observation
with Text channels. Policies of RL libraries want a flat action and an image:

- :class:`DiscreteActions` turns the action into one ``Discrete``: clicks on a grid over the
  screen, waits, key presses, and (optionally) ``done``;
- :class:`ImageObservation` turns the observation into the screenshot scaled down (a ``Box``,
  for ``CnnPolicy``), or a ``Dict`` of it with the page time, the keyframes stacked on its
  channels and the heard text hashed into a vector (for ``MultiInputPolicy``).

::

    env = gym.make("DynaCU-J1-v0", clock="paused")
    env = ImageObservation(DiscreteActions(env, grid=(8, 6), waits=(0.5,)))
    PPO("CnnPolicy", env).learn(10_000)
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from dynacu_gym.actions import (
    MAX_WAIT_S,
    SCREEN_HEIGHT,
    SCREEN_WIDTH,
    format_action,
    normalize_key,
    validate_action,
)
from dynacu_gym.env import MAX_ELAPSED_S
from dynacu_gym.imaging import resize

_WORD = re.compile(r"[a-z0-9']+")


class DiscreteActions(gym.ActionWrapper, gym.utils.RecordConstructorArgs):
    """The action space as one ``Discrete``: each index is one fixed action.

    Indexes run through the clicks first (the grid row by row, each at its cell's centre, then
    the points), then the waits, then the keys, then ``done`` if asked for. :meth:`describe`
    gives an index's action as text.

    Args:
        env: a DynaCU env (any wrapper of one).
        grid: (columns, rows) of the click grid over the 1280x720 screen; (0, 0) for none.
        points: more clicks, at these (x, y) screen pixels (a game's buttons, say).
        waits: seconds of each wait action.
        keys: key combinations to press (Playwright names, e.g. ``"Space"``, ``"Control+a"``).
        done: add the ``done`` action (the agent ends the episode; the page's verdict stands).
    """

    def __init__(
        self,
        env: gym.Env,
        grid: tuple[int, int] = (8, 6),
        points: Sequence[tuple[int, int]] = (),
        waits: Sequence[float] = (1.0,),
        keys: Sequence[str] = (),
        done: bool = False,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, grid=grid, points=tuple(points), waits=tuple(waits), keys=tuple(keys), done=done
        )
        gym.ActionWrapper.__init__(self, env)
        if not (
            isinstance(grid, tuple)
            and len(grid) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) for n in grid)
            and (grid == (0, 0) or (1 <= grid[0] <= SCREEN_WIDTH and 1 <= grid[1] <= SCREEN_HEIGHT))
        ):
            raise ValueError(
                f"expected grid as (columns, rows), each 1..the screen's pixels, or (0, 0) for "
                f"no clicks; got {grid!r}"
            )
        columns, rows = grid
        self.actions: list[dict[str, Any]] = [
            {
                "type": "click",
                "x": int((c + 0.5) * SCREEN_WIDTH / columns),
                "y": int((r + 0.5) * SCREEN_HEIGHT / rows),
            }
            for r in range(rows)
            for c in range(columns)
        ]
        for point in points:
            if not (
                isinstance(point, (tuple, list))
                and len(point) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) for v in point)
                and 0 <= point[0] < SCREEN_WIDTH
                and 0 <= point[1] < SCREEN_HEIGHT
            ):
                raise ValueError(
                    f"expected each point as (x, y) pixels within {SCREEN_WIDTH}x{SCREEN_HEIGHT}, "
                    f"got {point!r}"
                )
            self.actions.append({"type": "click", "x": point[0], "y": point[1]})
        for seconds in waits:
            if not isinstance(seconds, (int, float)) or not 0 < seconds <= MAX_WAIT_S:
                raise ValueError(f"expected each wait in (0, {MAX_WAIT_S:g}] s, got {seconds!r}")
            self.actions.append({"type": "wait", "seconds": float(seconds)})
        for combo in keys:
            self.actions.append({"type": "key", "key": normalize_key(combo)})
        if done:
            self.actions.append({"type": "done"})
        if not self.actions:
            raise ValueError("expected at least one action: a grid, a wait, a key or done")
        for action in self.actions:
            validate_action(action)
        self.action_space = spaces.Discrete(len(self.actions))

    def action(self, action: Any) -> dict[str, Any]:
        """The env's action for index ``action``."""
        index = _index(action)
        if index is None or not 0 <= index < len(self.actions):
            raise ValueError(
                f"expected an action index in 0..{len(self.actions) - 1}, got {action!r}"
            )
        return dict(self.actions[index])

    def describe(self, index: int) -> str:
        """Index ``index``'s action as text (``click 80 60``, ``wait 1``)."""
        return format_action(validate_action(self.action(index)))


def _index(action: Any) -> int | None:
    if isinstance(action, (bool, np.bool_)):
        return None
    if isinstance(action, (int, np.integer)):
        return int(action)
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)) and action.dtype.kind in "iu":
        return int(action.reshape(()))
    return None


class ImageObservation(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """The observation as the screenshot scaled down, alone or with the other channels as arrays.

    Args:
        env: a DynaCU env (any wrapper of one).
        size: (height, width) of the image, at most the screen's (area-averaged).
        grayscale: one channel instead of three.
        extras: False: the observation is the image, a ``Box`` (``CnnPolicy``). True: a
            ``Dict`` (``MultiInputPolicy``) of ``image``, ``elapsed`` (page seconds, shape
            (1,)), ``keyframes`` when the env has that channel (the K keyframes scaled the same
            way and stacked on the channels, unused ones black) and ``text`` when
            ``text_features`` > 0.
        text_features: the length of the ``text`` vector: the words the agent heard (the
            transcript channels; else the record) hashed into that many counts, log-scaled.
    """

    def __init__(
        self,
        env: gym.Env,
        size: tuple[int, int] = (72, 128),
        grayscale: bool = False,
        extras: bool = False,
        text_features: int = 0,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, size=size, grayscale=grayscale, extras=extras, text_features=text_features
        )
        gym.ObservationWrapper.__init__(self, env)
        if not (
            isinstance(size, tuple)
            and len(size) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) for n in size)
            and 1 <= size[0] <= SCREEN_HEIGHT
            and 1 <= size[1] <= SCREEN_WIDTH
        ):
            raise ValueError(
                f"expected size as (height, width) within {SCREEN_HEIGHT}x{SCREEN_WIDTH}, "
                f"got {size!r}"
            )
        if not isinstance(text_features, int) or text_features < 0:
            raise ValueError(f"expected text_features >= 0, got {text_features!r}")
        if text_features and not extras:
            raise ValueError("text_features needs extras=True (the text goes beside the image)")
        self.size = size
        self.grayscale = grayscale
        self.extras = extras
        self.text_features = text_features
        self.channels = 1 if grayscale else 3
        image = spaces.Box(0, 255, shape=(*size, self.channels), dtype=np.uint8)
        inner = env.observation_space
        if not isinstance(inner, spaces.Dict) or "screenshot" not in inner.spaces:
            raise TypeError(f"ImageObservation wraps a DynaCU env's Dict observation, got {inner}")
        keyframes = inner.spaces.get("keyframes")
        self.max_keyframes = int(keyframes.shape[0]) if isinstance(keyframes, spaces.Box) else 0
        self.observation_space: spaces.Space[Any]
        if not extras:
            self.observation_space = image
            return
        fields: dict[str, spaces.Space[Any]] = {
            "image": image,
            "elapsed": spaces.Box(0.0, MAX_ELAPSED_S, shape=(1,), dtype=np.float32),
        }
        if self.max_keyframes:
            shape = (*size, self.channels * self.max_keyframes)
            fields["keyframes"] = spaces.Box(0, 255, shape=shape, dtype=np.uint8)
        if text_features:
            fields["text"] = spaces.Box(0.0, np.inf, shape=(text_features,), dtype=np.float32)
        self.observation_space = spaces.Dict(fields)

    def observation(self, observation: dict[str, Any]) -> Any:
        """The adapted observation."""
        image = self._scale(observation["screenshot"])
        if not self.extras:
            return image
        out: dict[str, np.ndarray] = {
            "image": image,
            "elapsed": np.array([observation["elapsed"]], dtype=np.float32),
        }
        if self.max_keyframes:
            count = int(observation["keyframe_count"])
            frames = [self._scale(f) for f in observation["keyframes"][:count]]
            blank = np.zeros((*self.size, self.channels), dtype=np.uint8)
            frames += [blank] * (self.max_keyframes - count)
            out["keyframes"] = np.concatenate(frames, axis=2)
        if self.text_features:
            heard = [
                str(observation[k]) for k in ("recent_audio", "audio_context") if k in observation
            ]
            text = " ".join(heard) if heard else str(observation["record"])
            out["text"] = hash_words(text, self.text_features)
        return out

    def _scale(self, frame: np.ndarray) -> np.ndarray:
        small = downscale(frame, *self.size)
        if self.grayscale:
            weights = np.array([0.299, 0.587, 0.114], dtype=np.float32)
            small = np.rint(small @ weights).astype(np.uint8)[..., None]
        return small


def downscale(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """``image`` (H, W, C) scaled down to (height, width) by area averaging (see ``resize``)."""
    h, w = image.shape[:2]
    if not (1 <= height <= h and 1 <= width <= w):
        raise ValueError(f"expected a size within {h}x{w}, got {height}x{width}")
    return resize(image, width, height)


def hash_words(text: str, features: int) -> np.ndarray:
    """The words of ``text`` counted into ``features`` buckets by a fixed hash, log-scaled."""
    counts = np.zeros(features, dtype=np.float32)
    for word in _WORD.findall(text.lower()):
        counts[zlib.crc32(word.encode()) % features] += 1.0
    return np.log1p(counts)
