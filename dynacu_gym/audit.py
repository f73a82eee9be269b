"""The validity audit: is every task solvable, unguessable, and in need of the channel it claims?

``dynacu audit`` runs, for each task:

1. **solvable**: the scripted solution (the oracle) in aoi_interactive, over ``seeds`` seeds;
   every episode must succeed.
2. **unguessable**: the null agent (standard), the random agent and the near-miss agent (the
   scripted solution answering with the task's first near misses), both in aoi_interactive;
   no episode may succeed.
3. **perceivable**: a passive observer (it only waits, ``step_s`` at a time, as an agent that
   thinks between steps would) in each of the five modes, with its whole trace saved. Each
   evidence item's keys (see :class:`dynacu_gym.tasks.Evidence`) are looked for in what that
   mode let the observer perceive: the transcript in the audio modes, and the screenshots and
   keyframes read by OCR (tesseract). An item is *seen* in a mode when at least half its keys
   are found in what was observed inside its window (a little slack either side). The
   benchmark's premise holds for an item when

   - audio evidence is seen in every audio mode and nowhere in standard or aoi_visual (there it
     would have reached the agent some other way than by ear: a leak);
   - transient visual evidence is seen in every keyframe mode and not in standard;
   - lasting visual evidence is seen in every mode.

Episodes go through the evaluation runner, one folder a check under ``OUT`` (each with its
``episodes.jsonl``), so a stopped audit resumes where it stopped; OCR text is cached next to
each image. The verdicts go to ``OUT/audit.jsonl`` (one line per task, check and mode) and
``OUT/audit.md`` (the summary, the table and every failure with its reason).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dynacu_gym.answers import mentions, normalize
from dynacu_gym.evaluation import AgentSpec, EpisodeSpec, episode_seed, evaluate, trace_dir
from dynacu_gym.modes import MODE_CHANNELS, MODES
from dynacu_gym.tasks import Evidence, find_task

AUDIO_MODES = tuple(m for m in MODES if "transcript" in MODE_CHANNELS[m])
KEYFRAME_MODES = tuple(m for m in MODES if "keyframes" in MODE_CHANNELS[m])
SLACK_S = (1.0, 3.0)  # seconds before and after an evidence window that still count
OBSERVER = "null"  # the passive observer is the null agent with a shorter wait

# A number, amount, time or percentage written in a fact: "2.6", "$4,800", "3:30", "15%".
_NUMBER_IN_FACT = re.compile(r"(?<![\w.])\$?\d[\d,]*(?:[.:]\d+)?%?(?![\w])")
_QUOTED = re.compile(r"[\"“']([^\"”']{2,60})[\"”']")
# A transcript line in a record: (12.3s–15.0s) "what was said"
_HEARD = re.compile(r"^\((\d+(?:\.\d+)?)s–(\d+(?:\.\d+)?)s\) \"(.*)\"", re.M)


class AuditError(RuntimeError):
    """The audit cannot run here (a missing tool, an unusable output folder)."""


def evidence_keys(item: Evidence) -> tuple[str, ...]:
    """The item's ``keys``, else the numbers and quoted words of its fact."""
    if item.keys:
        return item.keys
    found = [m.group(0).rstrip(",") for m in _NUMBER_IN_FACT.finditer(item.fact)]
    found += [m.group(1) for m in _QUOTED.finditer(item.fact)]
    return tuple(dict.fromkeys(found))


def key_found(key: str, text: str) -> bool:
    """Whether ``text`` (a transcript or OCR text) says ``key``.

    Numbers and times are normalised: "sixty" finds 60, "$4,800" finds 4800.
    """
    if any(ch.isdigit() for ch in key):
        kind = "time" if ":" in key else "number"
        if normalize(kind, key) is not None:
            return mentions(kind, [key], text, max_words=len(key.split()) + 2)
    wanted = normalize("text", key)
    if not wanted:
        return False
    return (
        re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", normalize("text", text) or "") is not None
    )


def seen(keys: Iterable[str], text: str) -> bool:
    """At least half the keys (and at least one) are in ``text``."""
    keys = list(keys)
    if not keys:
        return False
    return 2 * sum(key_found(k, text) for k in keys) >= len(keys)


def tesseract() -> str:
    """The tesseract executable.

    Raises:
        AuditError: tesseract is not installed.
    """
    path = shutil.which("tesseract")
    if path is None:
        raise AuditError(
            "the audit reads screenshots with tesseract, which is not installed; "
            "install the tesseract-ocr system package (make setup does)"
        )
    return path


def ocr(image: Path) -> str:
    """The text tesseract reads in ``image`` (cached in ``<image>.txt``).

    Raises:
        AuditError: tesseract is not installed.
    """
    cache = image.with_suffix(".txt")
    if cache.is_file():
        return cache.read_text(encoding="utf-8")
    # psm 11: sparse text, as a page's scattered labels, cells and buttons are.
    text = subprocess.run(
        [tesseract(), str(image), "-", "--psm", "11"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    cache.write_text(text, encoding="utf-8")
    return text


@dataclass(frozen=True)
class Observed:
    """What one passive episode let the observer perceive, with times (episode seconds)."""

    heard: tuple[tuple[float, float, str], ...]  # transcript segments (start, end, text)
    frames: tuple[tuple[float, Path], ...]  # screenshots and keyframes

    def text(self, start: float, end: float) -> str:
        """Everything heard and read between ``start`` and ``end``."""
        parts = [t for a, b, t in self.heard if b >= start and a <= end]
        parts += [ocr(path) for t, path in self.frames if start <= t <= end]
        return "\n".join(parts)


def read_trace(folder: Path) -> Observed:
    """The transcript segments and images of a saved trace."""
    heard: dict[tuple[float, str], tuple[float, float, str]] = {}
    frames: list[tuple[float, Path]] = []
    lines = (folder / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    for raw in lines:
        line = json.loads(raw)
        name = f"{line['step']:04d}"
        record = (folder / "records" / f"{name}.txt").read_text(encoding="utf-8")
        for m in _HEARD.finditer(record):
            a, b, said = float(m.group(1)), float(m.group(2)), m.group(3)
            heard[(round(a), said)] = (a, b, said)  # each step repeats recent segments
        frames.append((float(line["elapsed"]), folder / "screens" / f"{name}.png"))
        for k, t in enumerate(line.get("keyframe_times", [])):
            frames.append((float(t), folder / "keyframes" / f"{name}-{k + 1}.png"))
    return Observed(tuple(sorted(heard.values())), tuple(sorted(frames)))


def expected_seen(item: Evidence, mode: str) -> bool | None:
    """Whether the premise wants ``item`` seen in ``mode`` (None: either way is fine)."""
    if item.channel == "audio":
        return mode in AUDIO_MODES
    if not item.transient:
        return True
    if mode in KEYFRAME_MODES:
        return True
    return False if mode == "standard" else None


def judge_evidence(task_id: str, observed: dict[str, Observed]) -> list[dict[str, Any]]:
    """One row per (evidence item, mode): seen or not, and whether the premise wants that."""
    task = find_task(task_id)
    rows = []
    for number, item in enumerate(task.evidence, start=1):
        keys = evidence_keys(item)
        lo, hi = item.window[0] - SLACK_S[0], item.window[1] + SLACK_S[1]
        for mode, obs in observed.items():
            # Present: inside the window. Absent: nowhere in the episode (a leak at any time
            # is a leak).
            want = expected_seen(item, mode)
            found = seen(keys, obs.text(lo, hi) if want is not False else obs.text(0.0, 1e9))
            ok = want is None or found == want
            reason = ""
            if not keys:
                ok, reason = False, "no keys to look for: give the evidence item keys"
            elif not ok:
                reason = f"{item.channel} evidence " + (
                    "not perceived" if want else "perceived where it should not be"
                )
            rows.append(
                {
                    "task": task_id,
                    "check": "evidence",
                    "mode": mode,
                    "evidence": number,
                    "channel": item.channel,
                    "transient": item.transient,
                    "keys": list(keys),
                    "seen": found,
                    "expected": want,
                    "ok": ok,
                    "reason": reason,
                }
            )
    return rows


def run_audit(
    tasks: list[str],
    out: Path,
    seeds: int = 3,
    workers: int = 2,
    step_s: float = 5.0,
    base_seed: int = 0,
) -> list[dict[str, Any]]:
    """Run every check on ``tasks`` and return the rows.

    Resumes what ``out`` already holds; writes ``audit.jsonl`` and ``audit.md`` there.
    """
    if seeds < 1:
        raise ValueError(f"expected seeds >= 1, got {seeds}")
    if step_s <= 0:
        raise ValueError(f"expected step_s > 0, got {step_s}")
    tesseract()  # a missing OCR fails here, before any episode runs
    rows: list[dict[str, Any]] = []
    runs = [
        ("solvable", AgentSpec("oracle"), ["aoi_interactive"], seeds, True),
        ("null", AgentSpec("null"), ["standard"], 1, False),
        (
            "random",
            AgentSpec("random", {"seed": 0, "can_speak": True}),
            ["aoi_interactive"],
            1,
            False,
        ),
    ]
    for check, agent, modes, repeats, should_succeed in runs:
        lines = evaluate(agent, tasks, modes, out / check, repeats, workers, base_seed)
        rows += [_episode_row(check, line, should_succeed) for line in lines]
    answered = [t for t in tasks if find_task(t).answers]
    if answered:
        lines = evaluate(
            AgentSpec("nearmiss"),
            answered,
            ["aoi_interactive"],
            out / "nearmiss",
            1,
            workers,
            base_seed,
        )
        rows += [_episode_row("nearmiss", line, False) for line in lines]

    observer = AgentSpec(OBSERVER, {"seconds": step_s})
    folder = out / "perceive"
    evaluate(observer, tasks, list(MODES), folder, 1, workers, base_seed, traces=True)
    for task in tasks:
        observed = {}
        for mode in MODES:
            spec = EpisodeSpec(task, mode, 0, episode_seed(task, 0, base_seed))
            trace = trace_dir(folder, spec, observer)
            if (trace / "trace.jsonl").is_file():
                observed[mode] = read_trace(trace)
        rows += judge_evidence(task, observed)

    with (out / "audit.jsonl").open("w", encoding="utf-8") as sink:
        for row in rows:
            sink.write(json.dumps(row) + "\n")
    (out / "audit.md").write_text(render_summary(rows, tasks), encoding="utf-8")
    return rows


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


def render_summary(rows: list[dict[str, Any]], tasks: list[str]) -> str:
    """The audit as Markdown.

    The headline figures, evidence recall per channel and mode, the task x check table, and
    every failure with its reason.
    """
    by_task: dict[str, list[dict[str, Any]]] = {t: [] for t in tasks}
    for row in rows:
        by_task.setdefault(row["task"], []).append(row)

    def passed(task: str, check: str) -> bool | None:
        mine = [r for r in by_task[task] if r["check"] == check]
        return all(r["ok"] for r in mine) if mine else None

    n = len(tasks)
    solvable = sum(passed(t, "solvable") is True for t in tasks)
    guessable = sum(
        any(passed(t, c) is False for c in ("null", "random", "nearmiss")) for t in tasks
    )
    premise = sum(passed(t, "evidence") is True for t in tasks)
    out = [
        "# Validity audit",
        "",
        f"- Solvable (every seed of the scripted solution succeeds): {solvable}/{n}",
        f"- Guessable (the null, random or near-miss agent succeeds): {guessable}/{n}",
        f"- Evidence where the premise holds (each item seen in the modes that should see it, "
        f"and not where it should not): {premise}/{n}",
        "",
        "## Evidence recall (share of items seen) per channel and mode",
        "",
        "| channel | " + " | ".join(MODES) + " |",
        "|---" * (len(MODES) + 1) + "|",
    ]
    evidence = [r for r in rows if r["check"] == "evidence"]
    for channel, transient in (("audio", None), ("visual", True), ("visual", False)):
        label = (
            channel
            if transient is None
            else f"{channel} ({'transient' if transient else 'lasting'})"
        )
        cells = []
        for mode in MODES:
            mine = [
                r
                for r in evidence
                if r["mode"] == mode
                and r["channel"] == channel
                and (transient is None or r["transient"] == transient)
            ]
            cells.append(f"{sum(r['seen'] for r in mine)}/{len(mine)}" if mine else "-")
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    checks = ("solvable", "null", "random", "nearmiss", "evidence")
    out += ["", "## Tasks", "", "| task | " + " | ".join(checks) + " |", "|---" * 6 + "|"]
    marks = {True: "pass", False: "FAIL", None: "-"}
    for task in tasks:
        out.append(f"| {task} | " + " | ".join(marks[passed(task, c)] for c in checks) + " |")
    failures = [r for r in rows if not r["ok"]]
    out += ["", f"## Failures ({len(failures)})", ""]
    for r in failures:
        where = r["mode"] + (f", evidence #{r['evidence']}" if r["check"] == "evidence" else "")
        out.append(f"- {r['task']} {r['check']} ({where}): {r['reason']}")
    return "\n".join(out) + "\n"
