"""The catalogue: every task folder under the tasks root, by id, in catalogue order."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from dynacu_gym.paths import tasks_root
from dynacu_gym.tasks.loader import load_task
from dynacu_gym.tasks.spec import TaskSpec


def catalogue_order(task_id: str) -> tuple[str, int]:
    """Sort key of task ids in catalogue order: by category, then number (A2 before A10)."""
    return task_id[0], int(task_id[1:])


def task_folders(root: Path | None = None) -> dict[str, Path]:
    """Task id -> folder, for every ``task.toml`` under the tasks root."""
    root = root or tasks_root()
    found: dict[str, Path] = {}
    for toml in sorted(root.glob("[A-Z]/*/task.toml")):
        m = re.match(r"^(\d+)-", toml.parent.name)
        if m:
            found[f"{toml.parent.parent.name}{int(m.group(1))}"] = toml.parent
    return found


def find_task(task_id: str) -> TaskSpec:
    """Load the task with id ``task_id`` (e.g. ``"B3"``).

    Raises:
        ValueError: no such task.
    """
    folders = task_folders()
    if task_id not in folders:
        close = difflib.get_close_matches(task_id, sorted(folders), n=3)
        hint = f"; close: {', '.join(close)}" if close else ""
        raise ValueError(f"no task {task_id!r} under {tasks_root()}{hint}")
    return load_task(folders[task_id])
