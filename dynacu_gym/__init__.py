"""dynacu-gym: dynamic computer-use tasks as Gymnasium environments.

Importing the package registers every ``DynaCU-<Cat><N>-v0`` whose task exists::

    import gymnasium as gym
    import dynacu_gym

    env = gym.make("DynaCU-A1-v0")

and every suite of the user's own tasks ``$DYNACU_TASK_PATH`` names; :func:`register_tasks`
registers one more folder at run time::

    dynacu_gym.register_tasks("~/my-tasks", namespace="mylab")
    env = gym.make("mylab/Z1-v0", mode="aoi_full")
"""

from __future__ import annotations

from dynacu_gym.actions import Action, ActionError, ActionType, format_action, parse_action
from dynacu_gym.modes import MODES
from dynacu_gym.registration import register_all, register_tasks

__version__ = "0.1.0"
__all__ = [
    "MODES",
    "Action",
    "ActionError",
    "ActionType",
    "format_action",
    "parse_action",
    "register_all",
    "register_tasks",
]

register_all()
