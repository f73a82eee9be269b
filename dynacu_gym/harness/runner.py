"""Evaluating an agent on the benchmark: every (task, mode, repeat), one JSON line each.

``dynacu eval`` plans the episodes, runs them in worker processes (each with its own sandbox,
so parallel episodes never see or hear each other) or on Ray actors
(:mod:`dynacu_gym.harness.ray_backend`), and appends one line per finished episode to
``OUT/episodes.jsonl``. A run that is stopped and started again with the same ``OUT`` skips
the episodes already there.

A worker that crashes (dies, or raises out of the episode) or an episode that ends on an
infrastructure fault (``info["infra_error"]``) is retried once in a fresh worker; a second
failure is recorded with ``infra_error`` set, which the report counts apart from the agent's
failures.

Seeds: an episode's seed depends on (task, repeat, base seed) only, not on the mode, so every
mode of a repeat sees the same page and the ablations compare like with like.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import multiprocessing as mp
import os
import queue
import re
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dynacu_gym.harness.choices import BACKENDS
from dynacu_gym.harness.lines import episode_key, setting_of
from dynacu_gym.modes import mode_channels
from dynacu_gym.runtime.process import die_with_parent, exit_on_sigterm

EPISODES_FILE = "episodes.jsonl"
BUILTIN_AGENTS = ("null", "random", "oracle", "nearmiss", "watcher", "llm")
TRACES_DIR = "traces"


@dataclass(frozen=True)
class AgentSpec:
    """Which agent to build in each worker, and how (picklable).

    Attributes:
        name: ``null``, ``random``, ``oracle``, ``llm``, or ``"module:Class"`` for your own
            agent class (built as ``Class(env, **options)``).
        options: keyword arguments for the agent (e.g. ``model``, ``api``, ``base_url`` for
            ``llm``).
    """

    name: str
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def model(self) -> str | None:
        """The model name, for agents that have one."""
        model = self.options.get("model")
        return str(model) if model else None


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode of a plan."""

    task: str
    mode: str
    repeat: int
    seed: int


def episode_seed(task: str, repeat: int, base_seed: int = 0) -> int:
    """The reset seed of ``task``'s ``repeat``: the same in every mode."""
    digest = hashlib.sha256(f"{task}/{repeat}/{base_seed}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def plan_episodes(
    tasks: Iterable[str], modes: Iterable[str], repeats: int, base_seed: int = 0
) -> list[EpisodeSpec]:
    """Every (task, mode, repeat), grouped so a worker reuses one env for a (task, mode)."""
    if repeats < 1:
        raise ValueError(f"expected repeats >= 1, got {repeats}")
    modes = list(modes)
    return [
        EpisodeSpec(task, mode, r, episode_seed(task, r, base_seed))
        for task in tasks
        for mode in modes
        for r in range(repeats)
    ]


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The episode lines already in ``path`` (none if it does not exist).

    A last line cut short (the run was killed while writing) is ignored.
    """
    if not path.exists():
        return []
    lines = []
    raw = path.read_text(encoding="utf-8").splitlines()
    for number, text in enumerate(raw, 1):
        if not text.strip():
            continue
        try:
            lines.append(json.loads(text))
        except json.JSONDecodeError as e:
            if number == len(raw):
                break
            raise ValueError(f"{path}:{number}: not a JSON episode line: {e}") from e
    return lines


def make_agent(spec: AgentSpec, env: Any, episode_seed: int | None = None) -> Any:
    """Build the agent of ``spec`` for ``env``.

    With ``episode_seed``, the random agent draws its actions from that episode's own stream:
    its ``seed`` option (default 0) and the episode's seed together. Each episode of a run then
    tries other actions, and running it again replays them.

    Raises:
        ValueError: an unknown agent name or a ``module:Class`` that cannot be imported.
    """
    from dynacu_agents import AGENTS

    if spec.name == "llm":
        from dynacu_agents.protocols import llm_agent

        return llm_agent(**spec.options)
    if spec.name == "random" and episode_seed is not None:
        seed = [int(spec.options.get("seed") or 0), episode_seed]
        return AGENTS["random"](env, **{**spec.options, "seed": seed})
    if spec.name in AGENTS:
        return AGENTS[spec.name](env, **spec.options)
    if ":" in spec.name:
        module, _, cls = spec.name.partition(":")
        try:
            return getattr(importlib.import_module(module), cls)(env, **spec.options)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"cannot load agent {spec.name!r}: {e}") from e
    raise ValueError(
        f"unknown agent {spec.name!r}; expected one of {', '.join(BUILTIN_AGENTS)} or "
        "'module:Class'"
    )


def trace_name(task: str, mode: str, agent: str, model: str | None, repeat: int) -> str:
    """The folder name of an episode's trace: ``TASK-MODE-AGENT-REPEAT``.

    An agent with a model is named with it (``llm-qwen2.5-vl-7b``; what a file name cannot hold
    becomes ``_``), so the traces of two models in one run stay apart.
    """
    who = f"{agent}-{re.sub(r'[^A-Za-z0-9._-]', '_', model)}" if model else agent
    return f"{task.replace('/', '_')}-{mode}-{who}-{repeat}"  # a suite's "mylab/Z1": mylab_Z1


def trace_dir(out: Path, spec: EpisodeSpec, agent: AgentSpec) -> Path:
    """Where ``evaluate(..., traces=True)`` saves the trace of an episode."""
    return out / TRACES_DIR / trace_name(spec.task, spec.mode, agent.name, agent.model, spec.repeat)


def run_one(
    spec: EpisodeSpec,
    agent: AgentSpec,
    env: Any | None = None,
    trace: Path | None = None,
    env_options: dict[str, Any] | None = None,
    video_fps: float | None = None,
) -> dict[str, Any]:
    """Run one episode in this process and return its line.

    ``env``: reuse this env; ``trace``: save the episode's trace there (see
    :mod:`dynacu_gym.harness.trace`); ``env_options``: keyword arguments of the env (see
    :func:`dynacu_gym.env.make_env`), used when this makes it and recorded in the line;
    ``video_fps``: with a trace, record the screen too and make the trace's ``episode.mp4``.
    """
    import gymnasium as gym

    import dynacu_gym  # noqa: F401 - registers the envs
    from dynacu_gym.harness.episode import run_episode
    from dynacu_gym.harness.trace import TraceRecorder
    from dynacu_gym.tasks import gym_id

    own = env is None
    if env is None:
        env = gym.make(gym_id(spec.task), mode=spec.mode, **(env_options or {}))
    recorder = None
    try:
        recorder = TraceRecorder(env, trace, video_fps) if trace is not None else None
        outcome = run_episode(
            env,
            make_agent(agent, env, spec.seed),
            seed=spec.seed,
            on_step=recorder.on_step if recorder else None,
        )
        if recorder is not None:
            recorder.finish(
                {"mode": spec.mode, "agent": agent.name, "repeat": spec.repeat, **outcome.to_dict()}
            )
    finally:
        if recorder is not None:
            recorder.close()  # its files, and its voice recorder, on a failed episode too
        if own:
            env.close()
    return _line(
        spec,
        agent,
        success=outcome.success,
        reward=outcome.reward,
        credit=round(outcome.credit, 4),
        result=outcome.result,
        steps=outcome.steps,
        wall_s=round(outcome.seconds, 3),
        agent_s=round(outcome.agent_seconds, 3),
        perception_s=outcome.perception_seconds,
        tokens=outcome.tokens,
        llm_calls=outcome.llm_calls,
        infra_error=outcome.infra_error,
        agent_failure=outcome.agent_failure,
        attempts=1,
        agent_errors=len(outcome.errors),
        clock=outcome.clock,
        variety=outcome.variety,
        max_episode_steps=(env_options or {}).get("max_episode_steps"),
        variant=outcome.variant,
        heard=outcome.heard,
        said=outcome.said,
        spoken_answers=outcome.spoken_answers,
        channels=outcome.channels,
    )


def _infra_line(
    spec: EpisodeSpec,
    agent: AgentSpec,
    error: str,
    attempts: int,
    env_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return _line(
        spec,
        agent,
        success=False,
        reward=0.0,
        credit=0.0,
        result="infra_error",
        steps=0,
        wall_s=0.0,
        agent_s=0.0,
        perception_s={},
        tokens={"input": 0, "output": 0},
        llm_calls=0,
        infra_error=error,
        agent_failure="",
        attempts=attempts,
        agent_errors=0,
        **setting_of(env_options or {}),
        variant=None,  # the page never ran
        heard=[],
        said=[],
        spoken_answers=[],
        channels=list(mode_channels(spec.mode)),  # what it was to run with
    )


def _line(spec: EpisodeSpec, agent: AgentSpec, **outcome: Any) -> dict[str, Any]:
    """An episode line: who and what ran (from the specs), then how it went."""
    from dynacu_gym.tasks import find_task

    task = find_task(spec.task)
    return {
        "task": spec.task,
        "category": task.category,
        "tier": task.tier,
        "mode": spec.mode,
        "agent": agent.name,
        "model": agent.model,
        "repeat": spec.repeat,
        "seed": spec.seed,
        **outcome,
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


class EpisodeHost:
    """Plays episodes one after another on this process's sandbox.

    The env of a (task, mode) is kept for the next episode of the same pair. An episode that
    raises is reported, not raised, and its env is closed (it may be wedged) so the next one
    starts afresh. The local backend's worker processes and the Ray backend's actors each hold
    one.
    """

    def __init__(
        self,
        agent: AgentSpec,
        traces: Path | None,
        env_options: dict[str, Any],
        video_fps: float | None = None,
    ) -> None:
        self.agent = agent
        self.traces = traces
        self.env_options = env_options
        self.video_fps = video_fps
        self._env: Any = None
        self._key: tuple[str, str] | None = None

    def run(self, spec: EpisodeSpec) -> tuple[str, Any]:
        """``("done", line)``, or ``("error", what went wrong)`` when the episode raised."""
        import gymnasium as gym

        import dynacu_gym  # noqa: F401 - registers the envs
        from dynacu_gym.tasks import gym_id

        try:
            if self._key != (spec.task, spec.mode):
                self.close()
                self._env = gym.make(gym_id(spec.task), mode=spec.mode, **self.env_options)
                self._key = (spec.task, spec.mode)
            trace = trace_dir(self.traces, spec, self.agent) if self.traces is not None else None
            return "done", run_one(
                spec, self.agent, self._env, trace, self.env_options, self.video_fps
            )
        except Exception as e:  # noqa: BLE001 - reported to the scheduler, which retries it
            tail = traceback.format_exc(limit=3).strip().splitlines()[-1]
            self.close()
            return "error", f"{type(e).__name__}: {e} ({tail})"

    def close(self) -> None:
        """Close the env held, if any."""
        env, self._env, self._key = self._env, None, None
        if env is not None:
            env.close()


def _worker(
    jobs: Any,
    results: Any,
    agent: AgentSpec,
    traces: Path | None,
    env_options: dict[str, Any],
    parent: int,
    video_fps: float | None = None,
) -> None:
    """A worker process: run episodes from ``jobs`` on one :class:`EpisodeHost`.

    Stopped (SIGTERM, also sent by the kernel when the runner dies), it closes its env first.
    """
    # Its own process group: if it dies, the parent stops the sandbox processes it leaves.
    os.setsid()
    exit_on_sigterm()
    die_with_parent(parent)
    host = EpisodeHost(agent, traces, env_options, video_fps)
    try:
        while (item := jobs.get()) is not None:
            index, spec = item
            results.put(("started", index, os.getpid()))
            kind, payload = host.run(spec)
            results.put((kind, index, payload))
    finally:
        host.close()


class Attempts:
    """The retry rule of every backend: an episode runs at most twice.

    A second run follows a crash of its worker, an exception out of the episode, or an episode
    that ended on an infrastructure fault; the second failure is recorded as an infra line.

    Args:
        todo: the episodes to run.
        agent: their agent.
        record: called with each finished line.
        send: queues an episode (its index in ``todo``) to be run.
        env_options: the envs' options (an infra line records their setting).
    """

    def __init__(
        self,
        todo: list[EpisodeSpec],
        agent: AgentSpec,
        record: Callable[[dict[str, Any]], None],
        send: Callable[[int], None],
        env_options: dict[str, Any],
    ) -> None:
        self.todo, self.agent, self.record, self.send = todo, agent, record, send
        self.env_options = env_options
        self.count = dict.fromkeys(range(len(todo)), 0)
        self.remaining = len(todo)

    def submit(self, index: int) -> None:
        self.count[index] += 1
        self.send(index)

    def failed(self, index: int, error: str) -> None:
        """The episode's run crashed or raised: run it again, or record the infra failure."""
        if self.count[index] < 2:
            self.submit(index)
            return
        line = _infra_line(self.todo[index], self.agent, error, self.count[index], self.env_options)
        self.record(line)
        self.remaining -= 1

    def finished(self, index: int, line: dict[str, Any]) -> None:
        """The episode ran to its end: record it, or run it again after an infra fault."""
        if line["infra_error"] and self.count[index] < 2:
            self.submit(index)
            return
        line["attempts"] = self.count[index]
        self.record(line)
        self.remaining -= 1


class _Progress:
    """A progress bar on stderr (one line per episode when stderr is not a terminal)."""

    def __init__(self, total: int, skipped: int) -> None:
        self.total, self.done = total, 0
        self.counts = {"success": 0, "fail": 0, "infra": 0}
        self.tty = sys.stderr.isatty()
        self.t0 = time.monotonic()
        if skipped:
            print(f"resuming: {skipped} episodes already done, {total} to run", file=sys.stderr)

    def update(self, line: dict[str, Any]) -> None:
        self.done += 1
        kind = "infra" if line["infra_error"] else ("success" if line["success"] else "fail")
        self.counts[kind] += 1
        width = 24
        filled = int(width * self.done / max(self.total, 1))
        bar = "#" * filled + "-" * (width - filled)
        text = (
            f"[{bar}] {self.done}/{self.total}  {line['task']} {line['mode']} "
            f"#{line['repeat']}: {line['result']} ({line['wall_s']:.1f} s)  "
            f"ok {self.counts['success']} fail {self.counts['fail']} "
            f"infra {self.counts['infra']}  {time.monotonic() - self.t0:.0f} s"
        )
        if self.tty:
            end = "\n" if self.done == self.total else ""
            print("\r" + text.ljust(110), end=end, file=sys.stderr, flush=True)
        else:
            print(text, file=sys.stderr, flush=True)


def evaluate(
    agent: AgentSpec,
    tasks: list[str],
    modes: list[str],
    out: Path,
    repeats: int = 1,
    workers: int = 1,
    base_seed: int = 0,
    retry_infra: bool = False,
    on_line: Callable[[dict[str, Any]], None] | None = None,
    traces: bool = False,
    env_options: dict[str, Any] | None = None,
    backend: str = "local",
    ray_address: str | None = None,
    video_fps: float | None = None,
) -> list[dict[str, Any]]:
    """Run every episode of the plan not yet in ``out`` and return all of this plan's lines.

    Args:
        agent: the agent to evaluate.
        tasks: task ids.
        modes: modes (each checked before anything runs).
        out: the output directory; ``episodes.jsonl`` in it is appended to.
        repeats: episodes per (task, mode).
        workers: worker processes (Ray actors with the ``ray`` backend), each with its own
            sandbox.
        base_seed: varies every episode's seed.
        retry_infra: run again the episodes recorded as infrastructure failures.
        on_line: called with each new line (the CLI's progress bar uses its own).
        traces: save every episode's trace (records, screenshots, keyframes, speaker audio)
            under ``out/traces/`` (see :func:`trace_dir`).
        video_fps: with ``traces``, also record the screen at this rate and make each trace's
            ``episode.mp4`` (the screen, its sound, the steps; see :mod:`~.video`).
        env_options: keyword arguments of every env (e.g. ``{"max_keyframes": 8}``,
            ``{"clock": "paused"}``; see :func:`dynacu_gym.env.make_env`).
        backend: ``local`` (worker processes on this machine) or ``ray`` (actors on a Ray
            cluster; see :mod:`dynacu_gym.harness.ray_backend`).
        ray_address: the Ray cluster to join (``HOST:PORT``, or ``auto`` for the one this
            machine belongs to); by default a local one is started for the run.

    Raises:
        ValueError: a bad mode, task, agent, worker count or backend; or ``out`` holds
            episodes run on another clock or variety setting
            (:func:`~dynacu_gym.harness.report.setting_of`), which a resume would mix.
    """
    from dynacu_gym.modes import check_mode
    from dynacu_gym.tasks import find_task

    modes = [check_mode(mode) for mode in modes]  # canonical: a preset's name where one fits
    for task in tasks:
        find_task(task)
    if workers < 1:
        raise ValueError(f"expected workers >= 1, got {workers}")
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    if ray_address is not None and backend != "ray":
        raise ValueError("ray_address is for the ray backend (backend='ray')")
    if video_fps is not None and not traces:
        raise ValueError("a video is made from a trace: video_fps needs traces=True (--traces)")
    if agent.name == "llm" or (agent.name not in BUILTIN_AGENTS and ":" not in agent.name):
        make_agent(agent, None)  # raises the clear error before any worker starts
    out.mkdir(parents=True, exist_ok=True)
    path = out / EPISODES_FILE
    plan = plan_episodes(tasks, modes, repeats, base_seed)
    existing = {episode_key(line): line for line in read_lines(path)}
    setting = setting_of(env_options or {})
    for line in existing.values():
        if (held := setting_of(line)) != setting:
            raise ValueError(
                f"{path} holds episodes run with {_describe(held)}; this run asks for "
                f"{_describe(setting)}: give it another output folder"
            )

    def key_of(spec: EpisodeSpec) -> tuple[Any, ...]:
        return (spec.task, spec.mode, agent.name, agent.model, spec.repeat)

    todo = [
        spec
        for spec in plan
        if key_of(spec) not in existing
        or (retry_infra and existing[key_of(spec)].get("infra_error"))
    ]
    progress = _Progress(len(todo), len(plan) - len(todo))
    with path.open("a", encoding="utf-8") as sink:

        def record(line: dict[str, Any]) -> None:
            sink.write(json.dumps(line) + "\n")
            sink.flush()
            os.fsync(sink.fileno())
            existing[episode_key(line)] = line
            progress.update(line)
            if on_line is not None:
                on_line(line)

        if todo and backend == "ray":
            from dynacu_gym.harness.ray_backend import run_on_ray

            run_on_ray(
                todo, agent, workers, record, out if traces else None, env_options or {},
                ray_address, video_fps,
            )  # fmt: skip
        elif todo:
            _run_workers(
                todo, agent, workers, record, out if traces else None, env_options or {},
                video_fps,
            )  # fmt: skip
    return [existing[key_of(spec)] for spec in plan if key_of(spec) in existing]


def _describe(setting: dict[str, Any]) -> str:
    """A setting in words; a key left at None (each task's own step limit) goes unsaid."""
    return ", ".join(f"{key}={value}" for key, value in setting.items() if value is not None)


def _run_workers(
    todo: list[EpisodeSpec],
    agent: AgentSpec,
    workers: int,
    record: Callable[[dict[str, Any]], None],
    traces: Path | None = None,
    env_options: dict[str, Any] | None = None,
    video_fps: float | None = None,
) -> None:
    """Run ``todo`` on worker processes; retry a crashed or infra-failed episode once."""
    ctx = mp.get_context("spawn")  # no inherited threads, browsers or locks
    jobs: Any = ctx.Queue()
    results: Any = ctx.Queue()
    attempts = Attempts(todo, agent, record, lambda i: jobs.put((i, todo[i])), env_options or {})
    running: dict[int, int] = {}  # pid -> index of the episode it holds
    procs: list[Any] = []

    def spawn() -> None:
        args = (jobs, results, agent, traces, env_options or {}, os.getpid(), video_fps)
        proc = ctx.Process(target=_worker, args=args, daemon=True)
        proc.start()
        procs.append(proc)

    for index in range(len(todo)):
        attempts.submit(index)
    for _ in range(min(workers, len(todo))):
        spawn()
    spawn_budget = 2 * len(todo) + workers  # a worker that dies at start must not loop forever
    try:
        while attempts.remaining:
            try:
                kind, index, payload = results.get(timeout=1.0)
            except queue.Empty:
                for proc in [p for p in procs if not p.is_alive()]:
                    procs.remove(proc)
                    _stop_group(proc.pid)  # its Xvfb, PulseAudio, ... outlive it otherwise
                    held = running.pop(proc.pid, None)
                    if held is not None:
                        attempts.failed(
                            held, f"the worker process died (exit code {proc.exitcode})"
                        )
                    if attempts.remaining:
                        spawn_budget -= 1
                        if spawn_budget < 0:
                            raise RuntimeError(
                                f"evaluation workers keep dying (last exit code {proc.exitcode})"
                            ) from None
                        spawn()
                continue
            if kind == "started":
                running[payload] = index
                continue
            running = {pid: i for pid, i in running.items() if i != index}
            if kind == "error":
                attempts.failed(index, payload)
            else:
                attempts.finished(index, payload)
    except BaseException:
        # Stopped (Ctrl-C, SIGTERM: see the CLI) or failed: the workers close their envs now,
        # not after their episodes, and the queue's unread jobs do not hold up this exit.
        jobs.cancel_join_thread()
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        raise
    finally:
        for _ in procs:
            jobs.put(None)
        for proc in procs:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.kill()
                proc.join()
            _stop_group(proc.pid)


def _stop_group(pgid: int, grace_s: float = 3.0) -> None:
    """Stop every process left in a dead worker's process group (SIGTERM, then SIGKILL)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except (ProcessLookupError, PermissionError):
                return
            time.sleep(0.05)


def summary_rows(lines: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """Per (mode): episodes, successes, infra failures (a quick table for the CLI)."""
    by_mode: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        by_mode.setdefault(line["mode"], []).append(line)
    rows: list[tuple[str, ...]] = []
    for mode, group in by_mode.items():
        infra = sum(1 for line in group if line["infra_error"])
        ok = sum(1 for line in group if line["success"])
        n = len(group) - infra
        rows.append((mode, str(n), str(ok), f"{100 * ok / n:.0f}%" if n else "-", str(infra)))
    return rows


__all__ = [
    "AgentSpec",
    "EpisodeSpec",
    "episode_key",
    "episode_seed",
    "evaluate",
    "make_agent",
    "plan_episodes",
    "read_lines",
    "run_one",
]
