"""How fast `dynacu view` builds a large run, and how heavy its pages are.

A run of N episodes with traces is made in a temporary folder: one trace recorded for real
(``--trace DIR``, e.g. from ``dynacu run A1 --agent oracle --mode aoi_full --record DIR``) or, by
default, a synthetic one of 20 steps (full-size screenshots, two keyframes a step, records,
transcript, 30 s of speaker audio), hard-linked N times under the names of N episodes, with the
episode lines to match. The site is built ``--repeats`` times; printed: the build's median
seconds against the 60 s target for 500 episodes, the index's size against 1 MB, and an
episode page's size (images are referred to, never inlined).

    python benchmarks/viewer.py --episodes 500
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import wave
from pathlib import Path

import numpy as np

from dynacu_gym.harness.runner import trace_name
from dynacu_gym.harness.viewer import VIEW_DIR, build_site
from dynacu_gym.imaging import save_png

TASKS = [f"{c}{n}" for c in "ABCDEFGHIJ" for n in range(1, 11)]
MODES = ("standard", "standard_structured", "aoi_visual", "aoi_audio", "aoi_full")
LINE = {
    "category": "A", "tier": "easy", "agent": "llm", "model": "some-model", "seed": 1,
    "success": True, "reward": 1.0, "credit": 1.0, "result": "success", "steps": 20,
    "wall_s": 60.0, "agent_s": 20.0,
    "perception_s": {"capture": 0.5, "keyframes": 0.1, "asr": 1.0, "tts": 0.0},
    "tokens": {"input": 40000, "output": 900}, "llm_calls": 20, "infra_error": "",
    "attempts": 1, "agent_errors": 0, "finished_at": "2026-12-04T00:00:00+00:00",
}  # fmt: skip


def synthetic_trace(folder: Path, steps: int = 20) -> None:
    """A trace as the recorder writes it, of ``steps`` steps 3 s apart."""
    rng = np.random.default_rng(0)
    for sub in ("records", "screens", "keyframes"):
        (folder / sub).mkdir(parents=True)
    lines = []
    for k in range(steps + 1):
        stem = f"{k:04d}"
        screen = np.full((720, 1280, 3), 245, dtype=np.uint8)
        screen[rng.integers(0, 600) :][:80, 100:900] = rng.integers(0, 255, 3, dtype=np.uint8)
        save_png(screen, folder / "screens" / f"{stem}.png")
        times = []
        for j in (1, 2) if k else ():
            save_png(screen[::-1], folder / "keyframes" / f"{stem}-{j}.png")
            times.append(3.0 * k - 2 + j * 0.5)
        record = f"Observation Record - Step {k} (t = {3.0 * k:.1f}s)\n" + "  [1] text x\n" * 60
        (folder / "records" / f"{stem}.txt").write_text(record)
        action = {"type": "click", "x": 640, "y": 360} if k else None
        transcript = [{"start": 3.0 * k, "end": 3.0 * k + 2.5, "text": f"Sentence {k}.",
                       "stable": True}]  # fmt: skip
        lines.append(json.dumps({"step": k, "elapsed": 3.0 * k, "action": action,
                                 "agent": {"reply": "click 640 360"}, "keyframe_times": times,
                                 "task_result": "pending", "timings": {"total": 0.1},
                                 "transcript": transcript}))  # fmt: skip
    (folder / "trace.jsonl").write_text("\n".join(lines) + "\n")
    with wave.open(str(folder / "speaker.wav"), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(bytes(2 * 16000 * 30))


def make_run(run: Path, episodes: int, source: Path) -> None:
    """``episodes`` lines, each with the source trace hard-linked under its name."""
    lines = []
    for i in range(episodes):
        task, mode = TASKS[i % len(TASKS)], MODES[(i // len(TASKS)) % len(MODES)]
        repeat = i // (len(TASKS) * len(MODES))
        line = {**LINE, "task": task, "category": task[0], "mode": mode, "repeat": repeat}
        lines.append(json.dumps(line))
        target = run / "traces" / trace_name(task, mode, line["agent"], line["model"], repeat)
        for path in source.rglob("*"):
            if path.is_file():
                dest = target / path.relative_to(source)
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.link(path, dest)
    (run / "episodes.jsonl").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=500)
    parser.add_argument("--trace", type=Path, help="a recorded trace to copy (default: made)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dynacu-view-bench-") as tmp:
        source = args.trace
        if source is None:
            source = Path(tmp) / "source"
            synthetic_trace(source)
        run = Path(tmp) / "run"
        started = time.monotonic()
        make_run(run, args.episodes, source)
        print(f"run of {args.episodes} episodes made in {time.monotonic() - started:.1f} s")
        times = []
        for _ in range(args.repeats):
            started = time.monotonic()
            index = build_site(run)
            times.append(time.monotonic() - started)
        pages = sorted((run / VIEW_DIR / "episodes").glob("*.html"))
        page_kb = statistics.median(p.stat().st_size for p in pages) / 1024
        each = ", ".join(f"{t:.1f}" for t in times)
        print(f"build: median {statistics.median(times):.1f} s of {args.repeats} ({each}); "
              "target < 60 s for 500 episodes")  # fmt: skip
        print(f"index.html: {index.stat().st_size / 1024:.0f} KiB; target < 1024 KiB")
        print(f"episode page: median {page_kb:.0f} KiB ({len(pages)} pages; images not inlined)")


if __name__ == "__main__":
    main()
