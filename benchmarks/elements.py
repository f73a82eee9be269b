"""What the page elements channel adds to a step, measured side by side with it off.

    python benchmarks/elements.py [--tasks E8,I1,B1,D4] [--steps 60] [--at 6]

For each task: one env in ``standard`` and one in ``standard_structured`` (the same page, the
list on), each reset with the same seed and run to ``--at`` seconds, then ``--steps`` steps of
``wait 0`` taken in turn, one env after the other, so both see the same moments of the page.
Prints the step's median and p90 in each, their difference, the listing's own time inside the
page (``performance.now()`` around the script) and how many elements it listed.

Target (2 cores): the list adds at most 15 ms to a step's median on the busiest app page.
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym

import dynacu_gym  # noqa: F401
from dynacu_gym.runtime.elements import ELEMENTS_SCRIPT, element_options

TIMED_SCRIPT = f"(o) => {{ const t = performance.now(); const r = ({ELEMENTS_SCRIPT})(o); \
return [performance.now() - t, r.items.length]; }}"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(task: str, steps: int, at: float) -> dict[str, float]:
    off = gym.make(f"DynaCU-{task}-v0", mode="standard")
    on = gym.make(f"DynaCU-{task}-v0", mode="standard_structured")
    try:
        for env in (off, on):
            env.reset(seed=0)
        time.sleep(at)
        took: dict[str, list[float]] = {"off": [], "on": []}
        inside, counts = [], []
        wait = {"type": "wait", "seconds": 0.0}
        for _ in range(steps):
            for name, env in (("off", off), ("on", on)):
                t = time.monotonic()
                _, _, terminated, truncated, _ = env.step(wait)
                took[name].append(time.monotonic() - t)
                if terminated or truncated:
                    env.reset(seed=0)
            ms, n = on.unwrapped.evaluate_in_page(TIMED_SCRIPT, element_options())
            inside.append(ms)
            counts.append(n)
    finally:
        off.close()
        on.close()
    return {
        "off_median": statistics.median(took["off"]) * 1000,
        "off_p90": pct(took["off"], 0.9) * 1000,
        "on_median": statistics.median(took["on"]) * 1000,
        "on_p90": pct(took["on"], 0.9) * 1000,
        "script_median": statistics.median(inside),
        "elements": statistics.median(counts),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", default="E8,I1,B1,D4")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--at", type=float, default=6.0, help="seconds into the episode")
    args = parser.parse_args()
    print(
        f"{'task':6} {'elements':>8} {'off med':>8} {'on med':>8} {'added':>7} "
        f"{'off p90':>8} {'on p90':>8} {'script':>7}   (ms; target: added <= 15)"
    )
    for task in args.tasks.split(","):
        r = measure(task.strip(), args.steps, args.at)
        print(
            f"{task:6} {r['elements']:8.0f} {r['off_median']:8.1f} {r['on_median']:8.1f} "
            f"{r['on_median'] - r['off_median']:7.1f} {r['off_p90']:8.1f} {r['on_p90']:8.1f} "
            f"{r['script_median']:7.1f}"
        )


if __name__ == "__main__":
    main()
