"""Running one episode of an agent in an env, and what came of it."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import gymnasium as gym


@dataclass
class EpisodeResult:
    """The outcome of one episode.

    Attributes:
        task: task id.
        seed: the reset seed.
        result: the page's final ``getTaskResult()`` value (or ``infra_error``).
        success: whether the page reported the task's success value.
        reward: total reward.
        steps: actions taken.
        seconds: wall time from reset to the end.
        infra_error: what failed, when the episode ended on an infrastructure fault.
        errors: agent mistakes reported during the episode.
    """

    task: str
    seed: int | None
    result: str
    success: bool
    reward: float
    steps: int
    seconds: float
    infra_error: str = ""
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def run_episode(env: gym.Env, agent: Any, seed: int | None = None) -> EpisodeResult:
    """Reset ``env`` and let ``agent`` act until the episode terminates or is truncated."""
    t0 = time.monotonic()
    obs, info = env.reset(seed=seed)
    agent.reset(str(obs["instruction"]))
    total, steps, errors = 0.0, 0, []
    result, infra_error = "pending", ""
    while True:
        action, _ = agent.act(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        steps += 1
        total += float(reward)
        result = info.get("task_result", result)
        if info.get("last_action_error"):
            errors.append(info["last_action_error"])
        if terminated or truncated:
            infra_error = info.get("infra_error", "")
            break
    if infra_error:
        result = "infra_error"
    task = env.unwrapped.task  # type: ignore[attr-defined]  # a DynaCUEnv underneath
    return EpisodeResult(
        task=task.id,
        seed=seed,
        result=result,
        success=result == task.success,
        reward=total,
        steps=steps,
        seconds=time.monotonic() - t0,
        infra_error=infra_error,
        errors=errors,
    )
