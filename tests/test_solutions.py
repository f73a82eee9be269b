"""Every task: its scripted solution succeeds, waiting does not, a near miss fails, and the page
accepts every accepted form and rejects every near miss."""

from __future__ import annotations

import gymnasium as gym
import pytest
from tasks_sample import (
    ALL_TASKS,
    CHANNEL_SAMPLE,
    mode_available,
    solution_mode,
    task_params,
)

import dynacu_gym  # noqa: F401 - registers the envs
from dynacu_agents import NullAgent, OracleAgent
from dynacu_gym.episode import run_episode
from dynacu_gym.tasks import find_task

pytestmark = pytest.mark.browser

# A solution that speaks runs once its mode exists (tests/test_listening.py covers the page's
# listening path until then).
RUNNABLE = [t for t in ALL_TASKS if mode_available(solution_mode(t))]
WITH_ANSWERS = [t for t in RUNNABLE if find_task(t).answers]


@pytest.mark.parametrize("task_id", task_params(RUNNABLE, plays_solution=True))
def test_scripted_solution_succeeds(task_id):
    env = gym.make(f"DynaCU-{task_id}-v0", mode=solution_mode(task_id))
    try:
        outcome = run_episode(env, OracleAgent(env), seed=0)
    finally:
        env.close()
    assert outcome.success, outcome
    assert outcome.reward == 1.0 and not outcome.errors


@pytest.mark.parametrize(
    "task_id", task_params(WITH_ANSWERS, plays_solution=True, sample=CHANNEL_SAMPLE)
)
def test_near_miss_answer_is_the_named_failure(task_id):
    task = find_task(task_id)
    near = {name: spec.reject[0] for name, spec in task.answers.items()}
    env = gym.make(f"DynaCU-{task_id}-v0", mode=solution_mode(task_id))
    try:
        outcome = run_episode(env, OracleAgent(env, answers=near), seed=0)
    finally:
        env.close()
    assert not outcome.success and outcome.reward == 0.0
    assert outcome.result in task.failures, outcome


DYNAMIC = [t for t in ALL_TASKS if find_task(t).category != "S"]
STATIC = [t for t in ALL_TASKS if find_task(t).category == "S"]


@pytest.mark.slow
@pytest.mark.parametrize("task_id", DYNAMIC)
def test_waiting_does_not_solve(task_id):
    env = gym.make(f"DynaCU-{task_id}-v0")
    try:
        outcome = run_episode(env, NullAgent(), seed=0)
    finally:
        env.close()
    assert outcome.result == "timeout", outcome


@pytest.mark.parametrize("task_id", task_params(STATIC))
def test_a_static_page_decides_nothing_by_itself(task_id):
    """A static control's page has no clock of its own: 20 s of waiting leave it pending (its
    time limit, minutes for a form an agent fills a step at a time, only runs out)."""
    env = gym.make(f"DynaCU-{task_id}-v0")
    try:
        env.reset(seed=0)
        for _ in range(2):
            _, reward, terminated, truncated, info = env.step({"type": "wait", "seconds": 10.0})
            assert not (terminated or truncated), info
        assert info["task_result"] == "pending" and reward == 0.0
    finally:
        env.close()


@pytest.mark.parametrize("task_id", task_params([t for t in ALL_TASKS if find_task(t).answers]))
def test_page_accepts_and_rejects_the_declared_forms(task_id, make_env):
    task = find_task(task_id)
    env = make_env(task)
    env.reset(seed=0)
    for name, spec in task.answers.items():
        for form in spec.accept:
            assert env.evaluate_in_page("([f, t]) => DynaCU.matches(f, t)", [name, form]), form
        for form in spec.reject:
            assert not env.evaluate_in_page("([f, t]) => DynaCU.matches(f, t)", [name, form]), form
