"""The oracle: plays a task's scripted solution through the env's public actions.

Privileged: it reads the task file and may poll page state (a solution step's ``when``) to
decide *when* to act, as BrowserGym's ``cheat`` does. What it does goes through ``env.step``
like any agent's actions.
"""

from __future__ import annotations

import time
from typing import Any

from dynacu_gym.actions import MAX_WAIT_S, parse_action
from dynacu_gym.tasks import CENTER_PLACEHOLDER, PAGE_PLACEHOLDER

POLL_S = 0.1  # seconds between checks of a step's ``when`` condition
CENTER_SCRIPT = """sel => {
  const el = document.querySelector(sel);
  if (!el) return null;
  const r = el.getBoundingClientRect();
  return [Math.round(r.x + r.width / 2), Math.round(r.y + r.height / 2)];
}"""


class _Unresolved(Exception):
    """A page value the step needs is not there (yet)."""


class OracleAgent:
    """Acts out ``task.solution``: each step waits for its ``at`` time and ``when`` condition.

    Args:
        env: the env (any wrapper of a DynaCU env); the oracle reads its task and page.
        answers: field -> answer to give instead of the first accepted one (e.g. a near miss,
            to check that the page rejects it).
    """

    name = "oracle"
    privileged = True

    def __init__(self, env: Any, answers: dict[str, str] | None = None) -> None:
        self.env = env.unwrapped
        self.answers = answers or {}
        self._index = 0
        self._actions: list[str] = []
        self._waiting_since: float | None = None

    def reset(self, instruction: str) -> None:
        """Start the solution from its first step."""
        self._index = 0
        self._actions = self.env.task.solution_actions(self.answers)
        self._waiting_since = None

    def act(self, observation: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The next solution action once its time has come; a short wait until then."""
        steps = self.env.task.solution
        if self._index >= len(steps):
            # The solution is played; let the page finish deciding (e.g. hearing an answer).
            return {"type": "wait", "seconds": 0.5}, {"solution": "finished"}
        step = steps[self._index]
        elapsed = float(observation["elapsed"])
        if step.at is not None and elapsed < step.at:
            return {"type": "wait", "seconds": min(step.at - elapsed, MAX_WAIT_S)}, {}
        now = time.monotonic()
        if self._waiting_since is None:
            self._waiting_since = now
        try:
            if step.when and not self.env.evaluate_in_page(f"() => Boolean({step.when})"):
                raise _Unresolved(step.when)
            text = CENTER_PLACEHOLDER.sub(self._center, self._actions[self._index])
            text = PAGE_PLACEHOLDER.sub(self._page_value, text)
        except _Unresolved as e:
            if now - self._waiting_since > step.timeout:
                return {"type": "done"}, {"solution": f"gave up waiting for {e}"}
            return {"type": "wait", "seconds": POLL_S}, {}
        self._waiting_since = None
        action = parse_action(text)
        self._index += 1
        return action, {"solution_step": self._index}

    def _center(self, match: Any) -> str:
        point = self.env.evaluate_in_page(CENTER_SCRIPT, match.group(1))
        if point is None:
            raise _Unresolved(match.group(0))
        return f"{point[0]} {point[1]}"

    def _page_value(self, match: Any) -> str:
        value = self.env.evaluate_in_page(f"() => ({match.group(1)})")
        if value is None:
            raise _Unresolved(match.group(0))
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return str(value).replace('"', '\\"')


class NearMissAgent(OracleAgent):
    """The scripted solution, answering every field with one of its near misses.

    A plausible wrong answer, timed and placed as the right one would be: no task may accept it.

    Args:
        env: the env (any wrapper of a DynaCU env).
        pick: which near miss to give (index into each field's ``reject``, wrapping around).
    """

    name = "nearmiss"

    def __init__(self, env: Any, pick: int = 0) -> None:
        super().__init__(env)
        self.pick = pick

    def reset(self, instruction: str) -> None:
        """Start the solution with the near misses in place of the answers."""
        self.answers = {
            name: spec.reject[self.pick % len(spec.reject)]
            for name, spec in self.env.task.answers.items()
        }
        super().reset(instruction)
