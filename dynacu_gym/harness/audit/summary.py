"""The audit's rows on disk, merged from parts, and as Markdown."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dynacu_gym.errors import AuditError
from dynacu_gym.harness.audit.fingerprints import task_hash
from dynacu_gym.harness.audit.judges import (
    STANDARD,
    STEP_S,
    STRUCTURED,
    TIMELINE,
    has_lists,
)
from dynacu_gym.harness.choices import CHECKS
from dynacu_gym.harness.runner import read_lines
from dynacu_gym.modes import MODES
from dynacu_gym.tasks import all_task_folders, catalogue_order, find_task


def write_audit(
    out: Path,
    rows: list[dict[str, Any]],
    tasks: list[str],
    step_s: float = STEP_S,
    stale: Iterable[str] = (),
) -> None:
    """``out/audit.jsonl`` (the rows) and ``out/audit.md`` (:func:`render_summary`)."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / "audit.jsonl").open("w", encoding="utf-8") as sink:
        for row in rows:
            sink.write(json.dumps(row) + "\n")
    summary = render_summary(rows, tasks, step_s, stale)
    (out / "audit.md").write_text(summary, encoding="utf-8")


def merge_audits(folders: list[Path]) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """The rows of audits run in parts (a category at a time, say), as one audit.

    A task's rows of one check in one mode (its solution's seeds, its evidence items as the
    standard watcher saw them, its timeline) come whole from the last folder that judged them,
    so a partial audit (some checks, some modes) given after a whole one replaces just those.
    Returns the rows, the tasks in catalogue order, and the *stale* tasks: those with a row
    judged before their files or evidence changed (:func:`task_hash`), which no longer stands.

    Raises:
        AuditError: a folder holds no ``audit.jsonl``, or names a task not in the catalogue.
    """
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for folder in folders:
        path = folder / "audit.jsonl"
        if not path.is_file():
            raise AuditError(f"expected an audit in {folder}: it has no audit.jsonl")
        mine: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for row in read_lines(path):
            mine.setdefault((row["task"], row["check"], row["mode"]), []).append(row)
        groups.update(mine)
    by_task: dict[str, list[dict[str, Any]]] = {}
    for (task, _, _), rows in groups.items():
        by_task.setdefault(task, []).extend(rows)
    catalogue = all_task_folders()
    unknown = sorted(set(by_task) - set(catalogue))
    if unknown:
        raise AuditError(f"the audits name tasks not in the catalogue: {', '.join(unknown)}")
    tasks = sorted(by_task, key=catalogue_order)
    hashes = {t: task_hash(find_task(t)) for t in tasks}  # each reads the task's and app's files
    stale = [t for t in tasks if any(r.get("task_hash") != hashes[t] for r in by_task[t])]
    checks = {c: k for k, c in enumerate(CHECKS)}
    modes = {m: k for k, m in enumerate((TIMELINE, *MODES))}

    def place(row: dict[str, Any]) -> tuple[int, int, int]:
        check = checks.get(row["check"], len(checks))
        return check, row.get("evidence", 0), modes.get(row["mode"], len(modes))

    for t in tasks:
        by_task[t].sort(key=place)  # stable: a mode's seeds stay in order
    return [r for t in tasks for r in by_task[t]], tasks, stale


def _items(rows: list[dict[str, Any]]) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """Evidence rows by item: (task, evidence number) -> its rows, in every mode."""
    items: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in rows:
        items.setdefault((row["task"], row["evidence"]), []).append(row)
    return items


def _listed_headline(evidence: list[dict[str, Any]]) -> list[str]:
    """The headline's line on spoken evidence in the element lists (empty without lists).

    An item counts once, listed in any mode; only items judged with the lists count.
    """
    checked = [
        mine
        for mine in _items([r for r in evidence if r["channel"] == "audio"]).values()
        if any("listed" in r for r in mine)
    ]
    if not checked:
        return []
    listed = sum(any(r.get("listed") for r in mine) for mine in checked)
    return [
        f"- Audio evidence listed in page elements: {listed}/{len(checked)} (in any mode with "
        "the element list, at any time: must be none)"
    ]


def _recall_row(label: str, rows: list[dict[str, Any]], field: str, chance_mode: str) -> str:
    """A recall table row: per mode, how many ``rows`` hold ``field``; then a mean chance.

    The chance is the mean over ``chance_mode``'s rows that have one.
    """
    cells = []
    for mode in [*MODES, TIMELINE]:
        here = [r for r in rows if r["mode"] == mode]
        cells.append(f"{sum(bool(r[field]) for r in here)}/{len(here)}" if here else "-")
    chances = [r["chance"] for r in rows if r["mode"] == chance_mode and "chance" in r]
    cells.append(f"{sum(chances) / len(chances):.0%}" if chances else "-")
    return f"| {label} | " + " | ".join(cells) + " |"


def _listed_recall(evidence: list[dict[str, Any]]) -> list[str]:
    """The recall table's rows for the element lists: items they held, per mode.

    A mode without lists, or rows judged before them, show "-". The chance column is
    standard_structured's: screenshot-only agents that read the list too.
    """
    out = []
    for channel, transient in (("audio", None), ("visual", True), ("visual", False)):
        mine = [
            r
            for r in evidence
            if r["channel"] == channel
            and (transient is None or r["transient"] == transient)
            and "listed" in r
        ]
        if not mine:
            continue
        kind = "" if transient is None else f" ({'transient' if transient else 'lasting'})"
        out.append(_recall_row(f"{channel}{kind}, listed", mine, "listed", STRUCTURED))
    return out


def _judged_without_lists(evidence: list[dict[str, Any]]) -> list[str]:
    """Tasks with a row of a mode that has element lists but no ``listed``: judged before them."""
    tasks = {r["task"] for r in evidence if has_lists(r["mode"]) and "listed" not in r}
    return sorted(tasks, key=catalogue_order)


def render_summary(
    rows: list[dict[str, Any]],
    tasks: list[str],
    step_s: float = STEP_S,
    stale: Iterable[str] = (),
) -> str:
    """The audit as Markdown.

    The headline figures, evidence recall per channel and mode (with what the element lists
    held), the task x check table, and every failure with its reason; the ``stale`` tasks,
    changed since they were judged; and the tasks judged before the element list, whose rows
    lack its checks (rows from before it have no ``listed``).
    """
    verdicts = _Verdicts(rows, tasks)
    evidence = [r for r in rows if r["check"] == "evidence"]
    stale = list(stale)
    unlisted = _judged_without_lists(evidence)
    out = _headline(verdicts, evidence, stale, unlisted)
    out += _recall_table(evidence, step_s)
    out += _task_table(verdicts)
    out += _evidence_table(evidence, tasks)
    out += _unread_section([r for r in rows if r["check"] == "unread"])
    out += _named_section(
        f"Changed since they were audited ({len(stale)})",
        "Their files or evidence changed after these rows were judged: audit them again.",
        stale,
    )
    out += _named_section(
        f"Judged before the element list ({len(unlisted)})",
        "Their rows were judged before the modes had the page elements channel, so they lack "
        "its checks (spoken evidence listed, a transient item's chance with the list): "
        "audit them again.",
        unlisted,
    )
    out += _failures(rows)
    return "\n".join(out) + "\n"


class _Verdicts:
    """Each task's verdict per check: passed (every row ok), failed, or None (not judged)."""

    def __init__(self, rows: list[dict[str, Any]], tasks: list[str]) -> None:
        self.tasks = tasks
        self.judged = {r["check"] for r in rows}  # a partial audit judges only some checks
        self.by_task: dict[str, list[dict[str, Any]]] = {t: [] for t in tasks}
        for row in rows:
            self.by_task.setdefault(row["task"], []).append(row)

    def passed(self, task: str, check: str) -> bool | None:
        mine = [r for r in self.by_task[task] if r["check"] == check]
        return all(r["ok"] for r in mine) if mine else None

    def figure(self, count: int, *checks: str) -> str:
        """``count/n``, or what says a partial audit did not run these checks."""
        n = len(self.tasks)
        return f"{count}/{n}" if self.judged & set(checks) else "not judged in this audit"


def _headline(
    verdicts: _Verdicts, evidence: list[dict[str, Any]], stale: list[str], unlisted: list[str]
) -> list[str]:
    tasks, passed, n = verdicts.tasks, verdicts.passed, len(verdicts.tasks)
    solvable = sum(passed(t, "solvable") is True for t in tasks)
    guessable = sum(
        any(passed(t, c) is False for c in ("null", "random", "nearmiss")) for t in tasks
    )
    premise = sum(passed(t, "evidence") is True for t in tasks)
    out = [
        "# Validity audit",
        "",
        "- Solvable (every seed of the scripted solution succeeds): "
        + verdicts.figure(solvable, "solvable"),
        "- Guessable (the null, random or near-miss agent succeeds): "
        + verdicts.figure(guessable, "null", "random", "nearmiss"),
        f"- Evidence where the premise holds (each item seen in the modes that should see it, "
        f"and not where it should not): {verdicts.figure(premise, 'evidence')}",
    ]
    static = [t for t in tasks if passed(t, "silent") is not None]
    if static:
        quiet = sum(passed(t, "silent") is True for t in static)
        out.append(
            f"- Static controls where the keyframe and audio channels stay silent (no keyframe, "
            f"no Whisper call, in every mode): {quiet}/{len(static)}"
        )
    out += _listed_headline(evidence)
    if stale:
        out.append(f"- Changed since they were audited (listed below): {len(stale)}/{n}")
    if unlisted:
        out.append(
            f"- Judged before the element list (no element checks, listed below): "
            f"{len(unlisted)}/{n}"
        )
    return out


def _recall_table(evidence: list[dict[str, Any]], step_s: float) -> list[str]:
    out = [
        "",
        "## Evidence recall per channel and mode",
        "",
        "Items seen by the watcher (the scripted solution, one look every "
        f"{step_s:g} s). *timeline*: the run that records every screen; an audio item there is "
        "one readable on the page. *chance*: the mean share of screenshot-only agents stepping "
        f"every {step_s:g} s that see a visual item. *listed*: items whose keys the page "
        "element lists alone held (audio: at any time, and none may be; visual: in the item's "
        "window), in the modes with the list; its chance is that of the same agents reading "
        "the list too (standard_structured's).",
        "",
        "| channel | " + " | ".join([*MODES, TIMELINE, "chance"]) + " |",
        "|---" * (len(MODES) + 3) + "|",
    ]
    for channel, transient in (("audio", None), ("visual", True), ("visual", False)):
        label = (
            channel
            if transient is None
            else f"{channel} ({'transient' if transient else 'lasting'})"
        )
        mine = [
            r
            for r in evidence
            if r["channel"] == channel and (transient is None or r["transient"] == transient)
        ]
        out.append(_recall_row(label, mine, "seen", STANDARD))
    return out + _listed_recall(evidence)


def _task_table(verdicts: _Verdicts) -> list[str]:
    out = [
        "",
        "## Tasks",
        "",
        "| task | " + " | ".join(CHECKS) + " |",
        "|---" * (len(CHECKS) + 1) + "|",
    ]
    marks = {True: "pass", False: "FAIL", None: "-"}
    for task in verdicts.tasks:
        cells = [marks[verdicts.passed(task, c)] for c in CHECKS]
        out.append(f"| {task} | " + " | ".join(cells) + " |")
    return out


def _evidence_table(evidence: list[dict[str, Any]], tasks: list[str]) -> list[str]:
    columns = [*MODES, TIMELINE]
    out = [
        "",
        "## Evidence by task and mode",
        "",
        "Items seen of the task's items (an audio item in the timeline: readable on the page); "
        "`!` marks a mode where an item failed its check.",
        "",
        "| task | " + " | ".join(columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for task in tasks:
        cells = []
        for mode in columns:
            here = [r for r in evidence if r["task"] == task and r["mode"] == mode]
            bad = "!" if any(not r["ok"] for r in here) else ""
            cells.append(f"{sum(r['seen'] for r in here)}/{len(here)}{bad}" if here else "-")
        out.append(f"| {task} | " + " | ".join(cells) + " |")
    return out


def _unread_section(unread: list[dict[str, Any]]) -> list[str]:
    if not unread:
        return []
    return [
        "",
        f"## Visual evidence that is not text ({len(unread)})",
        "",
        "Items without keys (a highlight, a shape): OCR cannot look for them, so they are "
        "not checked.",
        "",
    ] + [f"- {r['task']} #{r['evidence']}: {r['fact']}" for r in unread]


def _named_section(title: str, text: str, tasks: list[str]) -> list[str]:
    """A section naming ``tasks`` (none: no section)."""
    return ["", f"## {title}", "", text, "", ", ".join(tasks)] if tasks else []


def _failures(rows: list[dict[str, Any]]) -> list[str]:
    failures = [r for r in rows if not r["ok"]]
    out = ["", f"## Failures ({len(failures)})", ""]
    for r in failures:
        where = r["mode"] + (f", evidence #{r['evidence']}" if r["check"] == "evidence" else "")
        out.append(f"- {r['task']} {r['check']} ({where}): {r['reason']}")
    return out
