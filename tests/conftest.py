"""Shared fixtures: real envs on the real stack, always closed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

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
