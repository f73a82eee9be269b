"""What a task's verdicts depend on, as hashes: a changed task is run and judged again."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from pathlib import Path

from dynacu_gym.harness.audit.judges import TIMELINE_MODE
from dynacu_gym.harness.runner import EPISODES_FILE, read_lines
from dynacu_gym.modes import MODE_CHANNELS, MODES
from dynacu_gym.paths import tasks_root
from dynacu_gym.tasks import CONFIG_KEYS_FILE, TaskSpec, find_task

# Shared files no task page loads: the normalisation cases only tests read, and the microphone
# check page only check-task opens. Editing one changes no episode.
NOT_IN_EPISODES = frozenset({"normalize-cases.json", "reading-cases.json", "mic-check.html"})


def fingerprint(task: TaskSpec) -> str:
    """A hash of what the task's episodes depend on.

    That is the task less its evidence (which only the audit reads) and where it lies, its
    other files, its app's, the page runtime shared by every app (``tasks/_shared/`` but
    the other apps and :data:`NOT_IN_EPISODES`), and the modes the audit runs with their
    channels and the timeline's (episodes watched before a mode gained a channel, the element
    list, lack what it shows).
    """
    modes = {m: MODE_CHANNELS[m] for m in MODES}, TIMELINE_MODE
    task_part = repr(dataclasses.replace(task, evidence=(), root=Path()))
    digest = hashlib.sha256((task_part + repr(modes)).encode())
    shared = tasks_root() / "_shared"
    parts = [
        (task.root, [p for p in task.root.rglob("*") if p.name != "task.toml"]),
        (
            shared,
            [
                p
                for p in shared.rglob("*")
                if p.relative_to(shared).parts[0] not in ("apps", *NOT_IN_EPISODES)
            ],
        ),
    ]
    if task.app:
        # The app's config-keys.toml is read by the loader, never by a page: it changes no
        # episode, so declaring a key must not make the app's tasks run again.
        app_files = (shared / "apps" / task.app).rglob("*")
        parts.append((shared, [p for p in app_files if p.name != CONFIG_KEYS_FILE]))
    for root, paths in parts:
        for path in sorted(p for p in paths if p.is_file()):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def task_hash(task: TaskSpec) -> str:
    """A hash of all the audit's verdicts on the task depend on: its episodes and its evidence."""
    return hashlib.sha256((fingerprint(task) + repr(task.evidence)).encode()).hexdigest()[:16]


def forget_changed(out: Path, tasks: list[str]) -> list[str]:
    """Drop the episodes and traces of tasks whose files changed since they ran.

    Returns the ids dropped. ``out/fingerprints.json`` keeps what each task's episodes ran on.
    """
    path = out / "fingerprints.json"
    known = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    now = {t: fingerprint(find_task(t)) for t in tasks}
    changed = [t for t in tasks if t in known and known[t] != now[t]]
    if changed:
        for episodes in out.glob(f"*/{EPISODES_FILE}"):
            kept = [line for line in read_lines(episodes) if line["task"] not in changed]
            episodes.write_text("".join(json.dumps(line) + "\n" for line in kept), "utf-8")
        for trace in out.glob("*/traces/*"):
            if trace.name.split("-", 1)[0] in changed:
                shutil.rmtree(trace)
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**known, **now}, indent=1, sort_keys=True), encoding="utf-8")
    return changed
