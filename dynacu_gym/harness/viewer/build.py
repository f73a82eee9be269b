"""The viewer's site: what a run folder holds, gathered into pages that read it in place.

:func:`build_site` reads ``RUN/episodes.jsonl`` and ``RUN/traces/*/`` and writes ``RUN/view/``:
``index.html`` (every episode, with the report's charts) and ``episodes/<trace>.html`` (one
episode on its time axis). Each page holds its data as JSON in a ``<script>`` element, so it
opens from the file system as well as from a server; screenshots, keyframes and the speaker
capture stay in the traces and are loaded by the browser only when shown.

What is missing (no trace, a trace cut short, no speaker capture, a line still being written)
is said on the page that lacks it; the rest is built.
"""

from __future__ import annotations

import html
import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynacu_gym.harness.lines import load_episodes_leniently
from dynacu_gym.harness.runner import EPISODES_FILE, TRACES_DIR, trace_name
from dynacu_gym.harness.trace import (
    OUTCOME_FILE,
    SPEAKER_FILE,
    TRACE_FILE,
    VIDEO_FILE,
    VOICE_FILE,
)

VIEW_DIR = "view"  # under the run folder
STATIC = Path(__file__).parent / "static"
RECORD_LIMIT = 20_000  # characters of one step's record kept on its page
WORDS_PER_S = 2.6  # a spoken line's length when its clip's duration is unknown


@dataclass
class Problem:
    """Something the run folder lacks or holds broken, and where."""

    where: str
    what: str


@dataclass
class Episode:
    """One episode as the viewer knows it: its line, its trace, or both."""

    name: str  # the trace folder's name, and the page's
    line: dict[str, Any] | None = None
    trace: Path | None = None
    problems: list[str] = field(default_factory=list)


def _read_lines(path: Path) -> tuple[list[dict[str, Any]], list[Problem]]:
    """The run's episode lines; a line that does not load is a problem, not an error."""
    if not path.is_file():
        return [], [Problem(str(path), "no episode lines (not a run folder, or none finished)")]
    episodes, bad = load_episodes_leniently(path)
    return episodes, [Problem(where, what) for where, what in bad]


def _read_json_lines(path: Path) -> tuple[list[dict[str, Any]], str]:
    """A trace's step lines, and what is wrong with them (empty when nothing is)."""
    steps, problem = [], ""
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            step = json.loads(text)
        except json.JSONDecodeError:
            problem = f"{path.name} line {number} is cut short: the steps after it are missing"
            break
        if isinstance(step, dict) and isinstance(step.get("step"), int):
            steps.append(step)
    return steps, problem


def gather(run: Path) -> tuple[list[Episode], list[Problem]]:
    """The run's episodes in line order (then traces without a line), and the run's problems."""
    lines, problems = _read_lines(run / EPISODES_FILE)
    traces_root = run / TRACES_DIR
    traces = {p.name: p for p in sorted(traces_root.glob("*")) if p.is_dir()}
    episodes: list[Episode] = []
    for line in lines:
        name = trace_name(line["task"], line["mode"], line["agent"], line["model"], line["repeat"])
        episodes.append(Episode(name, line, traces.pop(name, None)))
    for name, path in traces.items():  # a trace whose episode has no line yet
        episodes.append(Episode(name, None, path, ["no episode line: still running, or stopped"]))
    return episodes, problems


# ---- one episode's data -------------------------------------------------------------------------


def _script(
    task_id: str, variant: int, problems: list[str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The task's title and instruction, and the lines its page says (start, end, who, words).

    A task that cannot be found or loaded adds to ``problems`` why its page shows neither.
    """
    from dynacu_gym.tasks import all_task_folders, load_task
    from dynacu_gym.tasks.audio_assets import read_manifest, spoken_lines

    try:
        folder = all_task_folders().get(task_id)
    except (ValueError, OSError) as exc:  # a suite that no longer reads
        problems.append(f"the task folders could not be listed: {exc}")
        return {}, []
    if folder is None:
        where = " or in a suite $DYNACU_TASK_PATH names" if "/" in task_id else ""
        problems.append(
            f"task {task_id} is not in the catalogue{where} where this view was built: "
            "its title and the page's script are not shown"
        )
        return {}, []
    try:
        task = load_task(folder, variant, namespace=task_id.rpartition("/")[0] or None)
    except (ValueError, OSError) as exc:
        problems.append(f"task {task_id} (variant {variant}) did not load: {exc}")
        return {}, []
    manifest = read_manifest(task) if task.variant == 0 else None
    clips = manifest.get("clips", []) if manifest else []
    said = []
    for k, (_, line) in enumerate(spoken_lines(task)):
        duration = clips[k]["duration"] if k < len(clips) else len(line.say.split()) / WORDS_PER_S
        said.append(
            {"start": line.t, "end": round(line.t + duration, 3), "who": line.speaker,
             "text": line.say}
        )  # fmt: skip
    about = {
        "title": task.title,
        "instruction": task.instruction,
        "duration_s": task.duration_s,
        "time_limit_s": task.time_limit_s,
    }
    return about, said


def _transcript(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sentences the transcript channel gave, each as last seen (committed text wins).

    Each keeps the step whose record first held it.
    """
    by_start: dict[float, dict[str, Any]] = {}
    for step in steps:
        for seg in step.get("transcript", []):
            start = round(float(seg["start"]), 1)
            known = by_start.get(start)
            if known is None or seg.get("stable") or not known["stable"]:
                by_start[start] = {
                    "start": seg["start"], "end": seg["end"], "text": seg["text"],
                    "stable": bool(seg.get("stable")),
                    "step": known["step"] if known else step["step"],
                }  # fmt: skip
    return [by_start[k] for k in sorted(by_start)]


def _step_files(trace: Path, step: dict[str, Any], rel: str) -> tuple[dict[str, Any], list[str]]:
    """A step's screenshot, keyframes and record, as the page refers to them."""
    name = f"{step['step']:04d}"
    missing = []
    screen = trace / "screens" / f"{name}.png"
    keyframes = []
    for k, t in enumerate(step.get("keyframe_times", []), start=1):
        path = trace / "keyframes" / f"{name}-{k}.png"
        if path.is_file():
            keyframes.append({"t": t, "src": f"{rel}/keyframes/{name}-{k}.png"})
        else:
            missing.append(f"keyframes/{name}-{k}.png")
    record_path = trace / "records" / f"{name}.txt"
    record = None
    if record_path.is_file():
        record = record_path.read_text(encoding="utf-8", errors="replace")
        if len(record) > RECORD_LIMIT:
            record = record[:RECORD_LIMIT] + f"\n[... {len(record) - RECORD_LIMIT} more characters]"
    else:
        missing.append(f"records/{name}.txt")
    if not screen.is_file():
        missing.append(f"screens/{name}.png")
    files = {
        "screen": f"{rel}/screens/{name}.png" if screen.is_file() else None,
        "keyframes": keyframes,
        "record": record,
    }
    return files, missing


def episode_data(episode: Episode, rel: str) -> dict[str, Any]:
    """Everything one episode's page shows; ``rel``: the trace folder from the page."""
    line = dict(episode.line or _named(episode.name))
    problems = list(episode.problems)
    steps: list[dict[str, Any]] = []
    outcome: dict[str, Any] = {}
    audio = voice = video = None
    if episode.trace is None:
        problems.append("no trace: run with --traces to see what the agent saw, heard and did")
    else:
        trace = episode.trace
        if (trace / TRACE_FILE).is_file():
            raw, cut = _read_json_lines(trace / TRACE_FILE)
            if cut:
                problems.append(cut)
        else:
            raw = []
            problems.append(f"the trace has no {TRACE_FILE}: no steps to show")
        missing: list[str] = []
        for step in raw:
            files, lost = _step_files(trace, step, rel)
            missing += lost
            steps.append({**step, **files})
        if missing:
            shown = ", ".join(missing[:5]) + (
                f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            )
            problems.append(f"missing from the trace: {shown}")
        if (trace / SPEAKER_FILE).is_file():
            audio = f"{rel}/{SPEAKER_FILE}"
        else:
            problems.append(f"no speaker capture ({SPEAKER_FILE}): nothing to play")
        if (trace / VIDEO_FILE).is_file():
            video = f"{rel}/{VIDEO_FILE}"
        if (trace / VOICE_FILE).is_file():
            voice = f"{rel}/{VOICE_FILE}"
        elif any(s.get("speech") for s in steps):
            problems.append(f"the agent spoke, but the trace has no {VOICE_FILE} to play")
        if (trace / OUTCOME_FILE).is_file():
            try:
                outcome = json.loads((trace / OUTCOME_FILE).read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                problems.append(f"{OUTCOME_FILE} is cut short")
        elif episode.line is None:
            problems.append(f"no {OUTCOME_FILE}: the episode did not finish")
    for key in ("task", "mode", "agent", "repeat", "result", "success", "credit", "steps"):
        if episode.line is None and key in outcome:
            line[key] = outcome[key]
    task_id = str(line.get("task", episode.name.split("-", 1)[0]))
    variant = int(line.get("variant", outcome.get("variant", 0)) or 0)
    about, page_said = _script(task_id, variant, problems)
    agent_said = [
        {"start": s["speech"]["starts_at"], "end": s["speech"]["ends_at"],
         "text": s["speech"].get("text", ""), "step": s["step"]}
        for s in steps
        if isinstance(s.get("speech"), dict) and "starts_at" in s["speech"]
    ]  # fmt: skip
    return {
        "name": episode.name,
        "line": line,
        "task": {"id": task_id, **about},
        "problems": problems,
        "steps": steps,
        "audio": audio,
        "voice": voice,
        "video": video,
        "page_said": page_said,
        "transcript": _transcript(steps),
        "agent_said": agent_said,
        "heard": outcome.get("heard", line.get("heard", [])),
        "spoken_answers": outcome.get("spoken_answers", line.get("spoken_answers", [])),
        "errors": outcome.get("errors", []),
    }


# ---- the pages ----------------------------------------------------------------------------------


def _json_for_script(value: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</`` to end it early)."""
    return json.dumps(value, separators=(",", ":")).replace("</", "<\\/")


def _page(title: str, body_class: str, data: Any, script: str, depth: int) -> str:
    up = "../" * depth
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="icon" href="data:,">\n'  # no request for a favicon the run lacks
        f'<link rel="stylesheet" href="{up}viewer.css">\n'
        f'</head><body class="{body_class}">\n'
        '<main id="app"><p class="loading">Loading...</p></main>\n'
        f'<script type="application/json" id="data">{_json_for_script(data)}</script>\n'
        f'<script src="{up}common.js"></script>\n<script src="{up}{script}"></script>\n'
        "</body></html>\n"
    )


def _named(name: str) -> dict[str, Any]:
    """Task, mode, agent and repeat read back from a trace's name (for a trace with no line)."""
    parts = name.split("-")
    if len(parts) < 4 or not parts[-1].isdigit():
        return {"task": parts[0]}
    return {"task": parts[0], "mode": parts[1], "agent": parts[2], "repeat": int(parts[-1])}


def _index_row(episode: Episode, has_page: bool) -> dict[str, Any]:
    line = episode.line or _named(episode.name)
    return {
        "name": episode.name,
        "page": f"episodes/{episode.name}.html" if has_page else None,
        "task": line.get("task", episode.name.split("-", 1)[0]),
        "category": line.get("category", ""),
        "mode": line.get("mode", ""),
        "agent": line.get("agent", ""),
        "model": line.get("model") or "",
        "repeat": line.get("repeat", ""),
        "result": "(running)" if episode.line is None else line.get("result", ""),
        "success": line.get("success"),
        "steps": line.get("steps", ""),
        "wall_s": line.get("wall_s", ""),
        "credit": line.get("credit", ""),
        "infra_error": line.get("infra_error", ""),
        "trace": episode.trace is not None,
        "problems": episode.problems,
    }


def _charts(episodes: list[Episode], view: Path) -> tuple[list[str], str]:
    """The report's charts under ``view/report/``; or why there are none."""
    lines = [e.line for e in episodes if e.line is not None]
    if not lines:
        return [], "no finished episodes to chart"
    try:
        from dynacu_gym.harness.report import write_report

        paths = write_report(lines, view / "report")
    except ImportError:
        return [], "charts need matplotlib: pip install 'dynacu-gym[report]'"
    names = ("success_by_mode", "success_by_category")
    return [f"report/{paths[n].name}" for n in names if n in paths], ""


def build_site(run: str | Path) -> Path:
    """Write the viewer into ``RUN/view/`` and return its ``index.html``.

    Raises:
        ValueError: ``run`` is not a folder, or holds neither episode lines nor traces.
    """
    run = Path(run)
    if not run.is_dir():
        raise ValueError(f"{run}: no such run folder")
    started = time.monotonic()
    episodes, problems = gather(run)
    if not episodes:
        found = "; ".join(f"{p.where}: {p.what}" for p in problems)
        raise ValueError(
            f"{run}: expected a run folder with {EPISODES_FILE} or {TRACES_DIR}/ "
            f"(from dynacu eval --traces); {found or 'it has neither'}"
        )
    view = run / VIEW_DIR
    pages = view / "episodes"
    pages.mkdir(parents=True, exist_ok=True)
    for old in pages.glob("*.html"):
        old.unlink()
    for asset in STATIC.iterdir():
        shutil.copyfile(asset, view / asset.name)
    rows = []
    for episode in episodes:
        data = episode_data(episode, f"../../{TRACES_DIR}/{episode.name}")
        title = f"{data['task']['id']} {data['line'].get('mode', '')} - {episode.name}"
        (pages / f"{episode.name}.html").write_text(
            _page(title, "episode", data, "episode.js", 1), encoding="utf-8"
        )
        rows.append(_index_row(episode, True))
    charts, no_charts = _charts(episodes, view)
    index = {
        "run": str(run.resolve()),
        "built_at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "build_s": round(time.monotonic() - started, 2),
        "episodes": rows,
        "problems": [{"where": p.where, "what": p.what} for p in problems],
        "charts": charts,
        "no_charts": no_charts,
    }
    (view / "index.html").write_text(_page(f"Run {run.name}", "index", index, "index.js", 0))
    return view / "index.html"
