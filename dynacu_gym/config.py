"""How an env runs its task: the settings of :class:`~dynacu_gym.env.DynaCUEnv`, checked.

Each field says its unit and its bounds, and :class:`EnvConfig` checks every one when it is
made, so a wrong setting fails where it is given, with its name, what was expected and what
came, before any browser starts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from dynacu_gym.actions import MAX_WAIT_S
from dynacu_gym.clock import CLOCKS

MAX_ELAPSED_S = 86_400.0  # the elapsed observation's bound: a day is far past any time limit
REWARD_MODES = ("binary", "checklist")


@dataclass(frozen=True)
class Bounds:
    """A number field's unit and range: ``low`` to ``high``, ``low`` itself only if ``closed``."""

    unit: str  # "seconds", or "a count" for a whole number
    low: float
    high: float
    closed: bool = True  # low <= value (else low < value)
    optional: bool = False  # None is allowed (it means the task's own)

    def check(self, name: str, value: Any) -> None:
        """Raise TypeError or ValueError unless ``value`` is a number in range.

        Raises:
            TypeError: not a number (a bool is not), or not whole for a count.
            ValueError: out of range.
        """
        if value is None and self.optional:
            return
        whole = self.unit == "a count"
        kinds = (int,) if whole else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds):
            what = "a count (a whole number)" if whole else f"{self.unit} (a number)"
            raise TypeError(
                f"expected {name} as {what}{' or None' if self.optional else ''}, got {value!r}"
            )
        above = self.low <= value if self.closed else self.low < value
        if not (above and value <= self.high):  # NaN is in no range
            unit = "" if whole else f" {self.unit}"
            sign = "<=" if self.closed else "<"
            raise ValueError(
                f"expected {self.low:g} {sign} {name} <= {self.high:g}{unit}, got {value!r}"
            )


def _number(default: float | None, bounds: Bounds, doc: str) -> Any:
    return field(default=default, metadata={"bounds": bounds, "doc": doc})


def _choice(default: Any, choices: tuple[Any, ...], doc: str) -> Any:
    return field(default=default, metadata={"choices": choices, "doc": doc})


@dataclass(frozen=True)
class EnvConfig:
    """The env's settings (the ``DynaCUEnv`` arguments but the task, render mode and sandbox).

    Raises:
        TypeError, ValueError: a field of the wrong type or out of its range (see each field's
            ``metadata``: its bounds or choices, and what it means).
    """

    ready_timeout_s: float = _number(
        30.0,
        Bounds("seconds", 0.0, 3600.0, closed=False),
        "seconds a page may take to load its data and audio",
    )
    max_restarts: int = _number(
        3,
        Bounds("a count", 0, 100),
        "consecutive failed starts of the sandbox before reset() raises",
    )
    reward_mode: str = _choice("binary", REWARD_MODES, "binary or checklist credit")
    time_limit_s: float | None = _number(
        None,
        Bounds("seconds", 0.0, MAX_ELAPSED_S, closed=False, optional=True),
        "seconds from reset until the page calls timeout; None: the task's own",
    )
    clock: str = _choice("realtime", CLOCKS, "how the page's time passes")
    action_time_s: float = _number(
        0.5,
        Bounds("seconds", 0.0, MAX_WAIT_S),
        "in paused time, the page seconds an action other than wait takes",
    )
    variety: bool = _choice(False, (False, True), "each reset(seed=k) plays a drawn variant")

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if "bounds" in f.metadata:
                f.metadata["bounds"].check(f.name, value)
            elif f.metadata["choices"] == (False, True):
                if not isinstance(value, bool):
                    raise TypeError(f"expected {f.name} as True or False, got {value!r}")
            elif value not in f.metadata["choices"]:
                raise ValueError(f"expected {f.name} in {f.metadata['choices']}, got {value!r}")
        if self.time_limit_s is not None:
            object.__setattr__(self, "time_limit_s", float(self.time_limit_s))
        object.__setattr__(self, "action_time_s", float(self.action_time_s))
        object.__setattr__(self, "ready_timeout_s", float(self.ready_timeout_s))
