"""Tasks as data: ``task.toml`` loaded into a validated :class:`TaskSpec`.

Errors name the file, the field and what was expected.

- :mod:`.spec`: the :class:`TaskSpec` and its parts (speakers, script, answers, evidence,
  solution) and the format's vocabulary (categories, tiers, axes, placeholders).
- :mod:`.loader`: :func:`load_task`, one reader per section of the file, and the variants.
- :mod:`.apps`: the shared apps and the ``[config]`` keys each declares.
- :mod:`.catalogue`: every task folder under the tasks root by id, the user's suites
  (``$DYNACU_TASK_PATH``, :func:`register_suite`); :func:`find_task`.
- :mod:`.answers`: answer normalisation and hashing (mirrored in ``dynacu-task.js``).
- :mod:`.audio_assets`: a script's speech rendered with piper, and the hash that dates it.

``dynacu_gym.tasks`` exports what the single module of that name did, so old imports work.
"""

from __future__ import annotations

from dynacu_gym.errors import TaskFormatError
from dynacu_gym.tasks.apps import CONFIG_KEYS_FILE, ConfigKeys, app_folder
from dynacu_gym.tasks.catalogue import (
    TASK_PATH_VAR,
    all_task_folders,
    catalogue_order,
    find_task,
    register_suite,
    suite_folders,
    suites,
    task_folders,
)
from dynacu_gym.tasks.loader import load_task
from dynacu_gym.tasks.spec import (
    AXES,
    CATEGORIES,
    CENTER_PLACEHOLDER,
    CHANNELS,
    CRITERION,
    PAGE_PLACEHOLDER,
    PLACEHOLDER,
    TASK_ID,
    TIERS,
    AnswerSpec,
    Evidence,
    ScriptLine,
    SolutionStep,
    Speaker,
    TaskSpec,
    file_stem,
    gym_id,
)

__all__ = [
    "AXES",
    "CATEGORIES",
    "CENTER_PLACEHOLDER",
    "CHANNELS",
    "CONFIG_KEYS_FILE",
    "CRITERION",
    "PAGE_PLACEHOLDER",
    "PLACEHOLDER",
    "TASK_ID",
    "TASK_PATH_VAR",
    "TIERS",
    "AnswerSpec",
    "ConfigKeys",
    "Evidence",
    "ScriptLine",
    "SolutionStep",
    "Speaker",
    "TaskFormatError",
    "TaskSpec",
    "all_task_folders",
    "app_folder",
    "catalogue_order",
    "file_stem",
    "find_task",
    "gym_id",
    "load_task",
    "register_suite",
    "suite_folders",
    "suites",
    "task_folders",
]
