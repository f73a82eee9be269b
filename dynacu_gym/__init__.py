"""dynacu-gym: dynamic computer-use tasks as Gymnasium environments.

Importing the package registers every ``DynaCU-<Cat><N>-v0`` whose task exists::

    import gymnasium as gym
    import dynacu_gym

    env = gym.make("DynaCU-A1-v0")
"""

from __future__ import annotations

from dynacu_gym.actions import Action, ActionError, ActionType, format_action, parse_action
from dynacu_gym.modes import MODES
from dynacu_gym.registration import register_all

__version__ = "0.1.0"
__all__ = [
    "MODES",
    "Action",
    "ActionError",
    "ActionType",
    "format_action",
    "parse_action",
    "register_all",
]

register_all()
