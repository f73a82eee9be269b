"""``task.toml`` loaded into a validated :class:`TaskSpec`, one reader per section of the file.

Errors name the file, the field and what was expected.
"""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path
from typing import Any

from dynacu_gym.actions import ActionError, parse_action
from dynacu_gym.errors import TaskFormatError
from dynacu_gym.tasks.answers import KINDS, normalize
from dynacu_gym.tasks.apps import app_folder, check_config
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
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


class _Table:
    """Typed access to one TOML table, with errors naming the file, the table and the key."""

    def __init__(self, path: Path, data: Any, where: str):
        self.path = path
        self.where = where
        if not isinstance(data, dict):
            self.fail(None, "a table", data)
        self.data: dict[str, Any] = data
        self.used: set[str] = set()

    def fail(self, key: str | None, expected: str, got: Any) -> None:
        location = f"[{self.where}] " if self.where else ""
        name = f"{location}{key!r}" if key else location.strip() or "the file"
        raise TaskFormatError(f"{self.path}: {name}: expected {expected}, got {got!r}")

    def get(self, key: str, expected: str, check, default: Any = ..., convert=None) -> Any:
        self.used.add(key)
        if key not in self.data:
            if default is ...:
                location = f"[{self.where}] " if self.where else ""
                close = difflib.get_close_matches(key, list(self.data), n=1)
                hint = f"; is {close[0]!r} a typo of it?" if close else ""
                raise TaskFormatError(f"{self.path}: {location}missing {key!r} ({expected}){hint}")
            return default
        value = self.data[key]
        if not check(value):
            self.fail(key, expected, value)
        return convert(value) if convert else value

    def flag(self, key: str) -> bool:
        """An optional true/false setting, false when absent."""
        return bool(self.get(key, "true or false", lambda v: isinstance(v, bool), False))

    def string(self, key: str, default: Any = ..., nonempty: bool = True) -> str:
        return self.get(
            key,
            "a non-empty string" if nonempty else "a string",
            lambda v: isinstance(v, str) and (bool(v.strip()) or not nonempty),
            default,
        )

    def number(self, key: str, default: Any = ..., minimum: float = 0.0) -> float:
        return self.get(
            key,
            f"a number >= {minimum:g}",
            lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v >= minimum,
            default,
            float,
        )

    def whole(self, key: str, expected: str, default: Any = ...) -> int:
        """A whole number >= 1 (not a bool, not a float)."""
        return self.get(
            key,
            expected,
            lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
            default,
        )

    def strings(self, key: str, default: Any = ..., nonempty: bool = True) -> tuple[str, ...]:
        return self.get(
            key,
            "a non-empty list of strings" if nonempty else "a list of strings",
            lambda v: (
                isinstance(v, list)
                and all(isinstance(s, str) and s.strip() for s in v)
                and (bool(v) or not nonempty)
            ),
            default,
            tuple,
        )

    def choice(self, key: str, options: tuple[str, ...], default: Any = ...) -> str:
        return self.get(
            key,
            f"one of {', '.join(options)}",
            lambda v: isinstance(v, str) and v in options,
            default,
        )

    def table(self, key: str) -> dict[str, Any]:
        return self.get(key, "a table", lambda v: isinstance(v, dict), {})

    def array(self, key: str) -> list[Any]:
        return self.get(
            key,
            f"an array of tables ([[{key}]])",
            lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v),
            [],
        )

    def finish(self, allow_extra: bool = False) -> dict[str, Any]:
        """Reject keys nobody read (typos), suggesting the closest known key."""
        extra = {k: v for k, v in self.data.items() if k not in self.used}
        if extra and not allow_extra:
            key = next(iter(extra))
            close = difflib.get_close_matches(key, sorted(self.used), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            location = f"[{self.where}] " if self.where else ""
            raise TaskFormatError(
                f"{self.path}: {location}unknown key {key!r}{hint} "
                f"(known: {', '.join(sorted(self.used))})"
            )
        return extra


VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:number)?\}")


def _variants(path: Path, raw: dict[str, Any]) -> list[dict[str, Any]]:
    """The task's ``[[variants]]``: each a set of values for the same names.

    A task without variants has one, with no names.
    """
    variants = raw.pop("variants", None)
    if variants is None:
        return [{}]
    where = _Table(path, {}, "")
    if not (isinstance(variants, list) and len(variants) >= 2):
        where.fail("variants", "two or more [[variants]] tables", variants)
    names: list[str] = []
    found = []
    for i, variant in enumerate(variants):
        table = _Table(path, variant, f"variants #{i + 1}")
        if not table.data:
            table.fail(None, "a table of NAME = value", variant)
        if i == 0:
            names = sorted(table.data)
        elif sorted(table.data) != names:
            table.fail(
                None, f"the names of the first variant ({', '.join(names)})", sorted(variant)
            )
        values = {}
        for name in names:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                table.fail(name, "a name of letters, digits and _", name)
            values[name] = table.get(
                name, "a string or a number", lambda v: isinstance(v, (str, int, float))
                and not isinstance(v, bool),
            )  # fmt: skip
        found.append(values)
    if len({tuple(sorted(v.items())) for v in found}) != len(found):
        where.fail("variants", "variants that differ from each other", variants)
    return found


def _substitute(path: Path, value: Any, values: dict[str, Any], used: set[str]) -> Any:
    """``value`` with every ``${NAME}`` in its strings replaced by the variant's value.

    ``"${NAME:number}"``, a whole string, is the variant's value as a number (``price =
    "${price:number}"`` with ``price = 96`` is the number 96): for config the page computes
    with.
    """
    if isinstance(value, dict):
        return {k: _substitute(path, v, values, used) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(path, v, values, used) for v in value]
    if not isinstance(value, str) or "${" not in value:
        return value

    def lookup(name: str) -> Any:
        if name not in values:
            known = ", ".join(sorted(values)) or "none: the task has no [[variants]]"
            raise TaskFormatError(f"{path}: ${{{name}}} names no variable (known: {known})")
        used.add(name)
        return values[name]

    whole = VARIABLE.fullmatch(value)
    if whole and whole.group(2):
        number = lookup(whole.group(1))
        if not isinstance(number, (int, float)):
            raise TaskFormatError(
                f"{path}: {value} needs a number in every variant, got {number!r}"
            )
        return number

    def fill(match: re.Match[str]) -> str:
        if match.group(2):
            raise TaskFormatError(f"{path}: {match.group(0)} must be a whole string: {value!r}")
        return str(lookup(match.group(1)))

    return VARIABLE.sub(fill, value)


def _read_id(top: _Table, folder: Path, own_suite: bool) -> tuple[str, str, str]:
    """``id``: the task's id, category and number, which its folder must match.

    The benchmark's own tasks use its categories; a user's suite (``own_suite``) may use any
    capital letter.
    """
    path = top.path
    task_id = top.get(
        "id", "a task id like 'A1'", lambda v: isinstance(v, str) and bool(TASK_ID.match(v))
    )
    category, number = TASK_ID.match(task_id).groups()  # type: ignore[union-attr]
    folder_match = re.match(r"^(\d+)-", folder.name)
    if (
        folder.parent.name != category
        or not folder_match
        or int(folder_match.group(1)) != int(number)
    ):
        raise TaskFormatError(
            f"{path}: 'id' {task_id!r} does not match the folder; expected "
            f"tasks/{category}/{int(number)}-<slug>/"
        )
    if not own_suite and category not in CATEGORIES:
        raise TaskFormatError(
            f"{path}: 'id': unknown category {category!r}; expected one of {', '.join(CATEGORIES)}"
        )
    return task_id, category, number


def _read_speakers(top: _Table) -> dict[str, Speaker]:
    """``[speakers.NAME]``: how each voice of the script sounds."""
    speakers: dict[str, Speaker] = {}
    for name, data in top.table("speakers").items():
        t = _Table(top.path, data, f"speakers.{name}")
        speakers[name] = Speaker(
            pitch=t.number("pitch", default=1.0, minimum=0.5),
            rate=t.number("rate", default=1.0, minimum=0.5),
        )
        t.finish()
    return speakers


def _read_script(top: _Table, speakers: dict[str, Speaker]) -> list[ScriptLine]:
    """``[[script]]``: what the page says and shows, and when."""
    script = []
    for i, data in enumerate(top.array("script")):
        t = _Table(top.path, data, f"script #{i + 1}")
        line_t = t.number("t")
        say = t.string("say", default="")
        show = t.string("show", default="")
        speaker = t.string("speaker", default="")
        until = t.number("until", default=None)
        if say and speakers and speaker not in speakers:
            t.fail("speaker", f"one of {', '.join(speakers)}", speaker)
        if until is not None and until <= line_t:
            t.fail("until", f"a time after t = {line_t:g}", until)
        script.append(
            ScriptLine(line_t, speaker, say, show, until, extra=t.finish(allow_extra=True))
        )
    return script


def _read_answers(top: _Table) -> dict[str, AnswerSpec]:
    """``[answers.FIELD]``: each answer's kind, accepted forms and near misses."""
    answers: dict[str, AnswerSpec] = {}
    for name, data in top.table("answers").items():
        t = _Table(top.path, data, f"answers.{name}")
        kind = t.choice("kind", KINDS)
        accept = t.strings("accept")
        reject = t.strings("reject", default=(), nonempty=False)
        t.finish()
        for form in accept:
            if normalize(kind, form) is None:
                t.fail("accept", f"forms that read as a {kind}", form)
        right = {normalize(kind, form) for form in accept}
        for form in reject:
            if normalize(kind, form) in right:
                t.fail("reject", "near misses that differ from every accepted answer", form)
        answers[name] = AnswerSpec(kind, accept, reject)
    return answers


def _read_evidence(top: _Table) -> list[Evidence]:
    """``[[evidence]]``: what the task gives to perceive, in which channel and window."""
    evidence = []
    for i, data in enumerate(top.array("evidence")):
        t = _Table(top.path, data, f"evidence #{i + 1}")
        window = t.get(
            "window",
            "[start, end] in seconds with start <= end",
            lambda v: (
                isinstance(v, list)
                and len(v) == 2
                and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
                and 0 <= v[0] <= v[1]
            ),
            convert=lambda v: (float(v[0]), float(v[1])),
        )
        item = Evidence(
            fact=t.string("fact"),
            channel=t.choice("channel", CHANNELS),
            window=window,
            transient=t.flag("transient"),
            keys=t.strings("keys", default=()),
            all_keys=t.flag("all_keys"),
            follows=t.whole("follows", "a solution step, a whole number >= 1", None),
        )
        evidence.append(item)
        t.finish()
    return evidence


def _read_solution(
    top: _Table, answers: dict[str, AnswerSpec], listens: bool
) -> list[SolutionStep]:
    """``[[solution]]``: the scripted solution's steps, each action checked as an agent's."""
    solution = []
    for i, data in enumerate(top.array("solution")):
        t = _Table(top.path, data, f"solution #{i + 1}")
        # One action, or a run of them (`actions`) done `repeat` times: a game's "wait for the
        # next target, then hit it" is one line, not a hundred.
        if "actions" in t.data:
            if "action" in t.data:
                t.fail("actions", "either 'action' or 'actions', not both", t.data["actions"])
            key, actions = "actions", t.strings("actions")
        else:
            key, actions = "action", (t.string("action"),)
        repeat = t.whole("repeat", "a whole number >= 1", 1)
        at, when = t.number("at", default=None), t.string("when", default="")
        timeout = t.number("timeout", default=30.0, minimum=0.1)
        t.finish()
        for action in actions:
            for ref in PLACEHOLDER.findall(action):
                if ref not in answers:
                    t.fail(key, f"{{answer.FIELD}} with FIELD in {sorted(answers)}", action)
            try:
                filled = CENTER_PLACEHOLDER.sub("0 0", PLACEHOLDER.sub("x", action))
                parse_action(PAGE_PLACEHOLDER.sub("0", filled))
            except ActionError as e:
                raise TaskFormatError(f"{top.path}: [solution #{i + 1}] {key!r}: {e}") from e
            if SolutionStep(action).speaks and not listens:
                t.fail(key, "no speak unless the task sets listens = true", action)
        # `at` and `when` hold back the first action only; the rest follow it.
        for n, action in enumerate(actions * repeat):
            first = n == 0
            solution.append(
                SolutionStep(
                    action=action,
                    at=at if first else None,
                    when=when if first else "",
                    timeout=timeout,
                )
            )
    return solution


def _check_follows(path: Path, evidence: list[Evidence], solution: list[SolutionStep]) -> None:
    """Each evidence item's ``follows`` names a step of the solution that can precede it."""
    for i, item in enumerate(evidence):
        if item.follows is None:
            continue
        where = _Table(path, {}, f"evidence #{i + 1}")
        if item.follows > len(solution):
            where.fail("follows", f"a step of the {len(solution)}-step solution", item.follows)
        if item.channel == "visual" and solution[item.follows - 1].speaks:
            # The audit's timeline, which every visual item is judged against, does not speak.
            where.fail("follows", "for visual evidence, a step that does not speak", item.follows)


def load_task(folder: str | Path, variant: int = 0, namespace: str | None = None) -> TaskSpec:
    """Load and validate ``folder/task.toml``, with variant number ``variant`` filled in.

    A task may list ``[[variants]]``, each giving values to the same names; ``${NAME}`` in any
    string of the file (config, script, answers, evidence, solution, instruction) stands for
    the chosen variant's value. Variant 0 is the task as the benchmark plays it.

    ``namespace`` loads a task of a user's suite: its id becomes ``NAMESPACE/ID`` and its
    category may be any capital letter.

    Raises:
        TaskFormatError: the file is missing, is not TOML, or breaks the format; the message
            names the file, the field and what was expected.
        ValueError: no such variant.
    """
    folder = Path(folder)
    path = folder / "task.toml"
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise TaskFormatError(f"{path}: no such task file") from e
    except tomllib.TOMLDecodeError as e:
        raise TaskFormatError(f"{path}: not valid TOML: {e}") from e
    variants = _variants(path, raw)
    if (
        isinstance(variant, bool)
        or not isinstance(variant, int)
        or not 0 <= variant < len(variants)
    ):
        raise ValueError(f"{path}: expected a variant in 0..{len(variants) - 1}, got {variant!r}")
    used: set[str] = set()
    raw = _substitute(path, raw, variants[variant], used)
    unused = sorted(set(variants[0]) - used)
    if unused:
        names = ", ".join(repr(name) for name in unused)
        raise TaskFormatError(
            f"{path}: [[variants]] name {names}, which no ${{...}} uses; expected each name"
            " used in the script, answers, evidence or config, or the name removed from every"
            " variant (a task without variety has no [[variants]])"
        )

    top = _Table(path, raw, "")
    task_id, category, number = _read_id(top, folder, own_suite=namespace is not None)
    categories = tuple(CATEGORIES) if namespace is None else (category,)
    got_category = top.choice("category", categories, default=category)
    if got_category != category:
        top.fail("category", f"{category!r} (from the id)", got_category)
    title = top.string("title")
    tier = top.choice("tier", TIERS)
    axes = top.get(
        "axes",
        f"a non-empty list drawn from {', '.join(AXES)}",
        lambda v: (
            isinstance(v, list) and bool(v) and all(a in AXES for a in v) and len(set(v)) == len(v)
        ),
        convert=tuple,
    )
    if category != "S":
        if tier == "hard" and set(axes) != set(AXES):
            top.fail("axes", "all three axes for a hard task", list(axes))
        if tier == "easy" and not ({"audio", "visual"} & set(axes)):
            top.fail("axes", "audio or visual for an easy task", list(axes))
    instruction = top.string("instruction")
    duration = top.number("duration_s", minimum=0.1)
    time_limit = top.number("time_limit_s", minimum=0.1)
    if time_limit < duration:
        top.fail("time_limit_s", f"at least duration_s ({duration:g})", time_limit)
    success = top.string("success", default="success")
    failures = top.strings("failures", default=("wrong_answer",), nonempty=False)
    reserved = {"pending", "timeout", success}
    for name in failures:
        if name in reserved:
            top.fail("failures", f"names other than {sorted(reserved)}", name)
    page = top.string("page", default="index.html")
    app = top.string("app", default="")
    if app and not (app_folder(app) / "index.html").is_file():
        top.fail("app", "the name of a folder in tasks/_shared/apps/ with an index.html", app)
    if not app and not (folder / page).is_file():
        top.fail("page", f"a file in {folder}", page)
    config = top.table("config")
    check_config(path, app, config)
    listens = top.flag("listens")
    checklist = top.table("checklist")
    for name, meaning in checklist.items():
        if not CRITERION.match(name):
            top.fail("checklist", "criteria named like answer fields (letters, digits, _)", name)
        if not isinstance(meaning, str) or not meaning.strip():
            top.fail(f"checklist.{name}", "a non-empty string saying what it checks", meaning)
    if len(checklist) == 1:
        top.fail("checklist", "two criteria or more (one is the task's success)", checklist)

    speakers = _read_speakers(top)
    script = _read_script(top, speakers)
    answers = _read_answers(top)
    evidence = _read_evidence(top)
    solution = _read_solution(top, answers, listens)
    top.finish()
    _check_follows(path, evidence, solution)

    return TaskSpec(
        id=task_id if namespace is None else f"{namespace}/{task_id}",
        title=title,
        category=category,
        number=int(number),
        tier=tier,
        axes=axes,
        instruction=instruction,
        duration_s=duration,
        time_limit_s=time_limit,
        root=folder.resolve(),
        success=success,
        failures=failures,
        page=page,
        app=app,
        config=config,
        speakers=speakers,
        script=tuple(sorted(script, key=lambda line: line.t)),
        answers=answers,
        evidence=tuple(evidence),
        solution=tuple(solution),
        listens=listens,
        checklist=dict(checklist),
        variant=variant,
        variants=len(variants),
    )
