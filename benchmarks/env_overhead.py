"""Reset time (first and warm) and step overhead of the base env, on the real stack.

    python benchmarks/env_overhead.py [--task H1] [--resets 10] [--steps 200]

Targets on a 2-core machine: warm reset <= 1 s, `wait 0` step overhead <= 50 ms (median).
"""

from __future__ import annotations

import argparse
import statistics
import time

import dynacu_gym  # noqa: F401
from dynacu_gym import parse_action
from dynacu_gym.env import DynaCUEnv


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", default="H1")
    parser.add_argument("--resets", type=int, default=10)
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()

    t = time.monotonic()
    env = DynaCUEnv(args.task)
    env.reset(seed=0)
    first = time.monotonic() - t

    warm = []
    for seed in range(1, args.resets + 1):
        t = time.monotonic()
        env.reset(seed=seed)
        warm.append(time.monotonic() - t)

    results = {}
    for text in ("wait 0", "click 5 5", "key Shift"):
        env.reset(seed=0)
        action = parse_action(text)
        env.step(action)  # warm-up
        took, phases = [], {}
        for _ in range(args.steps):
            t = time.monotonic()
            _, _, terminated, truncated, info = env.step(action)
            took.append(time.monotonic() - t)
            for name, value in info["timings"].items():
                phases.setdefault(name, []).append(value)
            if terminated or truncated:
                env.reset(seed=0)
        results[text] = (took, phases)
    env.close()

    print(f"task {args.task}")
    print(f"reset, first (sandbox start + page): {first:.2f} s")
    median, worst = statistics.median(warm), max(warm)
    print(f"reset, warm: median {median:.3f} s, max {worst:.3f} s (n={len(warm)})")
    for text, (took, phases) in results.items():
        split = ", ".join(f"{k} {1000 * statistics.median(v):.1f}" for k, v in phases.items())
        print(
            f"step '{text}': median {1000 * statistics.median(took):.1f} ms, "
            f"p90 {1000 * pct(took, 0.9):.1f} ms (n={len(took)}; phase medians ms: {split})"
        )


if __name__ == "__main__":
    main()
