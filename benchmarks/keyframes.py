"""The keyframe channel, measured on real task pages.

    python benchmarks/keyframes.py [--tasks D1,E1,C1] [--seconds 20] [--step 2.0]
        [--fps 3,10] [--clip random|PATH|TAG]

Prints, per task and capture rate:
- the capture rate achieved against the one asked for;
- the pixel gate's cost per frame (median, p90), and the grab's;
- CPU of the channel: the capture thread (and CLIP worker) in % of one core, and the whole
  process against the same task in standard mode;
- per-step overhead: the time a step spends in the keyframe wrapper (collect, select, build
  the (K, 720, 1280, 3) array, record) and in the narration wrapper (median, p90);
- keyframes per step that arrived and were kept.
With ``--clip``, the CLIP gate runs too and its cost per judged frame is printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import dynacu_gym  # noqa: F401
from dynacu_gym.env import DynaCUEnv
from dynacu_gym.perception.keyframes import changed_fraction, gate_view
from dynacu_gym.wrappers.keyframes import KeyframeObservation
from dynacu_gym.wrappers.narration import NarrationMemory


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def process_cpu() -> float:
    t = os.times()
    return t.user + t.system


def run(task_id: str, seconds: float, step_s: float, fps: float, clip: str | None) -> dict:
    base = DynaCUEnv(task_id)
    keyframes = KeyframeObservation(base, fps=fps, clip_weights=clip)
    env = NarrationMemory(keyframes)
    try:
        env.reset(seed=0)
        wall0, cpu0 = time.monotonic(), process_cpu()
        overhead, narration_overhead, arrived, kept = [], [], [], []
        while base.elapsed < seconds:
            t = time.monotonic()
            obs, _, terminated, truncated, info = env.step(
                {"type": "wait", "seconds": step_s, "narration": "a note on what I saw"}
            )
            total = time.monotonic() - t
            overhead.append(info["timings"]["keyframes"])
            inner = info["timings"]["total"] + info["timings"]["keyframes"]
            narration_overhead.append(max(0.0, total - inner))
            arrived.append(info["keyframes"]["arrived"])
            kept.append(info["keyframes"]["kept"])
            if terminated or truncated:
                break
        wall, cpu = time.monotonic() - wall0, process_cpu() - cpu0
        stats = keyframes.capture.stats
    finally:
        env.close()
    return {
        "fps": stats.as_dict()["fps"],
        "grab_ms": 1e3 * stats.grab_seconds / max(stats.grabbed, 1),
        "gate_ms": 1e3 * stats.gate_seconds / max(stats.grabbed, 1),
        "clip_ms": 1e3 * stats.clip_seconds / max(stats.clip_judged, 1),
        "clip_judged": stats.clip_judged,
        "channel_cpu": 100 * stats.cpu_seconds / wall,
        "process_cpu": 100 * cpu / wall,
        "step_ms": [1e3 * x for x in overhead],
        "narration_ms": [1e3 * x for x in narration_overhead],
        "arrived": arrived,
        "kept": kept,
        "skipped": stats.skipped,
        "grabbed": stats.grabbed,
    }


def baseline_cpu(task_id: str, seconds: float, step_s: float) -> float:
    env = DynaCUEnv(task_id)
    try:
        env.reset(seed=0)
        wall0, cpu0 = time.monotonic(), process_cpu()
        while env.elapsed < seconds:
            *_, terminated, truncated, _ = env.step({"type": "wait", "seconds": step_s})
            if terminated or truncated:
                break
        return 100 * (process_cpu() - cpu0) / (time.monotonic() - wall0)
    finally:
        env.close()


def gate_cost(task_id: str, frames: int = 200) -> tuple[float, float]:
    """Median and p90 of the pixel gate alone (view + compare), on real frames of the task."""
    env = DynaCUEnv(task_id)
    try:
        env.reset(seed=0)
        grabbed = []
        for _ in range(40):
            grabbed.append(env.sandbox.display.grab())
            time.sleep(0.1)
    finally:
        env.close()
    anchor = gate_view(grabbed[0])
    costs = []
    for i in range(frames):
        frame = grabbed[i % len(grabbed)]
        t = time.perf_counter()
        changed_fraction(gate_view(frame), anchor)
        costs.append(time.perf_counter() - t)
    return statistics.median(costs) * 1e3, pct(costs, 0.9) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", default="D1,E1,C1")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--step", type=float, default=2.0)
    parser.add_argument("--fps", default="3,10")
    parser.add_argument("--clip", default=None, help="CLIP weights (path, cached tag, random)")
    args = parser.parse_args()
    tasks = args.tasks.split(",")
    rates = [float(x) for x in args.fps.split(",")]

    print("pixel gate alone on real frames (view + compare), ms per frame:")
    for task_id in tasks:
        median, p90 = gate_cost(task_id)
        print(f"  {task_id}: median {median:.3f}, p90 {p90:.3f}")

    print(
        f"\n{'task':5} {'fps':>5} {'got':>6} {'grab ms':>8} {'gate ms':>8} {'chan CPU':>9} "
        f"{'proc CPU':>9} {'std CPU':>8} {'step ms':>8} {'p90':>6} {'narr ms':>8} "
        f"{'arrived':>8} {'kept':>5}" + (f" {'clip ms':>8} {'judged':>7}" if args.clip else "")
    )
    all_steps: list[float] = []
    for task_id in tasks:
        standard = baseline_cpu(task_id, args.seconds, args.step)
        for fps in rates:
            r = run(task_id, args.seconds, args.step, fps, args.clip)
            all_steps += r["step_ms"]
            line = (
                f"{task_id:5} {fps:5.0f} {r['fps']:6.2f} {r['grab_ms']:8.2f} {r['gate_ms']:8.3f} "
                f"{r['channel_cpu']:8.1f}% {r['process_cpu']:8.1f}% {standard:7.1f}% "
                f"{statistics.median(r['step_ms']):8.2f} {pct(r['step_ms'], 0.9):6.2f} "
                f"{statistics.median(r['narration_ms']):8.2f} "
                f"{np.mean(r['arrived']):8.1f} {np.mean(r['kept']):5.1f}"
            )
            if args.clip:
                line += f" {r['clip_ms']:8.1f} {r['clip_judged']:7d}"
            print(line, flush=True)
    print(
        f"\nper-step overhead of the keyframe wrapper, all runs: median "
        f"{statistics.median(all_steps):.2f} ms, p90 {pct(all_steps, 0.9):.2f} ms "
        f"(n={len(all_steps)})"
    )


if __name__ == "__main__":
    main()
