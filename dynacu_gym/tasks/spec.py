"""What a task is: the validated :class:`TaskSpec` and its parts, and the format's vocabulary.

A task folder ``tasks/<Cat>/<N>-<slug>/`` holds ``task.toml``, the page (its own ``index.html``
or a shared app from ``tasks/_shared/apps/`` named by ``app``), and assets such as audio rendered
from the script. The task server serves the folder's public files, never ``task.toml``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CATEGORIES = {
    "A": "podcast",
    "B": "meeting",
    "C": "video / screencast",
    "D": "carousel / rotating content",
    "E": "live dashboard",
    "F": "transient UI",
    "G": "phone / voice call",
    "H": "voice interview",
    "I": "collaborative document on a call",
    "J": "browser game",
    "S": "static control",
}
TIERS = ("easy", "medium", "hard")
AXES = ("audio", "visual", "interaction")
CHANNELS = ("audio", "visual")
TASK_ID = re.compile(r"^([A-Z])(\d{1,3})$")
CRITERION = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
PLACEHOLDER = re.compile(r"\{answer\.([A-Za-z_][A-Za-z0-9_]*)\}")
# {page:EXPR}: a value the scripted solution reads from the page when it acts (privileged), such
# as a target's position: action = "click {page:target.x} {page:target.y}".
PAGE_PLACEHOLDER = re.compile(r"\{page:([^{}]+)\}")
# {center:SELECTOR}: "X Y", the screen centre of the first element matching a CSS selector when
# the step acts (privileged): action = "click {center:.target}" hits a moving target.
CENTER_PLACEHOLDER = re.compile(r"\{center:([^{}]+)\}")


@dataclass(frozen=True)
class Speaker:
    """How one voice in a task's script sounds.

    Attributes:
        pitch: pitch factor against the base voice (1.0 = unchanged; 0.8 lower, 1.2 higher).
        rate: speaking-rate factor (1.0 = the voice's own pace; 1.2 = 20% faster).
    """

    pitch: float = 1.0
    rate: float = 1.0


@dataclass(frozen=True)
class ScriptLine:
    """One thing the page says or shows.

    Attributes:
        t: seconds after the episode starts.
        speaker: the voice saying ``say`` (a key of ``speakers``).
        say: words spoken at ``t`` (rendered to audio; never written on the page).
        show: what appears on screen at ``t`` (the app decides how), until ``until``.
        until: seconds after the start when ``show`` disappears (None: it stays).
        extra: any other keys the task's app reads (e.g. ``slide = 3``).
    """

    t: float
    speaker: str = ""
    say: str = ""
    show: str = ""
    until: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AnswerSpec:
    """An answer field the page checks.

    Attributes:
        kind: normalisation kind (see :mod:`dynacu_gym.tasks.answers`).
        accept: forms that must count as right (the first is used by scripted solutions).
        reject: near misses that must count as wrong.
    """

    kind: str
    accept: tuple[str, ...]
    reject: tuple[str, ...] = ()


@dataclass(frozen=True)
class Evidence:
    """A fact the agent must perceive to solve the task.

    Attributes:
        fact: the fact in words.
        channel: ``audio`` or ``visual``.
        window: (start, end) seconds after the start when it can be perceived.
        transient: visual evidence on screen too briefly for an agent that only looks at
            each step to count on seeing it (``dynacu audit``: one stepping about every 10 s
            catches it at most half the time), and gone after its window. Visual evidence
            that is not transient stays long enough for any such agent to see it.
        keys: words or numbers an observer who perceived the fact heard (audio) or read on
            screen (visual), as said or shown: what ``dynacu audit`` looks for, half of them
            being enough. Audio keys must never be on the page; transient visual keys must be
            gone after the window.
        all_keys: the fact is a set of pieces the agent needs every one of (five prices to
            find the cheapest), so the audit counts it perceived only when all keys are found.
        follows: for evidence the agent's own action brings up, the scripted solution's step
            that does that action (1 = the first ``[[solution]]`` line, counting a ``repeat``
            run's steps one by one). Visual: a notice that opens on a click; an agent's
            screenshots then fall right after that action and a step apart from it, not at any
            phase of the page's clock, and the audit takes its chance so. Audio: a line the page
            plays only after that step (a question asked once the answer before it was heard);
            where the step is spoken, the audit wants it heard only in the modes that speak.
    """

    fact: str
    channel: str
    window: tuple[float, float]
    transient: bool = False
    keys: tuple[str, ...] = ()
    all_keys: bool = False
    follows: int | None = None


@dataclass(frozen=True)
class SolutionStep:
    """One step of the scripted solution.

    Attributes:
        action: the action in text form; ``{answer.FIELD}`` stands for the field's first
            accepted answer, ``{page:EXPR}`` for the value of a JavaScript expression in the
            page when the step acts and ``{center:SELECTOR}`` for "X Y", the centre of an
            element on screen then (both privileged, like ``when``).
        at: wait until this many seconds after the start before acting.
        when: wait until this JavaScript expression is true in the page (privileged).
        timeout: seconds to wait for ``when`` before giving up.
    """

    action: str
    at: float | None = None
    when: str = ""
    timeout: float = 30.0

    @property
    def speaks(self) -> bool:
        """Whether this step's action is ``speak``."""
        return self.action.lstrip().lower().startswith("speak")


def gym_id(task_id: str) -> str:
    """The Gymnasium id of a task: ``DynaCU-B3-v0``, or ``mylab/Z1-v0`` for a suite's."""
    if "/" in task_id:
        return f"{task_id}-v0"
    return f"DynaCU-{task_id}-v0"


def file_stem(task_id: str) -> str:
    """A task id as a file name can hold it: ``B3``, or ``mylab_Z1`` for ``mylab/Z1``.

    The local id never holds a ``_``, so the last one parts the namespace from it.
    """
    return task_id.replace("/", "_")


@dataclass(frozen=True)
class TaskSpec:
    """A validated task."""

    id: str
    title: str
    category: str
    number: int
    tier: str
    axes: tuple[str, ...]
    instruction: str
    duration_s: float
    time_limit_s: float
    root: Path
    success: str = "success"
    failures: tuple[str, ...] = ("wrong_answer",)
    page: str = "index.html"
    app: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    speakers: dict[str, Speaker] = field(default_factory=dict)
    script: tuple[ScriptLine, ...] = ()
    answers: dict[str, AnswerSpec] = field(default_factory=dict)
    evidence: tuple[Evidence, ...] = ()
    solution: tuple[SolutionStep, ...] = ()
    listens: bool = False
    # Partial credit: criterion -> what it checks, marked by the page (empty: success alone).
    checklist: dict[str, str] = field(default_factory=dict)
    # Which of the task's [[variants]] this is (0: the benchmark's), and how many it has. Out of
    # the repr, which the audit hashes: variant 0 is the same task whether or not others exist.
    variant: int = field(default=0, repr=False)
    variants: int = field(default=1, repr=False)

    @property
    def namespace(self) -> str | None:
        """The suite's namespace of a user's task (``mylab`` of ``mylab/Z1``); None for ours."""
        return self.id.rpartition("/")[0] or None

    @property
    def gym_id(self) -> str:
        """The Gymnasium id, e.g. ``DynaCU-A1-v0``, or ``mylab/Z1-v0`` for a suite's task."""
        return gym_id(self.id)

    @property
    def solution_speaks(self) -> bool:
        """Whether the scripted solution needs the speak channel."""
        return any(step.speaks for step in self.solution)

    @property
    def solution_mode(self) -> str:
        """The least mode the scripted solution runs in (speaking needs aoi_interactive)."""
        return "aoi_interactive" if self.solution_speaks else "standard"

    @property
    def page_path(self) -> str:
        """The page's URL path on the task server."""
        if self.app:
            return f"/shared/apps/{self.app}/index.html"
        return f"/task/{self.page}"

    def solution_actions(self, answers: dict[str, str] | None = None) -> list[str]:
        """The solution's actions with ``{answer.FIELD}`` filled in (overrides in ``answers``)."""
        values = {name: spec.accept[0] for name, spec in self.answers.items()}
        values.update(answers or {})
        return [
            PLACEHOLDER.sub(lambda m: values[m.group(1)].replace('"', '\\"'), step.action)
            for step in self.solution
        ]
