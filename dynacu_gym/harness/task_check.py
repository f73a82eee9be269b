"""``dynacu check-task``: is a task of one's own well formed, solvable and fair?

The checks, in the order they run (``--only`` picks some):

- ``format``: every variant loads (ids, ``[config]`` keys, answers, evidence, solution).
- ``audio``: the benchmark variant's rendered speech is current with its script.
- ``forms``: the page accepts every accepted form and rejects every near miss; where the
  solution speaks, each form of every variant, said in the agent's voice into a listening
  page's microphone, is heard as what it is (accepted, or a near miss). That each form reads
  as its kind, the loader checks.
- ``variants``: each variant but the benchmark's is solved by its scripted solution (in
  paused time, with the variant's answers and speech).
- ``solvable``, ``null``, ``random``, ``nearmiss``, ``evidence``, ``silent``: the audit's
  checks (:mod:`dynacu_gym.harness.audit`) on this task alone: the solution succeeds on each
  seed in real time (a spoken answer through the virtual microphone, heard by the page), an
  agent that waits, one that acts at random and one that gives the first near miss all fail,
  each evidence item is seen in the modes that should see it and in no other, and a static
  control says nothing.

A check that cannot run (the task does not load, its audio is stale) says why. The episodes
and the audit stay in ``--out`` (``runs/check/<id>``): ``dynacu view`` shows them, and a
second check of an unchanged task resumes there.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dynacu_gym.errors import AudioNotRendered, TaskFormatError
from dynacu_gym.harness.choices import CHECKS as AUDIT_CHECKS
from dynacu_gym.paths import tasks_root
from dynacu_gym.tasks import TaskSpec, file_stem, find_task, load_task, suites

if TYPE_CHECKING:
    from dynacu_gym.harness.spoken_forms import Heard

CHECKS = ("format", "audio", "forms", "variants", *AUDIT_CHECKS)
EPISODE_CHECKS = ("variants", *AUDIT_CHECKS)


@dataclass(frozen=True)
class CheckResult:
    """One check's verdict.

    Attributes:
        check: its name, one of :data:`CHECKS`.
        ok: True passed, False failed, None not run (``detail`` says why).
        detail: what was checked, or what failed.
    """

    check: str
    ok: bool | None
    detail: str

    @property
    def verdict(self) -> str:
        """``ok``, ``FAILED`` or ``not run``."""
        return {True: "ok", False: "FAILED", None: "not run"}[self.ok]


def resolve_task(task: str) -> str:
    """The id of ``task``: a task folder (its suite joins ``$DYNACU_TASK_PATH``) or an id.

    A folder under the benchmark's tasks is named by its id alone; one of a suite already on
    the path keeps that suite's namespace, any other is named by its suite folder's name.

    Raises:
        TaskFormatError: the folder is out of the layout, or its suite cannot be named.
        ValueError: a path that is not a task folder.
    """
    from dynacu_gym.harness.authoring import task_id_of
    from dynacu_gym.tasks.catalogue import add_to_task_path

    path = Path(task).expanduser()
    if not path.exists():
        return task.removesuffix("-v0").removeprefix("DynaCU-")
    if not (path / "task.toml").is_file():
        raise ValueError(f"{task}: expected a task folder holding task.toml, or a task id")
    path = path.resolve()
    local = task_id_of(path)
    if path.is_relative_to(tasks_root().resolve()):
        return local
    suite = path.parent.parent
    namespace = next((ns for ns, f in suites().items() if f == suite), suite.name)
    add_to_task_path(namespace, suite)
    return f"{namespace}/{local}"


def check_task(
    task_id: str,
    only: Iterable[str] | None = None,
    seeds: int = 2,
    modes: Iterable[str] | None = None,
    workers: int = 2,
    out: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[CheckResult]:
    """Run the checks ``only`` names (all by default) on ``task_id``; one result each.

    ``progress`` is told each form said and heard, as the forms check goes.

    Raises:
        ValueError: an unknown check, a bad seed count, or no such task.
    """
    chosen = list(CHECKS if only is None else only)
    unknown = [c for c in chosen if c not in CHECKS]
    if unknown:
        raise ValueError(f"unknown check {unknown[0]!r}; expected some of {', '.join(CHECKS)}")
    if seeds < 1:
        raise ValueError(f"expected --seeds >= 1, got {seeds}")
    chosen = [c for c in CHECKS if c in chosen]
    results: list[CheckResult] = []
    try:
        task = find_task(task_id)
        variants = [task] + [
            load_task(task.root, k, namespace=task.namespace) for k in range(1, task.variants)
        ]
    except TaskFormatError as e:
        if "format" in chosen:
            results.append(CheckResult("format", False, str(e)))
        return results + [CheckResult(c, None, "the task does not load") for c in chosen[1:]]
    if "format" in chosen:
        results.append(CheckResult("format", True, f"{len(variants)} variant(s) load"))
    audio = _check_audio(task)
    if "audio" in chosen:
        results.append(audio)
    if "forms" in chosen:
        results.append(_check_forms(variants, progress))
    episodes = [c for c in chosen if c in EPISODE_CHECKS]
    if audio.ok is False:
        return results + [CheckResult(c, None, "its audio is not current") for c in episodes]
    if "variants" in episodes:
        results.append(_check_variants(variants[1:]))
    audits = [c for c in episodes if c in AUDIT_CHECKS]
    if audits:
        out = out or Path("runs") / "check" / file_stem(task.id)
        results += _check_audit(task, audits, seeds, modes, workers, out)
    return results


def _check_audio(task: TaskSpec) -> CheckResult:
    from dynacu_gym.tasks.audio_assets import audio_clips

    try:
        clips = audio_clips(task)
    except AudioNotRendered as e:
        return CheckResult("audio", False, str(e))  # it says how to render it
    return CheckResult("audio", True, f"{len(clips)} clip(s) current" if clips else "no speech")


def _check_forms(
    variants: list[TaskSpec], progress: Callable[[str], None] | None = None
) -> CheckResult:
    """The answers' forms as the page judges them, typed and (where the solution speaks) said.

    Said: every form of every variant in the agent's voice, into a listening page's
    microphone (:mod:`dynacu_gym.harness.spoken_forms`). That each form reads as its kind and
    no near miss as an accepted form, the loader checks.
    """
    from dynacu_gym.harness.spoken_forms import hear_forms

    task = variants[0]
    if not task.answers:
        return CheckResult("forms", True, "no answer fields")
    problems = _page_forms(task)

    def tell(h: Heard) -> None:
        if progress is not None:
            verdict = h.verdict or "no answer"
            progress(f"forms: variant {h.variant} said {h.said!r}, heard {h.heard!r}: {verdict}")

    said = hear_forms(variants, tell) if task.solution_speaks else []
    faults, spoken = said_verdict(said, len(variants))
    problems += faults
    if problems:
        return CheckResult("forms", False, "; ".join(problems))
    n = sum(len(s.accept) + len(s.reject) for s in task.answers.values())
    return CheckResult("forms", True, f"{n} forms of {len(task.answers)} field(s) typed{spoken}")


def said_verdict(said: list[Heard], variants: int) -> tuple[list[str], str]:
    """The faults among the forms ``said`` (of ``variants`` variants), and a summary of them.

    A right answer misheard, or a near miss heard as right, is a fault. A near miss heard as
    nothing is not: it still fails the agent (as no answer, not as that near miss), and the
    summary lists it.
    """
    unheard = [h for h in said if h.unheard_near_miss]
    faults = [_misheard(h, variants) for h in said if not h.ok and not h.unheard_near_miss]
    if not said:
        return faults, ""
    summary = f"; {len(said) - len(unheard)} of {len(said)} said in {variants} variant(s)"
    summary += " heard as declared"
    if unheard:
        summary += f", and {len(unheard)} near miss(es) heard as no answer: "
        summary += "; ".join(_misheard(h, variants) for h in unheard)
    return faults, summary


def _misheard(h: Heard, variants: int) -> str:
    where = f"variant {h.variant}, " if variants > 1 else ""
    judged = f"finds it {h.verdict}" if h.verdict else "finds no answer in it"
    return (
        f"{where}{h.field} {h.form!r} ({h.want} form): said {h.said!r}, the listening page "
        f"heard {h.heard!r} and {judged}"
    )


def _page_forms(task: TaskSpec) -> list[str]:
    """What the page itself gets wrong: an accepted form it refuses, a near miss it takes."""
    from dynacu_gym.env import DynaCUEnv

    env = DynaCUEnv(task)
    problems = []
    try:
        env.reset(seed=0)
        for name, spec in task.answers.items():
            for form, want in [(f, True) for f in spec.accept] + [(f, False) for f in spec.reject]:
                got = env.evaluate_in_page("([f, t]) => DynaCU.matches(f, t)", [name, form])
                if bool(got) != want:
                    took = "refuses accepted form" if want else "accepts near miss"
                    problems.append(f"{name}: the page {took} {form!r}")
    finally:
        env.close()
    return problems


def _check_variants(others: list[TaskSpec]) -> CheckResult:
    from dynacu_agents import OracleAgent
    from dynacu_gym.env import make_env
    from dynacu_gym.harness.episode import run_episode

    if not others:
        return CheckResult("variants", True, "one variant: the benchmark's")
    failed = []
    for variant in others:
        env = make_env(variant, mode=variant.solution_mode, clock="paused")
        try:
            outcome = run_episode(env, OracleAgent(env), seed=0)
        finally:
            env.close()
        if not outcome.success:
            failed.append(f"variant {variant.variant}: the solution ended {outcome.result!r}")
    if failed:
        return CheckResult("variants", False, "; ".join(failed))
    return CheckResult("variants", True, f"variants 1..{len(others)} solved (paused time)")


def _check_audit(
    task: TaskSpec,
    checks: list[str],
    seeds: int,
    modes: Iterable[str] | None,
    workers: int,
    out: Path,
) -> list[CheckResult]:
    from dynacu_gym.harness.audit import run_audit
    from dynacu_gym.modes import MODES

    rows = run_audit(
        [task.id],
        out,
        seeds=seeds,
        workers=workers,
        checks=checks,
        modes=MODES if modes is None else list(modes),
        traces=True,
    )
    by_check: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        check = "evidence" if row["check"] == "unread" else row["check"]
        by_check.setdefault(check, []).append(row)
    results = []
    for check in checks:
        mine = by_check.get(check, [])
        if not mine:
            why = "a static control's check" if check == "silent" else "nothing to judge"
            results.append(CheckResult(check, None, why))
            continue
        bad = [r for r in mine if not r["ok"]]
        if bad:
            detail = "; ".join(_row_problem(r) for r in bad[:3])
            more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
            results.append(CheckResult(check, False, detail + more))
        else:
            results.append(CheckResult(check, True, _row_summary(check, mine)))
    return results


def _row_problem(row: dict[str, Any]) -> str:
    where = [row.get("mode") or ""]
    if "evidence" in row:
        keys = ", ".join(map(str, row.get("keys", [])))
        where.append(
            f"evidence #{row['evidence']} ({keys})" if keys else f"evidence #{row['evidence']}"
        )
    if "seed" in row:
        where.append(f"seed {row['seed']}")
    label = ", ".join(w for w in where if w)
    return f"{label}: {row.get('reason') or row.get('result')}"


def _row_summary(check: str, rows: list[dict[str, Any]]) -> str:
    if check == "evidence":
        items = {r["evidence"] for r in rows if "evidence" in r}
        unread = sum(r["check"] == "unread" for r in rows)
        note = f" ({unread} not text: unread)" if unread else ""
        return f"{len(items)} item(s), {len(rows) - unread} judgements as expected{note}"
    if check == "silent":
        modes = sorted({r["mode"] for r in rows})
        return f"no keyframe and no transcription in {', '.join(modes)}"
    results = sorted({r["result"] for r in rows})
    return f"{len(rows)} episode(s): {', '.join(results)}"


def cmd_check_task(args: argparse.Namespace) -> int:
    """``dynacu check-task``: print a table of the checks; 1 if any failed."""
    task_id = resolve_task(args.task)
    only = [c.strip() for c in args.only.split(",") if c.strip()] if args.only else None
    modes = [m.strip() for m in args.modes.split(",") if m.strip()] if args.modes else None
    out = Path(args.out) if args.out else None

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    results = check_task(task_id, only, args.seeds, modes, args.workers, out, progress)
    width = max(len(r.check) for r in results)
    for r in results:
        print(f"{r.check.ljust(width)}  {r.verdict.ljust(7)}  {r.detail}")
    failed = [r.check for r in results if r.ok is False]
    print(f"\n{task_id}: " + (f"failed {', '.join(failed)}" if failed else "every check passed"))
    return 1 if failed else 0
