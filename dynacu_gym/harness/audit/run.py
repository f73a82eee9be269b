"""Running the audit: its episodes through the runner, then the judges."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dynacu_gym.harness.audit.fingerprints import forget_changed, task_hash
from dynacu_gym.harness.audit.judges import (
    STEP_S,
    TIMELINE,
    TIMELINE_MODE,
    frames_to_read,
    judge_evidence,
    judge_silent,
)
from dynacu_gym.harness.audit.observed import Observed, read_trace
from dynacu_gym.harness.audit.reading import ocr_all, tesseract
from dynacu_gym.harness.audit.summary import write_audit
from dynacu_gym.harness.choices import CHECKS
from dynacu_gym.harness.runner import (
    AgentSpec,
    EpisodeSpec,
    episode_seed,
    evaluate,
    trace_dir,
)
from dynacu_gym.harness.trace import TRACE_FILE
from dynacu_gym.modes import MODES, check_mode
from dynacu_gym.tasks import TaskSpec, find_task

TIMELINE_STEP_S = 5.0
TIMELINE_ENV = {"max_keyframes": 16}  # 5 s at 3 frames a second fits: nothing is dropped


def check_audit_scope(checks: Iterable[str], modes: Iterable[str]) -> tuple[list[str], list[str]]:
    """The checks and perceive modes an audit runs, in their canonical order.

    Raises:
        ValueError: an unknown check or mode, a mode the audit does not watch, or none.
    """
    checks, modes = list(checks), [check_mode(m) for m in modes]
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        expected = ", ".join(CHECKS)
        raise ValueError(f"unknown audit check {unknown[0]!r}; expected some of {expected}")
    others = [m for m in modes if m not in MODES]
    if others:
        raise ValueError(
            f"the audit watches the preset modes, not {others[0]!r}; expected some of "
            + ", ".join(MODES)
        )
    if not checks:
        raise ValueError(f"expected at least one audit check of {', '.join(CHECKS)}")
    if not modes and ("evidence" in checks or "silent" in checks):
        raise ValueError("the evidence and silent checks watch in modes: expected at least one")
    return [c for c in CHECKS if c in checks], [m for m in MODES if m in modes]


def run_audit(
    tasks: list[str],
    out: Path,
    seeds: int = 3,
    workers: int = 2,
    step_s: float = STEP_S,
    base_seed: int = 0,
    checks: Iterable[str] = CHECKS,
    modes: Iterable[str] = MODES,
    traces: bool = False,
) -> list[dict[str, Any]]:
    """Run ``checks`` on ``tasks`` and return the rows.

    ``traces`` records the solvable, random, null and near-miss episodes' traces too (the
    watchers' always are), for ``dynacu view``.

    The evidence and silent checks watch in ``modes`` (the evidence check's timeline runs
    whatever they are). A part of the checks or modes makes a partial audit, whose rows
    replace those of the same task, check and mode when merged over a whole one
    (:func:`merge_audits`): one mode judged again, say, when it gains a channel.

    Resumes what ``out`` already holds; writes ``audit.jsonl`` and ``audit.md`` there.
    """
    if seeds < 1:
        raise ValueError(f"expected seeds >= 1, got {seeds}")
    if step_s <= 0:
        raise ValueError(f"expected step_s > 0, got {step_s}")
    checks, modes = check_audit_scope(checks, modes)
    tesseract()  # a missing OCR fails here, before any episode runs
    specs = [find_task(t) for t in tasks]
    forget_changed(out, tasks)
    rows: list[dict[str, Any]] = []
    runs = [
        ("solvable", AgentSpec("oracle"), ["aoi_interactive"], seeds, True),
        (
            "random",
            AgentSpec("random", {"seed": base_seed, "can_speak": True}),
            ["aoi_interactive"],
            1,
            False,
        ),
    ]
    for check, agent, run_modes, repeats, should_succeed in runs:
        if check not in checks:
            continue
        lines = evaluate(
            agent, tasks, run_modes, out / check, repeats, workers, base_seed, traces=traces
        )
        rows += [_episode_row(check, line, should_succeed) for line in lines]
    for group, options in _waiting_groups(specs) if "null" in checks else []:
        lines = evaluate(
            AgentSpec("null"),
            group,
            ["standard"],
            out / "null",
            1,
            workers,
            base_seed,
            traces=traces,
            env_options=options,
        )
        rows += [_episode_row("null", line, False) for line in lines]
    answered = [t.id for t in specs if t.answers]
    if answered and "nearmiss" in checks:
        nearmiss = AgentSpec("nearmiss")
        lines = evaluate(
            nearmiss,
            answered,
            ["aoi_interactive"],
            out / "nearmiss",
            1,
            workers,
            base_seed,
            traces=traces,
        )
        rows += [_episode_row("nearmiss", line, False) for line in lines]
    watched = "evidence" in checks or "silent" in checks
    watcher = AgentSpec("watcher", {"look_s": step_s})
    if watched:
        evaluate(watcher, tasks, modes, out / "perceive", 1, workers, base_seed, traces=True)
    recorder = AgentSpec("watcher", {"look_s": TIMELINE_STEP_S, "finish": False})
    for group, options in _waiting_groups(specs) if "evidence" in checks else []:
        evaluate(
            recorder,
            group,
            [TIMELINE_MODE],
            out / TIMELINE,
            1,
            workers,
            base_seed,
            traces=True,
            env_options={**TIMELINE_ENV, **options},
        )

    def trace(folder: str, task: str, mode: str, agent: AgentSpec) -> Observed | None:
        spec = EpisodeSpec(task, mode, 0, episode_seed(task, 0, base_seed))
        path = trace_dir(out / folder, spec, agent)
        return read_trace(path) if (path / TRACE_FILE).is_file() else None

    for task in specs if watched else []:
        observed = {m: trace("perceive", task.id, m, watcher) for m in modes}
        present = {m: o for m, o in observed.items() if o is not None}
        if "evidence" in checks:
            timeline = trace(TIMELINE, task.id, TIMELINE_MODE, recorder)
            ocr_all(frames_to_read(task, present, timeline), workers)
            rows += judge_evidence(task, present, timeline, step_s)
        if "silent" in checks and task.category == "S":
            rows += judge_silent(task, present)

    hashes = {task.id: task_hash(task) for task in specs}
    rows = [{**row, "task_hash": hashes[row["task"]]} for row in rows]
    write_audit(out, rows, tasks, step_s)
    return rows


def _waiting_groups(specs: list[TaskSpec]) -> list[tuple[list[str], dict[str, Any]]]:
    """The tasks in groups, each with the env options of the runs that wait for the page's end.

    The null agent and the timeline wait until the page calls time. A static control (category
    S) has nothing that moves or plays after it loads, so its wait ends at its ``duration_s``
    rather than its time limit (180 s, for an agent to fill a form): those minutes would show
    the same screen, and no timer of the page could end them otherwise.
    """
    dynamic = [t.id for t in specs if t.category != "S"]
    groups: list[tuple[list[str], dict[str, Any]]] = [(dynamic, {})] if dynamic else []
    static: dict[float, list[str]] = {}
    for task in specs:
        if task.category == "S":
            static.setdefault(task.duration_s, []).append(task.id)
    groups += [(ids, {"time_limit_s": limit}) for limit, ids in sorted(static.items())]
    return groups


def _episode_row(check: str, line: dict[str, Any], should_succeed: bool) -> dict[str, Any]:
    ok = bool(line["success"]) == should_succeed and not line.get("infra_error")
    reason = ""
    if line.get("infra_error"):
        reason = f"infrastructure fault: {line['infra_error']}"
    elif not ok:
        reason = (
            f"the scripted solution ended {line['result']!r}"
            if should_succeed
            else f"the {line['agent']} agent solved it"
        )
    return {
        "task": line["task"],
        "check": check,
        "mode": line["mode"],
        "repeat": line["repeat"],
        "seed": line["seed"],
        "result": line["result"],
        "ok": ok,
        "reason": reason,
    }
