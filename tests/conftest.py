"""Shared fixtures: real envs on the real stack, always closed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dynacu_gym.env import DynaCUEnv
from dynacu_gym.tasks import TaskSpec, load_task

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def probe_task() -> TaskSpec:
    """A page that reports what input reached it (tests/fixtures/tasks/F/90-input-probe)."""
    return load_task(FIXTURES / "tasks" / "F" / "90-input-probe")


@pytest.fixture
def make_env() -> Iterator[Callable[..., DynaCUEnv]]:
    """Build base envs; every one is closed at teardown, whatever the test did."""
    made: list[DynaCUEnv] = []

    def factory(task: str | TaskSpec, **kwargs) -> DynaCUEnv:
        env = DynaCUEnv(task, **kwargs)
        made.append(env)
        return env

    yield factory
    for env in made:
        env.close()


@pytest.fixture(scope="module")
def probe_env(probe_task: TaskSpec) -> Iterator[DynaCUEnv]:
    """One probe env shared by a module's tests (reset by each test)."""
    env = DynaCUEnv(probe_task)
    yield env
    env.close()


def play(env: Any, agent: Any, max_steps: int = 10) -> tuple[list[dict], dict]:
    """Run ``agent`` in ``env`` (reset with seed 0) until the episode ends: its actions and the
    last step's info. Fails on an infrastructure fault."""
    obs, info = env.reset(seed=0)
    agent.reset(str(obs["instruction"]))
    actions = []
    for _ in range(max_steps):
        action, _agent_info = agent.act(obs)
        actions.append(action)
        obs, _reward, terminated, truncated, info = env.step(action)
        assert "infra_error" not in info, info["infra_error"]
        if terminated or truncated:
            break
    return actions, info
