"""Which tasks the default suite runs end to end, and which only `make test-all` runs."""

from __future__ import annotations

import pytest

from dynacu_gym.modes import mode_available  # noqa: F401 - re-exported for the tests
from dynacu_gym.tasks import catalogue_order, find_task, task_folders

ALL_TASKS = sorted(task_folders(), key=catalogue_order)


def _sample() -> set[str]:
    """The first task of every category, and for every tier the category firsts leave out, its
    shortest task: every category and every channel (audio, visual, speech) is exercised by
    `make test`, and every tier, at the least cost in real time."""
    chosen: dict[str, str] = {}
    for task_id in ALL_TASKS:
        chosen.setdefault(task_id[0], task_id)
    tiers = {find_task(t).tier for t in chosen.values()}
    # sorted() is stable: tasks of equal duration stay in catalogue order.
    for task_id in sorted(ALL_TASKS, key=lambda t: find_task(t).duration_s):
        tier = find_task(task_id).tier
        if tier not in tiers:
            tiers.add(tier)
            chosen[tier] = task_id
    return set(chosen.values())


SAMPLE = _sample()

# A second pass over the same ground (the checker, a near-miss episode) runs by default on one
# task per channel: heard (A1), seen (D1), spoken to (H1) and static (S1); the rest in test-all.
CHANNEL_SAMPLE = {"A1", "D1", "H1", "S1"}


def solution_mode(task_id: str) -> str:
    """The mode a task's scripted solution needs."""
    return find_task(task_id).solution_mode


def task_params(ids: list[str], *, plays_solution: bool = False, sample: set[str] = SAMPLE) -> list:
    """pytest params: `sample` tasks run by default, the rest are marked slow. With
    `plays_solution` (the test plays the task's solution), a solution that speaks marks its task
    `speaks`: `make test-all` runs those one at a time."""
    params = []
    for i in ids:
        marks = [] if i in sample else [pytest.mark.slow]
        if plays_solution and find_task(i).solution_speaks:
            marks.append(pytest.mark.speaks)
        params.append(pytest.param(i, marks=marks, id=i))
    return params
