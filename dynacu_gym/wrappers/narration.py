"""Narration: the agent's own notes on what it saw, kept after the frames are gone.

Keyframes are dropped after the step that returns them; what the agent wrote about them is
what lets it use them later (narrating frames into persistent text is where the published
method found the value). An action may carry ``narration``; this wrapper keeps every one, with
the step and time it was written, in the ``narration`` observation and the record's
``[NARRATION]`` section. The log is bounded: past ``max_chars`` the oldest notes are dropped
first, and the section says how many went.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
from gymnasium import spaces

from dynacu_gym.actions import TEXT_CHARSET, Action, to_charset
from dynacu_gym.env import DynaCUEnv
from dynacu_gym.record import render_record

DEFAULT_MAX_CHARS = 8000


@dataclass(frozen=True)
class Note:
    """One narration: what the agent wrote, at which step and episode time."""

    step: int
    time: float
    text: str

    def line(self) -> str:
        """The note as a line of the narration text."""
        return f"(step {self.step}, {self.time:.1f}s) {self.text}"


class NarrationLog:
    """Notes in order, bounded in characters; the oldest go first."""

    def __init__(self, max_chars: int = DEFAULT_MAX_CHARS) -> None:
        if max_chars < 100:
            raise ValueError(f"expected max_chars >= 100, got {max_chars!r}")
        self.max_chars = max_chars
        self.notes: deque[Note] = deque()
        self.dropped = 0
        self._chars = 0

    def add(self, note: Note) -> None:
        """Append a note (a longer one than the bound is cut at its end), dropping old ones."""
        room = self.max_chars
        if len(note.line()) > room:
            keep = max(0, len(note.text) - (len(note.line()) - room) - 1)
            note = Note(note.step, note.time, note.text[:keep] + "\u2026")
        self.notes.append(note)
        self._chars += len(note.line()) + 1
        while self._chars > self.max_chars + 1 and len(self.notes) > 1:
            old = self.notes.popleft()
            self._chars -= len(old.line()) + 1
            self.dropped += 1

    def clear(self) -> None:
        """Forget every note."""
        self.notes.clear()
        self.dropped = 0
        self._chars = 0

    def text(self) -> str:
        """The notes, one per line, oldest first."""
        return "\n".join(note.line() for note in self.notes)

    def section(self) -> str:
        """The record's ``[NARRATION]`` section."""
        heading = (
            "[NARRATION]  (your notes on what you saw; they persist after the frames are gone)"
        )
        lines = [heading]
        if self.dropped:
            lines.append(
                f"  ({self.dropped} oldest note{'s' if self.dropped > 1 else ''} dropped to "
                f"stay within {self.max_chars} characters)"
            )
        lines.extend(f"  {note.line()}" for note in self.notes)
        if not self.notes and not self.dropped:
            lines.append("  (none yet: add narration to an action to keep a note)")
        return "\n".join(lines)


class NarrationMemory(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Adds ``narration`` (Text): every note the agent attached to its actions this episode.

    Args:
        env: a DynaCU env (any wrapper of one).
        max_chars: the bound on the kept notes, in characters.
    """

    def __init__(self, env: gym.Env, max_chars: int = DEFAULT_MAX_CHARS) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, max_chars=max_chars)
        gym.Wrapper.__init__(self, env)
        if not isinstance(env.unwrapped, DynaCUEnv):
            raise TypeError(
                f"NarrationMemory wraps a DynaCU env, got {type(env.unwrapped).__name__}"
            )
        self.base: DynaCUEnv = env.unwrapped
        self.log = NarrationLog(max_chars)
        self.observation_space = spaces.Dict(
            {
                **env.observation_space.spaces,  # type: ignore[attr-defined]
                "narration": spaces.Text(max_chars, min_length=0, charset=TEXT_CHARSET),
            }
        )

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset the env and start an empty log."""
        obs, info = self.env.reset(seed=seed, options=options)
        self.log.clear()
        return self._observe(obs, info)

    def step(self, action: Any):
        """Step the env, then keep the action's narration (also when the action was invalid)."""
        text = _narration_of(action)
        elapsed = self.base.elapsed  # when the agent acted on what it saw
        obs, reward, terminated, truncated, info = self.env.step(action)
        if text:
            step = info["record_parts"].step
            self.log.add(Note(step, elapsed, to_charset(text, self.log.max_chars)))
        obs, info = self._observe(obs, info)
        return obs, reward, terminated, truncated, info

    def _observe(self, obs: dict[str, Any], info: dict[str, Any]):
        parts = info["record_parts"].with_section("narration", self.log.section())
        obs = {**obs, "narration": self.log.text(), "record": render_record(parts)}
        return obs, {**info, "record_parts": parts, "narration_dropped": self.log.dropped}


def _narration_of(action: Any) -> str:
    """The narration an action carries, if any, whatever form the action has."""
    if isinstance(action, Action):
        return action.narration.strip()
    if isinstance(action, Mapping):
        value = action.get("narration", "")
        return value.strip() if isinstance(value, str) else ""
    return ""
