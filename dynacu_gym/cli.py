"""The ``dynacu`` command.

dynacu list                         the catalogue: id, category, tier, axes, duration
dynacu solve --tasks 'A*,B1'        run scripted solutions through the env; result table
dynacu render-audio [IDS...]        render tasks' spoken lines with piper (skips current)
dynacu snapshot ID --at 1,5 --out D  screenshots of a task page at those seconds
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from collections.abc import Sequence

from dynacu_gym.tasks import CATEGORIES, TaskFormatError, find_task, task_folders


def select_tasks(patterns: str | None) -> list[str]:
    """Task ids matching comma-separated glob patterns ('A*,B1'); all when None.

    Raises:
        ValueError: a pattern matches no task.
    """
    ids = sorted(task_folders(), key=lambda i: (i[0], int(i[1:])))
    if not patterns:
        return ids
    chosen: list[str] = []
    for pattern in (p.strip() for p in patterns.split(",") if p.strip()):
        pattern = pattern.removeprefix("DynaCU-").removesuffix("-v0")
        matched = [i for i in ids if fnmatch.fnmatchcase(i, pattern)]
        if not matched:
            raise ValueError(f"no task matches {pattern!r}; tasks: {', '.join(ids)}")
        chosen += [i for i in matched if i not in chosen]
    return chosen


def _cmd_list(args: argparse.Namespace) -> int:
    rows = []
    for task_id in select_tasks(args.tasks):
        task = find_task(task_id)
        rows.append(
            (
                task.gym_id,
                CATEGORIES[task.category],
                task.tier,
                "+".join(task.axes),
                f"{task.duration_s:g}s",
                task.title,
            )
        )
    _print_table(("id", "category", "tier", "axes", "duration", "title"), rows)
    return 0


def _cmd_solve(args: argparse.Namespace) -> int:
    import gymnasium as gym

    import dynacu_gym  # noqa: F401 - registers the envs
    from dynacu_agents import OracleAgent
    from dynacu_gym.episode import run_episode
    from dynacu_gym.modes import ModeUnavailableError, check_mode

    rows, failures, unavailable, results = [], 0, 0, []
    for task_id in select_tasks(args.tasks):
        mode = args.mode or find_task(task_id).solution_mode
        try:
            check_mode(mode)
        except ModeUnavailableError:
            unavailable += 1
            rows.append((task_id, f"not run: needs mode {mode}, not built yet", "-", "-"))
            continue
        env = gym.make(f"DynaCU-{task_id}-v0", mode=mode)
        try:
            outcome = run_episode(env, OracleAgent(env), seed=args.seed)
        finally:
            env.close()
        failures += not outcome.success
        results.append(outcome.to_dict())
        rows.append((task_id, outcome.result, str(outcome.steps), f"{outcome.seconds:.1f}"))
        print(f"{task_id}: {outcome.result} in {outcome.seconds:.1f} s", file=sys.stderr)
    _print_table(("task", "result", "steps", "seconds"), rows)
    ran = len(rows) - unavailable
    print(f"\n{ran - failures}/{ran} scripted solutions succeeded", end="")
    print(f" ({unavailable} need a mode this version lacks)" if unavailable else "")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 1 if failures else 0


def _cmd_render_audio(args: argparse.Namespace) -> int:
    from dynacu_gym.audio_assets import render_task_audio
    from dynacu_gym.perception.tts import load_voice

    voice = None
    for task_id in select_tasks(",".join(args.ids) if args.ids else None):
        task = find_task(task_id)
        if voice is None and any(line.say for line in task.script):
            voice = load_voice()
        rendered = render_task_audio(task, voice=voice, force=args.force)
        print(f"{task_id}: {'rendered' if rendered else 'up to date'}")
    return 0


def _cmd_snapshot(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    from dynacu_gym.env import DynaCUEnv
    from dynacu_gym.imaging import save_png

    times = sorted(float(t) for t in args.at.split(","))
    env = DynaCUEnv(select_tasks(args.task)[0])
    try:
        env.reset(seed=args.seed)
        assert env.sandbox is not None
        for t in times:
            time.sleep(max(0.0, t - env.elapsed))
            path = save_png(
                env.sandbox.display.grab(), Path(args.out) / f"{env.task.id}-{t:05.1f}s.png"
            )
            print(path)
    finally:
        env.close()
    return 0


def _print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=False)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``dynacu``."""
    parser = argparse.ArgumentParser(prog="dynacu", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="the catalogue")
    p.add_argument("--tasks", help="comma-separated id patterns, e.g. 'A*,B1'")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("solve", help="run scripted solutions and print a result table")
    p.add_argument("--tasks", help="comma-separated id patterns, e.g. 'A*,B1' (default: all)")
    p.add_argument("--mode", help="observation mode (default: the least mode each solution needs)")
    p.add_argument("--seed", type=int, default=0, help="reset seed (default: 0)")
    p.add_argument("--json", help="also write the results to this JSON file")
    p.set_defaults(func=_cmd_solve)

    p = sub.add_parser("snapshot", help="screenshots of a task page at given seconds")
    p.add_argument("task", help="task id, e.g. A1")
    p.add_argument("--at", default="1", help="comma-separated seconds after the start")
    p.add_argument("--out", default="snapshots", help="folder for the PNG files")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_snapshot)

    p = sub.add_parser("render-audio", help="render tasks' spoken lines with piper")
    p.add_argument("ids", nargs="*", help="task ids or patterns (default: all)")
    p.add_argument("--force", action="store_true", help="render even if current")
    p.set_defaults(func=_cmd_render_audio)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``dynacu`` command."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (ValueError, TaskFormatError) as e:
        print(f"dynacu: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
