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
            text = self._resolve(step.when, self._actions[self._index])
        except _Unresolved as e:
            if now - self._waiting_since > step.timeout:
                return {"type": "done"}, {"solution": f"gave up waiting for {e}"}
            return {"type": "wait", "seconds": POLL_S}, {}
        self._waiting_since = None
        action = parse_action(text)
        self._index += 1
        return action, {"solution_step": self._index}

    def _resolve(self, when: str, action: str) -> str:
        """The action's text, once ``when`` holds and its page values are there.

        Raises:
            _Unresolved: not yet.
        """
        if when and not self.env.evaluate_in_page(f"() => Boolean({when})"):
            raise _Unresolved(when)
        text = CENTER_PLACEHOLDER.sub(self._center, action)
        return PAGE_PLACEHOLDER.sub(self._page_value, text)

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


class WatcherAgent(OracleAgent):
    """The scripted solution, played by an agent that looks only every ``look_s`` seconds.

    The audit's observer: it does what the solution does when the solution does it, so what an
    agent sees only after acting (a dialog after a click, a game after Space) is there to be
    seen; otherwise it looks at the page once every ``look_s`` seconds, as an agent that
    thinks that long between steps. It waits for a step's ``when`` between looks (the page runs
    on while an agent thinks), not in steps of its own.

    Args:
        env: the env (any wrapper of a DynaCU env).
        look_s: seconds between looks (at most the longest wait).
        finish: play the solution's last step (the one that answers). Without it the page runs
            on to its deadline or the time limit: what a slower agent would still see.
    """

    name = "watcher"

    def __init__(self, env: Any, look_s: float = 10.0, finish: bool = True) -> None:
        if not 0 < look_s <= MAX_WAIT_S:
            raise ValueError(f"expected look_s in (0, {MAX_WAIT_S:g}], got {look_s!r}")
        super().__init__(env)
        self.look_s = look_s
        self.finish = finish

    def act(self, observation: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The solution's next action when due; else a wait of at most ``look_s``."""
        if not self.finish and self._index == len(self.env.task.solution) - 1:
            self._index += 1  # the answer is not given: look on until the page ends
        action, info = super().act(observation)
        if action["type"] == "wait":
            if info.get("solution") == "finished":
                action = {"type": "wait", "seconds": self.look_s}
            else:
                action = {"type": "wait", "seconds": min(action["seconds"], self.look_s)}
        return action, info

    def _resolve(self, when: str, action: str) -> str:
        deadline = time.monotonic() + self.look_s
        while True:
            try:
                return super()._resolve(when, action)
            except _Unresolved:
                if time.monotonic() + POLL_S > deadline:
                    raise
                time.sleep(POLL_S)
