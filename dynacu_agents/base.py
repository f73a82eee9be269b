"""The agent protocol."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Agent(Protocol):
    """What the evaluation loop drives.

    Attributes:
        name: a short name for tables.
        privileged: True if the agent reads page state no real agent could (the oracle).
    """

    name: str
    privileged: bool

    def reset(self, instruction: str) -> None:
        """Start a new episode with this instruction."""

    def act(self, observation: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The next action (as ``env.step`` takes it) and information about the choice."""
