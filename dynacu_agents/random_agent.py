"""The random agent: valid random actions (clicks, keys, short waits, typed words)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dynacu_gym.actions import SCREEN_HEIGHT, SCREEN_WIDTH

_WORDS = ("yes", "no", "ok", "42", "April 28", "blue", "1.4 million", "done", "hello")
_KEYS = ("Enter", "Tab", "Escape", "ArrowDown", "ArrowUp", "Space", "Backspace")


class RandomAgent:
    """Uniform over action kinds (speak only where the env can speak), seeded."""

    name = "random"
    privileged = False

    def __init__(
        self, env: Any = None, seed: int | Sequence[int] | None = None, can_speak: bool = False
    ) -> None:
        self.rng = np.random.default_rng(seed)
        self.can_speak = can_speak

    def reset(self, instruction: str) -> None:
        """Nothing to remember."""

    def act(self, observation: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """One random valid action."""
        kinds = ["click", "type", "key", "scroll", "wait"] + (["speak"] if self.can_speak else [])
        kind = kinds[int(self.rng.integers(len(kinds)))]
        if kind == "click":
            x, y = int(self.rng.integers(SCREEN_WIDTH)), int(self.rng.integers(SCREEN_HEIGHT))
            return {"type": "click", "x": x, "y": y}, {}
        if kind in ("type", "speak"):
            return {"type": kind, "text": _WORDS[int(self.rng.integers(len(_WORDS)))]}, {}
        if kind == "key":
            return {"type": "key", "key": _KEYS[int(self.rng.integers(len(_KEYS)))]}, {}
        if kind == "scroll":
            direction = "up" if self.rng.random() < 0.5 else "down"
            return {
                "type": "scroll",
                "direction": direction,
                "amount": 1 + int(self.rng.integers(3)),
            }, {}
        return {"type": "wait", "seconds": float(self.rng.uniform(0.5, 3.0))}, {}
