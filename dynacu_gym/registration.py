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
"""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym

from dynacu_gym.paths import envs_root
from dynacu_gym.tasks import TaskFormatError, task_folders

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ENTRY_POINT = "dynacu_gym.env:make_env"


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


def register_all() -> list[str]:
    """Register every catalogued env whose task exists; return their ids."""
    ids = []
    for entry in catalogue():
        if entry["id"] not in gym.registry:
            gym.register(
                id=entry["id"],
                entry_point=ENTRY_POINT,
                kwargs={"task": entry["task"]},
                max_episode_steps=int(entry.get("max_episode_steps", 200)),
                nondeterministic=True,  # real time: the page runs on the wall clock
            )
        ids.append(entry["id"])
    return ids
