"""The null agent: waits until the episode ends. Nothing should be solvable this way."""

from __future__ import annotations

from typing import Any

from dynacu_gym.actions import MAX_WAIT_S

SCRIPT_SLACK_S = 3.0  # the observer watches this long after the script ends


class NullAgent:
    """Waits, ``seconds`` at a time, until the time limit ends the episode.

    With ``until``, it is the audit's passive observer: it ends the episode (``done``) once
    ``until`` seconds of it have passed. ``until="script"`` stands for the task's duration (the
    catalogue's ``duration_s``: when its script has played) plus :data:`SCRIPT_SLACK_S`.
    """

    name = "null"
    privileged = False

    def __init__(
        self, env: Any = None, seconds: float = MAX_WAIT_S, until: float | str | None = None
    ) -> None:
        if not 0 < seconds <= MAX_WAIT_S:
            raise ValueError(f"expected seconds in (0, {MAX_WAIT_S:g}], got {seconds!r}")
        if until == "script":
            if env is None:
                raise ValueError("until='script' needs the env, to read the task's duration")
            until = float(env.unwrapped.task.duration_s) + SCRIPT_SLACK_S
        elif until is not None and not (isinstance(until, (int, float)) and until > 0):
            raise ValueError(f"expected until > 0 seconds, 'script' or None, got {until!r}")
        self.seconds = seconds
        self.until = until

    def reset(self, instruction: str) -> None:
        """Nothing to remember."""

    def act(self, observation: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Wait; once ``until`` has passed, done."""
        if self.until is not None and float(observation["elapsed"]) >= self.until:
            return {"type": "done"}, {}
        return {"type": "wait", "seconds": self.seconds}, {}
