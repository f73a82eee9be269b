"""The null agent: waits until the episode ends. Nothing should be solvable this way."""

from __future__ import annotations

from typing import Any

from dynacu_gym.actions import MAX_WAIT_S


class NullAgent:
    """Waits, in the longest waits allowed, until the time limit ends the episode."""

    name = "null"
    privileged = False

    def __init__(self, env: Any = None, seconds: float = MAX_WAIT_S) -> None:
        self.seconds = seconds

    def reset(self, instruction: str) -> None:
        """Nothing to remember."""

    def act(self, observation: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Always wait."""
        return {"type": "wait", "seconds": self.seconds}, {}
