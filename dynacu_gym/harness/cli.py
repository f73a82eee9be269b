"""The ``dynacu`` command.

dynacu list                         the catalogue: id, category, tier, axes, duration
dynacu solve --tasks 'A*,B1'        run scripted solutions through the env; result table
dynacu render-audio [IDS...]        render tasks' spoken lines with piper (skips current)
dynacu snapshot ID --at 1,5 --out D  screenshots of a task page at those seconds
dynacu eval --agent A --modes M --tasks T --repeats R --workers W --out DIR
                                    evaluate an agent; one JSON line per episode; resumable;
                                    --backend ray runs the episodes on a Ray cluster
dynacu report DIR                   tables, ablations (McNemar) and charts from episode lines
dynacu run ID --agent A --mode M --record DIR
                                    one episode, with its whole trace saved
dynacu audit --tasks T --out DIR    is every task solvable, unguessable, and in need of the
                                    channel it claims? audit.md and audit.jsonl; resumable
dynacu audit-merge DIR... --out D   one audit from audits run in parts; flags changed tasks
dynacu doctor [--json]              is every part a run needs installed? each missing one
                                    with the command that installs it; non-zero if any is
dynacu new-task SUITE/Z/1-slug --app podcast
                                    a task of your own, started from an app's first task
dynacu check-task FOLDER|ID [--only C]
                                    is it well formed, solvable, fair? non-zero if not
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import threading
from collections.abc import Sequence
from typing import Any

from dynacu_gym.harness.choices import BACKENDS, CHECKS, STEP_S, VIDEO_FPS
from dynacu_gym.modes import CLOCKS
from dynacu_gym.runtime.process import exit_on_sigterm
from dynacu_gym.tasks import (
    CATEGORIES,
    TaskFormatError,
    all_task_folders,
    catalogue_order,
    file_stem,
    find_task,
    gym_id,
)


def _names(listed: str) -> list[str]:
    """The names in a comma-separated argument, stripped, empty ones left out."""
    return [name.strip() for name in listed.split(",") if name.strip()]


def select_tasks(patterns: str | None) -> list[str]:
    """Task ids matching comma-separated glob patterns ('A*,B1'); all when None.

    Raises:
        ValueError: a pattern matches no task.
    """
    ids = sorted(all_task_folders(), key=catalogue_order)
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
                CATEGORIES.get(task.category, f"category {task.category}"),
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
    from dynacu_gym.harness.episode import run_episode
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
        env = gym.make(gym_id(task_id), mode=mode)
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
    from dynacu_gym.perception.tts import load_voice
    from dynacu_gym.tasks.audio_assets import render_task_audio

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
                env.sandbox.display.grab(),
                Path(args.out) / f"{file_stem(env.task.id)}-{t:05.1f}s.png",
            )
            print(path)
    finally:
        env.close()
    return 0


def _agent_spec(args: argparse.Namespace) -> Any:
    """The agent flags as an :class:`AgentSpec`."""
    import os

    from dynacu_gym.harness.runner import AgentSpec

    options: dict[str, Any] = {}
    if args.agent == "llm":
        if not args.model:
            raise ValueError("--agent llm needs --model (the model name the server knows)")
        options = {"model": args.model, "api": args.api}
        if args.base_url:
            options["base_url"] = args.base_url
        if args.api_key_env:
            key = os.environ.get(args.api_key_env)
            if not key:
                raise ValueError(f"--api-key-env {args.api_key_env}: that variable is not set")
            options["api_key"] = key
        if args.max_tokens is not None:
            options["max_tokens"] = args.max_tokens
        if args.temperature is not None:
            options["temperature"] = args.temperature
        if args.no_images:
            options["images"] = False
        if args.format is not None:
            options["reply_format"] = args.format
        if args.max_keyframes is not None:
            options["max_keyframes"] = args.max_keyframes
        if args.image_width is not None:
            options["image_width"] = args.image_width
        if args.image_size is not None:
            options["image_size"] = args.image_size
        if args.coords is not None:
            options["coords"] = args.coords
        if args.max_completion_tokens:
            options["max_completion_tokens"] = True
        if args.reasoning_effort is not None:
            options["reasoning_effort"] = args.reasoning_effort
        if args.http_retries is not None:
            options["http_retries"] = args.http_retries
        if args.history:
            options["history"] = args.history
        if args.history_images:
            options["history_images"] = True
    elif args.model:
        raise ValueError("--model is for --agent llm")
    return AgentSpec(args.agent, options)


def _add_agent_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("agent")
    g.add_argument(
        "--agent",
        default="oracle",
        help="null, random, oracle (privileged), llm, or module:Class (default: oracle)",
    )
    g.add_argument("--model", help="llm: the model name")
    g.add_argument("--api", default="openai",
                   help="llm: openai (chat completions: any OpenAI-compatible server), anthropic "
                   "(messages), or a computer-use protocol: anthropic-computer, "
                   "openai-computer, gemini-computer")  # fmt: skip
    g.add_argument("--format", help="llm (openai, anthropic): how the model writes its action: "
                   "text (default), uitars or qwen")  # fmt: skip
    g.add_argument("--base-url", help="llm: server URL (default: $OPENAI_BASE_URL or "
                   "$ANTHROPIC_BASE_URL, else the provider's)")  # fmt: skip
    g.add_argument("--api-key-env", help="llm: the environment variable holding the key "
                   "(default: OPENAI_API_KEY or ANTHROPIC_API_KEY)")  # fmt: skip
    g.add_argument("--max-tokens", type=int, help="llm: reply length cap (default: the api's)")
    g.add_argument("--temperature", type=float,
                   help="llm: sampling temperature (default: the api's; 0 for chat)")  # fmt: skip
    g.add_argument("--no-images", action="store_true", help="llm: send the record text only")
    g.add_argument("--max-keyframes", type=int, help="llm: send at most this many keyframes")
    g.add_argument("--image-width", type=int, help="llm: downscale images to this width")
    g.add_argument("--image-size", help="llm: the image the model sees: full, a long side "
                   "(1024), a size to pad into (1024x768) or to stretch to "
                   "(1288x728:stretch)")  # fmt: skip
    g.add_argument("--coords",
                   help="llm: what the model's numbers mean: screen pixels, image "
                   "pixels, norm1000 (0-1000 of the image) or norm1 (default: the "
                   "format's)")  # fmt: skip
    g.add_argument("--max-completion-tokens", action="store_true",
                   help="llm (openai): send the cap as max_completion_tokens "
                   "(reasoning models)")  # fmt: skip
    g.add_argument("--http-retries", type=int,
                   help="llm: retries of a request answered 429 or 5xx (default: 2)")  # fmt: skip
    g.add_argument("--history", type=int, default=0,
                   help="llm: send the last K steps' records and replies too (default: 0, "
                   "each step alone; the record's narration is the memory)")  # fmt: skip
    g.add_argument("--history-images", action="store_true",
                   help="llm: with --history, send those steps' images too")  # fmt: skip
    g.add_argument("--reasoning-effort", help="llm: a reasoning model's effort: minimal, low, "
                   "medium or high (anthropic: a thinking budget)")  # fmt: skip


def _add_video_fps(p: argparse.ArgumentParser) -> None:
    p.add_argument("--video-fps", type=float, default=VIDEO_FPS,
                   help=f"frames a second of a video's screen (default: {VIDEO_FPS:g}, the "
                   "keyframe capture's rate)")  # fmt: skip


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    """The agent, and which episodes it plays where: for ``eval`` and ``collect``."""
    _add_agent_flags(p)
    p.add_argument("--modes", default="aoi_full", help="comma-separated modes (default: aoi_full)")
    p.add_argument("--tasks", help="comma-separated id patterns (default: all)")
    p.add_argument("--repeats", type=int, default=1, help="episodes per task and mode")
    p.add_argument("--workers", type=int, default=1, help="worker processes (one sandbox each)")
    p.add_argument("--out", required=True, help="output folder; a run there is resumed")
    p.add_argument("--seed", type=int, default=0, help="base seed of every episode's seed")
    p.add_argument("--clock", choices=CLOCKS, default="realtime",
                   help="paused: the page's time stands still between steps (default: realtime, "
                   "the benchmark's)")  # fmt: skip
    p.add_argument("--variety", action="store_true",
                   help="each seed plays one of the task's variants (default: variant 0, the "
                   "benchmark's)")  # fmt: skip
    p.add_argument("--max-steps", type=int,
                   help="end each episode after this many steps (default: the task's own "
                   "limit, the benchmark's; fewer is a quick look, not a result)")  # fmt: skip
    p.add_argument("--backend", choices=BACKENDS, default="local",
                   help="local: worker processes here (default); ray: actors on a Ray "
                   "cluster")  # fmt: skip
    p.add_argument("--ray-address",
                   help="ray: the cluster to join, HOST:PORT or 'auto' (default: start one "
                   "here)")  # fmt: skip


def _env_options(args: argparse.Namespace) -> dict[str, Any]:
    """The env keyword arguments of ``--clock``, ``--variety`` and ``--max-steps``, where given."""
    options: dict[str, Any] = {}
    if args.clock != "realtime":
        options["clock"] = args.clock
    if args.variety:
        options["variety"] = True
    if args.max_steps is not None:
        if args.max_steps < 1:
            raise ValueError(f"expected --max-steps >= 1, got {args.max_steps}")
        options["max_episode_steps"] = args.max_steps
    return options


def _cmd_eval(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynacu_gym.harness.runner import evaluate, summary_rows

    modes = _names(args.modes)
    lines = evaluate(
        _agent_spec(args),
        select_tasks(args.tasks),
        modes,
        Path(args.out),
        repeats=args.repeats,
        workers=args.workers,
        base_seed=args.seed,
        retry_infra=args.retry_infra,
        traces=args.traces,
        video_fps=args.video_fps if args.video else None,
        env_options=_env_options(args),
        backend=args.backend,
        ray_address=args.ray_address,
    )
    print(f"\n{len(lines)} episodes in {Path(args.out) / 'episodes.jsonl'}\n")
    try:
        from dynacu_gym.harness.report import render_markdown
    except ImportError:
        _print_table(("mode", "episodes", "successes", "rate", "infra"), summary_rows(lines))
    else:
        print(render_markdown(lines))
    return 0


def _cmd_collect(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynacu_gym.harness.collect import DEMOS_FILE, write_demos
    from dynacu_gym.harness.runner import evaluate

    out = Path(args.out)
    modes = _names(args.modes)
    lines = evaluate(
        _agent_spec(args),
        select_tasks(args.tasks),
        modes,
        out,
        repeats=args.repeats,
        workers=args.workers,
        base_seed=args.seed,
        traces=True,
        env_options=_env_options(args),
        backend=args.backend,
        ray_address=args.ray_address,
    )
    solved = sum(line["success"] for line in lines)
    episodes, steps = write_demos(out, successes_only=args.successes_only)
    print(f"\n{len(lines)} episodes, {solved} solved; {steps} steps of {episodes} episodes in "
          f"{out / DEMOS_FILE}")  # fmt: skip
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynacu_gym.harness.report import load_episodes, load_prices, render_markdown, write_report

    prices = load_prices(Path(args.prices)) if args.prices else None
    episodes = load_episodes(Path(args.dir))
    if not episodes:
        raise ValueError(f"no episode lines in {args.dir}")
    print(render_markdown(episodes, prices))
    out = Path(args.out) if args.out else Path(args.dir)
    written = write_report(episodes, out, prices)
    print("\nwrote " + ", ".join(str(p) for p in written.values()), file=sys.stderr)
    return 0


def _cmd_view(args: argparse.Namespace) -> int:
    import time

    from dynacu_gym.harness.viewer import build_site, serve

    started = time.monotonic()
    index = build_site(args.run)
    print(f"{index} ({time.monotonic() - started:.1f} s)")
    if not args.serve:
        return 0
    server, url = serve(args.run, args.port)
    print(f"serving {args.run} at {url} (Ctrl-C stops)")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    import shutil
    import tempfile
    from pathlib import Path

    import gymnasium as gym

    import dynacu_gym  # noqa: F401 - registers the envs
    from dynacu_gym.harness.episode import run_episode
    from dynacu_gym.harness.runner import make_agent
    from dynacu_gym.harness.trace import VIDEO_FILE, TraceRecorder

    if args.video and not args.video.endswith(".mp4"):
        raise ValueError(f"--video: expected a file name ending in .mp4, got {args.video!r}")
    # The video is made from a trace: a temporary one unless --record keeps it.
    record = args.record or (tempfile.mkdtemp(prefix="dynacu-run-") if args.video else None)
    env = gym.make(find_task(args.task).gym_id, mode=args.mode)
    recorder = None
    try:
        agent = make_agent(_agent_spec(args), env, args.seed)
        video_fps = args.video_fps if args.video else None
        recorder = TraceRecorder(env, record, video_fps) if record else None
        outcome = run_episode(
            env, agent, seed=args.seed, on_step=recorder.on_step if recorder else None
        )
        if recorder is not None:
            recorder.finish({"mode": args.mode, "agent": args.agent, **outcome.to_dict()})
        if args.video:
            assert record is not None
            shutil.move(str(Path(record) / VIDEO_FILE), args.video)
    finally:
        if recorder is not None:
            recorder.close()
        env.close()
        if record and not args.record:
            shutil.rmtree(record, ignore_errors=True)
    print(
        f"{args.task} {args.mode} {args.agent}: {outcome.result} in {outcome.steps} steps, "
        f"{outcome.seconds:.1f} s" + (f"; trace in {args.record}" if args.record else "")
    )
    return 0 if outcome.success else 1


def _cmd_audit(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynacu_gym.harness.audit import AuditError, render_summary, run_audit
    from dynacu_gym.modes import MODES

    tasks = select_tasks(args.tasks)
    try:
        rows = run_audit(
            tasks,
            Path(args.out),
            args.seeds,
            args.workers,
            args.step,
            args.seed,
            checks=_names(args.checks) if args.checks else CHECKS,
            modes=_names(args.modes) if args.modes else MODES,
        )
    except AuditError as e:
        raise ValueError(str(e)) from e
    summary = render_summary(rows, tasks, args.step)
    print(summary.split("\n## Tasks")[0].rstrip())
    print(f"\nwrote {Path(args.out) / 'audit.md'} and {Path(args.out) / 'audit.jsonl'}")
    return 0 if all(row["ok"] for row in rows) else 1


def _cmd_audit_merge(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynacu_gym.harness.audit import AuditError, merge_audits, write_audit

    try:
        rows, tasks, stale = merge_audits([Path(d) for d in args.dirs])
    except AuditError as e:
        raise ValueError(str(e)) from e
    write_audit(Path(args.out), rows, tasks, args.step, stale)
    summary = (Path(args.out) / "audit.md").read_text(encoding="utf-8")
    print(summary.split("\n## Evidence recall")[0].rstrip())
    if stale:
        print(f"changed since they were audited: {', '.join(stale)}")
    print(f"\nwrote {Path(args.out) / 'audit.md'} and {Path(args.out) / 'audit.jsonl'}")
    return 0 if all(row["ok"] for row in rows) and not stale else 1


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

    p = sub.add_parser("eval", help="evaluate an agent; one JSON line per episode")
    _add_run_flags(p)
    p.add_argument("--retry-infra", action="store_true",
                   help="run again episodes recorded as infrastructure failures")  # fmt: skip
    p.add_argument("--traces", action="store_true",
                   help="keep each episode's trace in OUT/traces/ (for dynacu view)")  # fmt: skip
    p.add_argument("--video", action="store_true",
                   help="with --traces: each trace's episode.mp4 too")  # fmt: skip
    _add_video_fps(p)
    p.set_defaults(func=_cmd_eval)

    p = sub.add_parser("collect", help="record episodes as chat turns for fine-tuning")
    _add_run_flags(p)
    p.add_argument("--successes-only", action="store_true",
                   help="write only the episodes the agent solved")  # fmt: skip
    p.set_defaults(func=_cmd_collect)

    p = sub.add_parser("report", help="tables, ablations and charts from episode lines")
    p.add_argument("dir", help="a folder of *.jsonl episode lines (or one file)")
    p.add_argument("--out", help="where to write report.md, CSVs and charts (default: DIR)")
    p.add_argument("--prices", help="a JSON or TOML file: model -> USD per million input and "
                   "output tokens ({\"gpt-4o\": {\"input\": 2.5, \"output\": 10}}), for the "
                   "cost table")  # fmt: skip
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser("view", help="a static site of a run's episodes: RUN/view/index.html")
    p.add_argument("run", help="a run folder (dynacu eval --out, best with --traces)")
    p.add_argument("--serve", action="store_true",
                   help="also serve the run on 127.0.0.1 until interrupted")  # fmt: skip
    p.add_argument("--port", type=int, default=0, help="with --serve: the port (default: any)")
    p.set_defaults(func=_cmd_view)

    p = sub.add_parser("run", help="one episode, optionally with its whole trace")
    p.add_argument("task", help="task id, e.g. A1")
    _add_agent_flags(p)
    p.add_argument("--mode", default="aoi_full", help="observation mode (default: aoi_full)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--record", help="folder to save the trace in")
    p.add_argument(
        "--video",
        metavar="FILE.mp4",
        help="the episode as a video: the screen, its sound, the steps drawn over it",
    )
    _add_video_fps(p)
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("audit", help="is every task solvable, unguessable, perceivable?")
    p.add_argument("--tasks", help="comma-separated id patterns (default: all)")
    p.add_argument("--out", required=True, help="output folder; an audit there is resumed")
    p.add_argument("--seeds", type=int, default=3, help="seeds of the scripted solution")
    p.add_argument("--workers", type=int, default=2, help="worker processes (one sandbox each)")
    p.add_argument("--step", type=float, default=STEP_S,
                   help=f"an agent's seconds per step: the watcher looks this often "
                        f"(default: {STEP_S:g})")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="base seed of every episode's seed")
    p.add_argument("--checks", help=f"comma-separated checks to run (default: all: "
                                    f"{','.join(CHECKS)})")  # fmt: skip
    p.add_argument("--modes", help="comma-separated modes the evidence and silent checks watch "
                                   "in (default: every preset); with --checks, a partial audit "
                                   "that audit-merge lays over a whole one")  # fmt: skip
    p.set_defaults(func=_cmd_audit)

    p = sub.add_parser("audit-merge", help="one audit from audits run in parts")
    p.add_argument("dirs", nargs="+", help="audit folders; a task's rows of a check and mode "
                                           "come from the last")  # fmt: skip
    p.add_argument("--out", required=True, help="where to write audit.md and audit.jsonl")
    p.add_argument("--step", type=float, default=STEP_S,
                   help=f"the --step the audits ran with (default: {STEP_S:g})")  # fmt: skip
    p.set_defaults(func=_cmd_audit_merge)

    p = sub.add_parser("render-audio", help="render tasks' spoken lines with piper")
    p.add_argument("ids", nargs="*", help="task ids or patterns (default: all)")
    p.add_argument("--force", action="store_true", help="render even if current")
    p.set_defaults(func=_cmd_render_audio)

    from dynacu_gym.harness import authoring, doctor

    doctor.add_parser(sub)
    authoring.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``dynacu`` command."""
    args = build_parser().parse_args(argv)
    # A stopped run (`kill`, a job scheduler's SIGTERM) stops its workers and their sandboxes,
    # as Ctrl-C does, instead of leaving them running. (Signals go to the main thread only.)
    if threading.current_thread() is threading.main_thread():
        exit_on_sigterm()
    try:
        return int(args.func(args))
    except (ValueError, TaskFormatError) as e:
        print(f"dynacu: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
