"""Running one episode of an agent in an env, and what came of it.

:class:`EpisodeResult` is what an episode line keeps; :func:`run_episode` plays one;
:func:`spoken_answers` pairs what the agent said with what a listening page heard, the
measure of whether the agent's voice got through.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

import gymnasium as gym

from dynacu_gym.errors import AgentFailure, InfraError
from dynacu_gym.tasks import PLACEHOLDER, AnswerSpec, TaskSpec
from dynacu_gym.tasks.answers import spoken_verdict

PERCEPTION_TIMINGS = ("capture", "keyframes", "asr", "tts")  # info["timings"] keys summed
AGENT_FAILURE = "agent_failure"  # the result of an episode the agent could not go on with
# The page's verdicts of heard speech (the runtime's DynaCU.verdicts); none on a page without it.
VERDICTS_SCRIPT = "() => (window.DynaCU && window.DynaCU.verdicts) || []"


@dataclass
class EpisodeResult:
    """The outcome of one episode.

    Attributes:
        task: task id.
        seed: the reset seed.
        result: the page's final ``getTaskResult()`` value (or ``infra_error``, or
            ``agent_failure`` when the agent could not go on: see :class:`AgentFailure`).
        success: whether the page reported the task's success value.
        reward: total reward.
        credit: the share of the task's checklist held at the end (1.0 on success; a task
            without a checklist: 1.0 or 0.0), in any reward mode.
        checklist: each criterion's state at the end (empty without a checklist).
        steps: actions taken.
        seconds: wall time from reset to the end.
        infra_error: what failed, when the episode ended on an infrastructure fault.
        agent_failure: why the agent could not go on, when it could not (the server's message).
        errors: agent mistakes reported during the episode.
        agent_seconds: time spent in the agent's ``act`` (thinking, model calls).
        perception_seconds: time steps spent observing, by channel (screenshot capture,
            keyframes, ASR, TTS), from ``info["timings"]``.
        tokens: model tokens the agent reported (``input``, ``output``, and ``reasoning``
            where its server counts them: a part of ``output``).
        llm_calls: model calls the agent reported.
        clock: how the page's time passed: ``"realtime"`` (the benchmark's) or ``"paused"``.
        variety: whether each reset drew one of the task's variants.
        variant: which of the task's variants played (0, the benchmark's, without variety).
        heard: what a listening page's recogniser heard, one text per utterance (empty for
            other pages): what spoken answers were judged on.
        said: what the agent said, one text per ``speak`` action, in order.
        spoken_answers: per answer field the page judges by ear, what the agent said and what
            the page heard (see :func:`spoken_answers`); empty after an infrastructure fault.
        channels: the channels the env's mode wrapped around it (its ``channels``).
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
    agent_failure: str = ""
    errors: list[str] = field(default_factory=list)
    agent_seconds: float = 0.0
    perception_seconds: dict[str, float] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=lambda: {"input": 0, "output": 0})
    llm_calls: int = 0
    clock: str = "realtime"
    variety: bool = False
    variant: int = 0
    heard: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    spoken_answers: list[dict[str, Any]] = field(default_factory=list)
    channels: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


class Said(NamedTuple):
    """One ``speak`` of the agent: its text and when its speech ends (page seconds)."""

    text: str
    ends_at: float


def spoken_answers(
    answers: Mapping[str, AnswerSpec],
    said: Sequence[Said],
    verdicts: Sequence[Mapping[str, Any]],
    aloud: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """What the agent said for each answer field judged by ear, and what the page made of it.

    A field counts when what the agent said carries a verdict for it (judged as the page
    judges, :func:`~dynacu_gym.tasks.answers.spoken_verdict`) and the page judges it by ear: the
    page logged a verdict of heard speech for it, or it is in ``aloud`` (the fields the task answers
    aloud, which a page that heard nothing never logs). A field answered by typing on a page
    that also listens is not a spoken answer, even if the agent said it too.

    When several things said carry a verdict for the field, the one that counts is the last to
    have ended before the page's last verdict for the field (the page judges an utterance after
    its silence and the transcription, so the speech it judged ended before); when none did, or
    the page never judged the field, the last one said.

    Args:
        answers: the task's answer fields.
        said: what the agent said, in order.
        verdicts: the page's verdicts of heard speech, ``{field, text, verdict, at}`` each, in
            the order reached (the runtime's ``DynaCU.verdicts``).
        aloud: fields the task answers aloud even if the page logged nothing for them.

    Returns:
        One entry per field, in the task's order: ``{"field", "said", "said_verdict", "heard",
        "heard_verdict", "received"}``. ``heard`` and ``heard_verdict`` are the page's last
        verdict for the field (None when it never judged it); ``received``: the page reached
        the verdict the agent's words carry.
    """
    by_ear = {str(v.get("field")) for v in verdicts} | set(aloud)
    entries = []
    for name, spec in answers.items():
        if name not in by_ear:
            continue
        judged = [
            (s, verdict)
            for s in said
            if (verdict := spoken_verdict(spec.kind, spec.accept, spec.reject, s.text))
        ]
        if not judged:
            continue
        page = [v for v in verdicts if v.get("field") == name]
        last = page[-1] if page else None
        if last is not None:
            at = float(last.get("at") or 0.0)
            judged = [j for j in judged if j[0].ends_at <= at] or judged
        chosen, verdict = judged[-1]
        heard_verdict = last.get("verdict") if last is not None else None
        entries.append(
            {
                "field": name,
                "said": chosen.text,
                "said_verdict": verdict,
                "heard": last.get("text") if last is not None else None,
                "heard_verdict": heard_verdict,
                "received": heard_verdict == verdict,
            }
        )
    return entries


def answered_aloud(task: TaskSpec) -> set[str]:
    """The fields a listening task's scripted solution speaks (``{answer.FIELD}`` in a speak)."""
    if not task.listens:
        return set()
    return {
        m.group(1)
        for step in task.solution
        if step.speaks
        for m in PLACEHOLDER.finditer(step.action)
    }


def _page_verdicts(env: Any) -> list[dict[str, Any]] | None:
    """The page's verdicts of heard speech; None when the page cannot be read (infra fault)."""
    try:
        return list(env.evaluate_in_page(VERDICTS_SCRIPT))
    except InfraError:
        return None


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
    said: list[Said] = []
    truncated, agent_failure = False, ""

    def count(agent_info: Mapping[str, Any]) -> None:
        nonlocal calls
        for name in ("input", "output", "reasoning"):
            if agent_info.get(f"{name}_tokens"):
                tokens[name] = tokens.get(name, 0) + int(agent_info[f"{name}_tokens"])
        calls += int(agent_info.get("calls", 0))

    while True:
        t = time.monotonic()
        try:
            action, agent_info = agent.act(obs)
        except AgentFailure as e:
            agent_seconds += time.monotonic() - t
            count(e.info)
            result, agent_failure = AGENT_FAILURE, str(e)
            break
        agent_seconds += time.monotonic() - t
        count(agent_info)
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
        if "speech" in info:  # a speak action was scheduled
            speech = info["speech"]
            said.append(Said(str(speech["text"]), float(speech.get("ends_at") or 0.0)))
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
    spoken: list[dict[str, Any]] = []
    if said and not infra_error:  # read now: the next reset loads a new page
        verdicts = _page_verdicts(base)
        if verdicts is not None:
            spoken = spoken_answers(task.answers, said, verdicts, answered_aloud(task))
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
        agent_failure=agent_failure,
        errors=errors,
        agent_seconds=agent_seconds,
        perception_seconds={k: round(v, 4) for k, v in perception.items()},
        tokens=tokens,
        llm_calls=calls,
        clock=base.clock,  # type: ignore[attr-defined]
        variety=base.variety,  # type: ignore[attr-defined]
        variant=task.variant,
        heard=base.heard,  # type: ignore[attr-defined]
        said=[s.text for s in said],
        spoken_answers=spoken,
        channels=list(getattr(base, "channels", ())),
    )
