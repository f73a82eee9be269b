"""Whether a change to the page runtime or the apps changed what any task's page shows.

    python benchmarks/page_equivalence.py --against REV [--tasks 'A*,S3'] [--at 0,0.2,0.5,0.9]

Renders each task's page (variant 0, seed 0) in paused time, in this tree and in a checkout of
``REV`` (a git worktree made for the run, removed after), at the same page moments: ``--at``
gives them as fractions of the task's ``duration_s``. Time passes unpaced, so no sound plays
and each moment is exact: what the page's timers and clock show then, the same on every run.
At each moment it takes the screenshot and the DOM (``documentElement.outerHTML``, without the
script tags; what an input holds is a property, not in it), and at the end the page's script
errors (or why the page did not load); a task is the same when every hash and the errors
are, or when only a few antialiased pixels of a screen differ (``--pixels``; Chromium's software
rasteriser does not repeat its edges to the byte). Prints each task that differs, with its
moments (for a screen: how many pixels changed, by how much, and their bounding box); the last
line counts the tasks that are the same. ``--keep DIR`` keeps both trees'
screenshots there as PNGs. ``--against HEAD`` on an unchanged tree shows the run's own
repeatability.

What it does not see: a page the agent's actions change (clicks, typing) and the sound. Those
are the task tests' (`make test-all` plays each task's solution).
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# The page's DOM without its script tags and the line breaks before them (a change may load
# one more file, as the apps' ui.js).
DOM_SCRIPT = """() => {
  const copy = document.documentElement.cloneNode(true);
  copy.querySelectorAll("script").forEach((s) => {
    const before = s.previousSibling;
    if (before && before.nodeType === Node.TEXT_NODE && !before.data.trim()) before.remove();
    s.remove();
  });
  return copy.outerHTML;
}"""
ERRORS_SCRIPT = "() => (window.DynaCU && window.DynaCU.errors) || ['no DynaCU on the page']"


def task_ids(patterns: str) -> list[str]:
    from dynacu_gym.tasks import catalogue_order, task_folders

    ids = sorted(task_folders(), key=catalogue_order)
    chosen = [t for t in ids if any(fnmatch.fnmatchcase(t, p) for p in patterns.split(","))]
    if not chosen:
        raise SystemExit(
            f"no task matches {patterns!r} (expected ids such as A1 or patterns such as 'A*')"
        )
    return chosen


def render(task: str, fractions: list[float], shots: Path) -> dict[str, object]:
    """The hashes of one task's page at each moment, and its script errors; the screenshots
    go to ``shots`` as ``<task>-<moment>.npy``."""
    import gymnasium as gym

    import dynacu_gym  # noqa: F401 - registers the envs

    env = gym.make(f"DynaCU-{task}-v0", mode="standard", clock="paused")
    try:
        env.reset(seed=0)
        base = env.unwrapped
        browser = base.sandbox.browser_or_raise()
        duration = base.task.duration_s
        moments, passed = [], 0.0
        for fraction in fractions:
            at = round(fraction * duration, 1)
            if at > passed:
                browser.pass_time(at - passed, paced=False)
                passed = at
            browser.settle()
            base._grab_screenshot()
            dom = browser.evaluate(DOM_SCRIPT)
            np.save(shots / f"{task}-{at:g}.npy", base._screenshot)
            moments.append(
                {
                    "at": at,
                    "screen": hashlib.sha256(base._screenshot.tobytes()).hexdigest()[:16],
                    "dom": hashlib.sha256(dom.encode()).hexdigest()[:16],
                }
            )
        return {"moments": moments, "errors": browser.evaluate(ERRORS_SCRIPT)}
    finally:
        env.close()


def dump(tasks: list[str], fractions: list[float], out: Path) -> None:
    """Render ``tasks`` with the dynacu_gym this process imports; write their hashes to ``out``."""
    results = {}
    for task in tasks:
        try:
            results[task] = render(task, fractions, out.parent / out.stem)
        except Exception as e:  # noqa: BLE001 - a page that fails is this tree's result
            results[task] = {"moments": [], "errors": [f"{type(e).__name__}: {e}"]}
        print(f"  {task}", file=sys.stderr, flush=True)
    out.write_text(json.dumps(results, indent=1))


def run_tree(tree: Path, tasks: list[str], fractions: list[float], out: Path) -> dict:
    """Dump the hashes of ``tree``'s pages, in a process that imports that tree's package."""
    (out.parent / out.stem).mkdir()
    env = {**os.environ, "PYTHONPATH": str(tree)}
    at = ",".join(str(f) for f in fractions)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--dump", str(out), "--at", at]
    subprocess.run([*cmd, "--tasks", ",".join(tasks)], cwd=tree, env=env, check=True)
    return json.loads(out.read_text())


def screen_change(theirs: Path, ours: Path) -> tuple[int, str]:
    """How two screenshots of one moment differ: how many pixels, by how much, and where."""
    a, b = np.load(theirs), np.load(ours)
    if a.shape != b.shape:
        return a.size, f"screen {a.shape[1]}x{a.shape[0]} -> {b.shape[1]}x{b.shape[0]}"
    delta = np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2)
    ys, xs = np.nonzero(delta)
    where = f"x {xs.min()}-{xs.max()}, y {ys.min()}-{ys.max()}"
    return len(xs), f"screen {len(xs)} px by up to {delta.max()} in {where}"


def keep_png(frames: Path, into: Path) -> None:
    """Write ``frames``' screenshots into ``into`` as PNGs."""
    from dynacu_gym.imaging import save_png

    into.mkdir(parents=True, exist_ok=True)
    for frame in frames.glob("*.npy"):
        save_png(np.load(frame), into / f"{frame.stem}.png")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", help="the git revision to compare this tree with")
    parser.add_argument("--tasks", default="*", help="task ids or patterns, comma-separated")
    parser.add_argument("--at", default="0,0.2,0.5,0.9", help="moments, fractions of duration_s")
    parser.add_argument(
        "--pixels",
        type=int,
        default=400,
        help="a screen that differs in at most this many pixels, with the same DOM, counts as "
        "the same (Chromium's software rasteriser does not repeat its antialiased edges to the "
        "byte: HEAD against HEAD differs in up to a few hundred)",
    )
    parser.add_argument("--verbose", action="store_true", help="also print those tasks")
    parser.add_argument("--keep", type=Path, help="keep both trees' screenshots here as PNGs")
    parser.add_argument("--dump", type=Path, help=argparse.SUPPRESS)  # one tree's side
    args = parser.parse_args()
    fractions = [float(f) for f in args.at.split(",")]
    if any(not 0 <= f <= 1 for f in fractions) or fractions != sorted(fractions):
        raise SystemExit(f"--at: expected rising fractions from 0 to 1, got {args.at!r}")
    if args.dump:
        dump(args.tasks.split(","), fractions, args.dump)
        return 0
    if not args.against:
        raise SystemExit("expected --against REV (a git revision to compare this tree with)")
    tasks = task_ids(args.tasks)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dynacu-equivalence-") as tmp:
        other = Path(tmp) / "tree"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "-q", str(other), args.against],
            cwd=ROOT,
            check=True,
        )
        try:
            theirs = run_tree(other, tasks, fractions, Path(tmp) / "theirs.json")
            ours = run_tree(ROOT, tasks, fractions, Path(tmp) / "ours.json")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=ROOT)
        same = within = 0
        for task in tasks:
            a, b = theirs[task], ours[task]
            if a == b:
                same += 1
                continue
            moments, beyond = (
                [],
                a["errors"] != b["errors"] or len(a["moments"]) != len(b["moments"]),
            )
            for x, y in zip(a["moments"], b["moments"], strict=False):
                what = ["dom"] if x["dom"] != y["dom"] else []
                beyond |= bool(what)
                if x["screen"] != y["screen"]:
                    name = f"{task}-{x['at']:g}.npy"
                    pixels, text = screen_change(
                        Path(tmp) / "theirs" / name, Path(tmp) / "ours" / name
                    )
                    beyond |= pixels > args.pixels
                    what.append(text)
                if what:
                    moments.append(f"{x['at']:g} s ({'; '.join(what)})")
            if not beyond:
                within += 1
                if not args.verbose:
                    continue
            errors = a["errors"] != b["errors"]
            errors = f"; errors {a['errors']} -> {b['errors']}" if errors else ""
            label = "differs" if beyond else f"within {args.pixels} px"
            print(f"{task}: {label} at {', '.join(moments) or 'no moment'}{errors}")
        if args.keep:
            keep_png(Path(tmp) / "theirs", args.keep / args.against.replace("/", "_"))
            keep_png(Path(tmp) / "ours", args.keep / "tree")
    minutes = (time.monotonic() - started) / 60
    print(
        f"{same + within}/{len(tasks)} tasks the same as {args.against} at {args.at} "
        f"({same} to the byte, {within} but for at most {args.pixels} px of a screen; "
        f"{minutes:.1f} min)"
    )
    return 0 if same + within == len(tasks) else 1


if __name__ == "__main__":
    sys.exit(main())
