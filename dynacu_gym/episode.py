"""Running one episode of an agent in an env, and what came of it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import gymnasium as gym

PERCEPTION_TIMINGS = ("capture", "keyframes", "asr", "tts")  # info["timings"] keys summed


@dataclass
class EpisodeResult:
    """The outcome of one episode.

    Attributes:
        task: task id.
        seed: the reset seed.
        result: the page's final ``getTaskResult()`` value (or ``infra_error``).
        success: whether the page reported the task's success value.
        reward: total reward.
        credit: the share of the task's checklist held at the end (1.0 on success; a task
            without a checklist: 1.0 or 0.0), in any reward mode.
        checklist: each criterion's state at the end (empty without a checklist).
        steps: actions taken.
        seconds: wall time from reset to the end.
        infra_error: what failed, when the episode ended on an infrastructure fault.
        errors: agent mistakes reported during the episode.
        agent_seconds: time spent in the agent's ``act`` (thinking, model calls).
        perception_seconds: time steps spent observing, by channel (screenshot capture,
            keyframes, ASR, TTS), from ``info["timings"]``.
        tokens: model tokens the agent reported (``input``, ``output``).
        llm_calls: model calls the agent reported.
        clock: how the page's time passed: ``"realtime"`` (the benchmark's) or ``"paused"``.
        variety: whether each reset drew one of the task's variants.
        variant: which of the task's variants played (0, the benchmark's, without variety).
        heard: what a listening page's recogniser heard, one text per utterance (empty for
            other pages): what spoken answers were judged on.
    """

    task: str
    seed: int | None
    result: str
    success: bool
    reward: float
    steps: int
    seconds: float
    credit: float = 0.0
    checklist: dict[str, bool] = field(default_factory=dict)
    infra_error: str = ""
    errors: list[str] = field(default_factory=list)
    agent_seconds: float = 0.0
    perception_seconds: dict[str, float] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=lambda: {"input": 0, "output": 0})
    llm_calls: int = 0
    clock: str = "realtime"
    variety: bool = False
    variant: int = 0
    heard: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


StepCallback = Callable[[int, Any, dict[str, Any], dict[str, Any], dict[str, Any]], None]


def run_episode(
    env: gym.Env, agent: Any, seed: int | None = None, on_step: StepCallback | None = None
) -> EpisodeResult:
    """Reset ``env`` and let ``agent`` act until the episode terminates or is truncated.

    Args:
        env: the env (any wrapping).
        agent: an :class:`dynacu_agents.Agent`.
        seed: the reset seed.
        on_step: called after reset (step 0, action None) and after every step with
            ``(step, action, agent_info, obs, info)``; for traces.
    """
    t0 = time.monotonic()
    obs, info = env.reset(seed=seed)
    agent.reset(str(obs["instruction"]))
    if on_step is not None:
        on_step(0, None, {}, obs, info)
    total, steps, errors = 0.0, 0, []
    result, infra_error = "pending", ""
    credit, checklist = float(info.get("credit", 0.0)), dict(info.get("checklist", {}))
    agent_seconds, tokens, calls = 0.0, {"input": 0, "output": 0}, 0
    perception = dict.fromkeys(PERCEPTION_TIMINGS, 0.0)
    while True:
        t = time.monotonic()
        action, agent_info = agent.act(obs)
        agent_seconds += time.monotonic() - t
        tokens["input"] += int(agent_info.get("input_tokens", 0))
        tokens["output"] += int(agent_info.get("output_tokens", 0))
        calls += int(agent_info.get("calls", 0))
        obs, reward, terminated, truncated, info = env.step(action)
        steps += 1
        total += float(reward)
        for name in PERCEPTION_TIMINGS:
            perception[name] += float(info.get("timings", {}).get(name, 0.0))
        result = info.get("task_result", result)
        credit = float(info.get("credit", credit))
        checklist = dict(info.get("checklist", checklist))
        if info.get("last_action_error"):
            errors.append(info["last_action_error"])
        if on_step is not None:
            on_step(steps, action, agent_info, obs, info)
        if terminated or truncated:
            infra_error = info.get("infra_error", "")
            break
    if infra_error:
        result = "infra_error"
    elif truncated and result == "pending":  # the step limit came before the page decided
        result = "step_limit"
    base = env.unwrapped  # a DynaCUEnv underneath
    task = base.task  # type: ignore[attr-defined]
    return EpisodeResult(
        task=task.id,
        seed=seed,
        result=result,
        success=result == task.success,
        reward=total,
        steps=steps,
        seconds=time.monotonic() - t0,
        credit=0.0 if infra_error else credit,
        checklist=checklist,
        infra_error=infra_error,
        errors=errors,
        agent_seconds=agent_seconds,
        perception_seconds={k: round(v, 4) for k, v in perception.items()},
        tokens=tokens,
        llm_calls=calls,
        clock=base.clock,  # type: ignore[attr-defined]
        variety=base.variety,  # type: ignore[attr-defined]
        variant=task.variant,
        heard=base.heard,  # type: ignore[attr-defined]
    )
