"""Paused time against real time: steps per second, and page seconds per wall second.

    python benchmarks/paused_time.py [--tasks D6,J1,A5] [--steps 20] [--wait 1.0]

For each task, one episode per clock (and mode) plays the same steps: a click, then waits of
``--wait`` seconds, repeated until ``--steps`` (an agent that answers at once: no thinking
time). It prints the median wall seconds of a step, steps per wall second, and how many page
seconds passed per wall second. A silent page in standard mode runs paused time as fast as the
browser computes it; a page with sound, or a mode with keyframes or a transcript, keeps to the
wall clock while time passes and only stands still between steps.
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym

import dynacu_gym  # noqa: F401 - registers the envs
from dynacu_gym import parse_action
from dynacu_gym.harness.cli import select_tasks


def measure(task: str, mode: str, clock: str, steps: int, wait: float) -> dict[str, float]:
    env = gym.make(f"DynaCU-{task}-v0", mode=mode, clock=clock)
    try:
        env.reset(seed=0)
        durations = []
        start = time.monotonic()
        elapsed = 0.0
        for i in range(steps):
            action = "click 640 360" if i % 5 == 0 else f"wait {wait}"
            t = time.monotonic()
            obs, _, terminated, truncated, _ = env.step(parse_action(action))
            durations.append(time.monotonic() - t)
            elapsed = float(obs["elapsed"])
            if terminated or truncated:
                break
        wall = time.monotonic() - start
    finally:
        env.close()
    return {
        "steps": len(durations),
        "step_s": statistics.median(durations),
        "steps_per_s": len(durations) / wall,
        "page_per_wall": elapsed / wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", default="D6,J1,A5")
    parser.add_argument("--modes", default="standard,aoi_visual")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--wait", type=float, default=1.0)
    args = parser.parse_args()
    print("task  mode        clock     steps  step s (median)  steps/s  page s per wall s")
    for task in select_tasks(args.tasks):
        for mode in args.modes.split(","):
            for clock in ("realtime", "paused"):
                r = measure(task, mode, clock, args.steps, args.wait)
                print(
                    f"{task:<5} {mode:<11} {clock:<9} {r['steps']:>5}  {r['step_s']:>15.3f}  "
                    f"{r['steps_per_s']:>7.2f}  {r['page_per_wall']:>17.2f}"
                )


if __name__ == "__main__":
    main()
