"""Paused time against real time: steps per second, where a step's time goes, and a vector env.

    python benchmarks/paused_time.py [--tasks D6,J1,A5] [--steps 20] [--wait 1.0]
        [--paused-steps 100] [--vector-task D6] [--vector-steps 200]

For each task, one episode per clock (and mode) plays the same steps: a click, then waits of
``--wait`` seconds, repeated until ``--steps`` (``--paused-steps`` in paused time, whose steps
are short: an agent that answers at once, no thinking time). It prints the median wall seconds
of a step, steps per wall second, page seconds per wall second, and the median of each phase
of a step (``info["timings"]``: the action, the time passed, the page's verdict, the
screenshot, and the rest: the observation and the record). A silent page in standard mode
runs paused time as fast as the browser computes it; a page with sound, or a mode with
keyframes or a transcript, keeps to the wall clock while time passes.

Then the RL setting: ``DiscreteActions`` and ``ImageObservation`` over the paused env, random
actions, one env against a 2-env ``AsyncVectorEnv`` (a process each), in steps per second.

Targets (2 cores): at least 20 steps/s on a silent page in standard mode, paused; the 2-env
async vector env at least 1.6x one env.
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np

import dynacu_gym  # noqa: F401 - registers the envs
from dynacu_gym import parse_action
from dynacu_gym.harness.cli import select_tasks

PHASES = ("action", "pass", "result", "capture")
TARGET_STEPS_PER_S = 20.0
TARGET_VECTOR_RATIO = 1.6


def measure(task: str, mode: str, clock: str, steps: int, wait: float) -> dict[str, float]:
    env = gym.make(f"DynaCU-{task}-v0", mode=mode, clock=clock)
    try:
        env.reset(seed=0)
        durations: list[float] = []
        phases: dict[str, list[float]] = {name: [] for name in (*PHASES, "other")}
        start = time.monotonic()
        elapsed = 0.0
        for i in range(steps):
            action = "click 640 360" if i % 5 == 0 else f"wait {wait}"
            t = time.monotonic()
            obs, _, terminated, truncated, info = env.step(parse_action(action))
            durations.append(time.monotonic() - t)
            timings = info["timings"]
            for name in PHASES:
                phases[name].append(timings.get(name, 0.0))
            phases["other"].append(durations[-1] - sum(timings.get(n, 0.0) for n in PHASES))
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
        **{name: statistics.median(values) for name, values in phases.items()},
    }


def _rl_env(task: str) -> gym.Env:
    from dynacu_gym.wrappers.rl import DiscreteActions, ImageObservation

    return ImageObservation(DiscreteActions(gym.make(f"DynaCU-{task}-v0", clock="paused")))


def vector_rates(task: str, steps: int) -> tuple[float, float]:
    """Steps per second of one RL env and of a 2-env async vector env (steps of both envs)."""
    rng = np.random.default_rng(0)
    env = _rl_env(task)
    try:
        env.reset(seed=0)
        t = time.monotonic()
        for _ in range(steps):
            _, _, terminated, truncated, _ = env.step(int(rng.integers(env.action_space.n)))
            if terminated or truncated:
                env.reset()
        one = steps / (time.monotonic() - t)
    finally:
        env.close()
    vector = gym.vector.AsyncVectorEnv([lambda: _rl_env(task)] * 2)
    try:
        vector.reset(seed=0)
        n = vector.single_action_space.n
        t = time.monotonic()
        for _ in range(steps // 2):  # autoreset: an ended episode starts again by itself
            vector.step(rng.integers(n, size=2))
        two = 2 * (steps // 2) / (time.monotonic() - t)
    finally:
        vector.close()
    return one, two


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", default="D6,J1,A5")
    parser.add_argument("--modes", default="standard,aoi_visual")
    parser.add_argument("--steps", type=int, default=20, help="steps per episode in real time")
    parser.add_argument("--paused-steps", type=int, default=100)
    parser.add_argument("--wait", type=float, default=1.0)
    parser.add_argument("--vector-task", default="D6", help="'' to skip the vector env")
    parser.add_argument("--vector-steps", type=int, default=200)
    args = parser.parse_args()
    print(
        "task  mode        clock     steps  step s  steps/s  page s/wall s   "
        "action    pass  result capture   other (median ms)"
    )
    silent_standard: list[float] = []
    for task in select_tasks(args.tasks):
        for mode in args.modes.split(","):
            for clock in ("realtime", "paused"):
                steps = args.paused_steps if clock == "paused" else args.steps
                r = measure(task, mode, clock, steps, args.wait)
                phases = " ".join(f"{1000 * r[name]:7.1f}" for name in (*PHASES, "other"))
                print(
                    f"{task:<5} {mode:<11} {clock:<9} {r['steps']:>5}  {r['step_s']:>6.3f}  "
                    f"{r['steps_per_s']:>7.2f}  {r['page_per_wall']:>13.2f}  {phases}",
                    flush=True,
                )
                # A page whose paused time ran ahead of the wall clock was silent throughout.
                if clock == "paused" and mode == "standard" and r["page_per_wall"] > 1.5:
                    silent_standard.append(r["steps_per_s"])
    if silent_standard:
        print(
            f"\npaused, standard mode, silent pages: {min(silent_standard):.1f}-"
            f"{max(silent_standard):.1f} steps/s (target >= {TARGET_STEPS_PER_S:g})"
        )
    if args.vector_task:
        one, two = vector_rates(args.vector_task, args.vector_steps)
        print(
            f"RL adapters on {args.vector_task}, paused: one env {one:.1f} steps/s, 2-env async "
            f"vector env {two:.1f} steps/s: {two / one:.2f}x (target >= {TARGET_VECTOR_RATIO:g}x)"
        )


if __name__ == "__main__":
    main()
