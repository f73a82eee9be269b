"""The catalogue as data: every ``envs/*.toml`` becomes Gymnasium registrations.

A catalogue file::

    [defaults]
    max_episode_steps = 200

    [[env]]
    id = "DynaCU-A1-v0"
    task = "A1"
    max_episode_steps = 100   # optional, overrides the default

An id whose task folder does not exist yet is skipped, so the catalogue can list the whole
benchmark while tasks are still being written.

A user's own suites (see :mod:`dynacu_gym.tasks.catalogue`) are registered too: those
``$DYNACU_TASK_PATH`` names, at import, and any folder given to :func:`register_tasks`, as
``NAMESPACE/<Cat><N>-v0`` (``gym.make("mylab/Z1-v0")``).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import gymnasium as gym

from dynacu_gym.paths import envs_root
from dynacu_gym.tasks import (
    TASK_PATH_VAR,
    TaskFormatError,
    catalogue_order,
    gym_id,
    register_suite,
    suite_folders,
    suites,
    task_folders,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ENTRY_POINT = "dynacu_gym.env:make_env"
SUITE_MAX_STEPS = 200


def catalogue(root: Path | None = None) -> list[dict]:
    """Every env entry of every catalogue file whose task exists, defaults applied."""
    root = root or envs_root()
    folders = task_folders()
    entries = []
    for path in sorted(root.glob("*.toml")):
        data = tomllib.loads(path.read_text())
        defaults = data.get("defaults", {})
        for i, entry in enumerate(data.get("env", [])):
            if "id" not in entry or "task" not in entry:
                raise TaskFormatError(f"{path}: [[env]] #{i + 1}: expected 'id' and 'task'")
            merged = {**defaults, **entry, "catalogue": path.stem}
            if entry["task"] in folders:
                entries.append(merged)
    return entries


def _register(env_id: str, task_id: str, max_episode_steps: int) -> str:
    if env_id not in gym.registry:
        gym.register(
            id=env_id,
            entry_point=ENTRY_POINT,
            kwargs={"task": task_id},
            max_episode_steps=max_episode_steps,
            nondeterministic=True,  # real time: the page runs on the wall clock
        )
    return env_id


def register_all() -> list[str]:
    """Register every catalogued env whose task exists and every suite's; return their ids.

    The suites are those ``$DYNACU_TASK_PATH`` names.
    A misconfigured suite is a warning naming the entry, not an error: importing the package
    must not fail on it (``dynacu doctor`` and :func:`register_tasks` say the same as errors).
    """
    ids = [
        _register(entry["id"], entry["task"], int(entry.get("max_episode_steps", 200)))
        for entry in catalogue()
    ]
    try:
        held = suites()
    except TaskFormatError as e:
        warnings.warn(f"no suite registered: {e}", stacklevel=2)
        return ids
    for namespace, folder in held.items():
        try:
            local = suite_folders(folder)
        except TaskFormatError as e:
            warnings.warn(
                f"${TASK_PATH_VAR}: suite {namespace!r} not registered: {e}", stacklevel=2
            )
            continue
        for task in sorted(local, key=catalogue_order):
            task_id = f"{namespace}/{task}"
            ids.append(_register(gym_id(task_id), task_id, SUITE_MAX_STEPS))
    return ids


def register_tasks(
    folder: str | Path, namespace: str | None = None, max_episode_steps: int = SUITE_MAX_STEPS
) -> list[str]:
    """Register a folder of the user's own tasks as Gymnasium envs; return their ids.

    The folder holds tasks in the benchmark's layout (``<Cat>/<N>-<slug>/task.toml``); its
    namespace is the folder's name unless given. Each task is loaded once, so a broken one is
    an error now, naming its file and field. The folder joins this process's
    ``$DYNACU_TASK_PATH``, so worker processes and Ray jobs started after the call see it::

        ids = dynacu_gym.register_tasks("~/my-tasks", namespace="mylab")  # ["mylab/Z1-v0"]
        env = gym.make("mylab/Z1-v0", mode="aoi_full")

    Raises:
        TaskFormatError: the folder is missing, holds no task or is the benchmark's own, the
            namespace is bad, reserved or another folder's, or a task does not load.
    """
    namespace, task_ids = register_suite(folder, namespace)
    return [_register(gym_id(t), t, max_episode_steps) for t in task_ids]
