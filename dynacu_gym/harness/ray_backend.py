"""Evaluation on a Ray cluster: ``dynacu eval --backend ray [--ray-address HOST:PORT]``.

Ray is the engine: each worker is a Ray actor that owns one sandbox (its display, audio daemon
and browser, on whichever node Ray places it) and plays episodes there, keeping the env of a
(task, mode) for the next episode of the same pair. The driver, where ``dynacu eval`` runs,
hands out the episodes (an actor is given one of the (task, mode) it already holds when one is
waiting), writes the same ``episodes.jsonl`` as the local backend, and follows the same rules:
a run resumes where it stopped, and an episode whose actor died or that ended on an
infrastructure fault runs once more before it is recorded as an infra failure. A dead actor is
replaced by a new one.

Traces are written on the actor's node, packed, and unpacked under ``OUT/traces/`` on the
driver, so they need no shared file system.

Each actor asks Ray for one CPU, so a cluster never runs more sandboxes than it has CPUs; more
workers than that are not started. Each starts a reaper
(:mod:`dynacu_gym.runtime.reaper`) that stops its sandbox if the actor is killed before it
can close it.

Every node needs what a local run needs: the system packages (Chromium, Xvfb, PulseAudio,
ffmpeg), ``dynacu-gym`` with its models, and the same Ray and Python versions as the driver.
A user's suites reach the actors through ``$DYNACU_TASK_PATH`` as the driver has it (the
driver's :func:`dynacu_gym.register_tasks` calls included), so each node must hold the
suites' folders at the same paths.
"""

from __future__ import annotations

import collections
import io
import os
import shutil
import socket
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dynacu_gym.harness.runner import (
    TRACES_DIR,
    AgentSpec,
    Attempts,
    EpisodeHost,
    EpisodeSpec,
    trace_dir,
)
from dynacu_gym.tasks.catalogue import TASK_PATH_VAR

RAY_EXTRA = "pip install 'dynacu-gym[ray]'"
CLOSE_TIMEOUT_S = 60.0


class EpisodeActor:
    """A Ray actor's body: one :class:`EpisodeHost` on the node Ray chose."""

    def __init__(
        self,
        agent: AgentSpec,
        env_options: dict[str, Any],
        traces: bool,
        video_fps: float | None = None,
    ) -> None:
        from dynacu_gym.runtime.reaper import start_reaper

        self._reaper = start_reaper()
        self._traces = Path(tempfile.mkdtemp(prefix="dynacu-actor-")) if traces else None
        self.agent = agent
        self.host = EpisodeHost(agent, self._traces, env_options, video_fps)

    def where(self) -> dict[str, Any]:
        """The node and process this actor runs in."""
        return {"node": socket.gethostname(), "pid": os.getpid()}

    def run(self, spec: EpisodeSpec) -> tuple[str, Any, bytes | None]:
        """Play one episode: ``(kind, line or error, the packed trace or None)``."""
        kind, payload = self.host.run(spec)
        packed = None
        if self._traces is not None:
            folder = trace_dir(self._traces, spec, self.agent)
            if folder.is_dir():
                packed = _pack(folder)
                shutil.rmtree(folder)
        return kind, payload, packed

    def close(self) -> None:
        """Close the env and remove the actor's trace folder."""
        self.host.close()
        if self._traces is not None:
            shutil.rmtree(self._traces, ignore_errors=True)


def _pack(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:  # PNG and WAV gain nothing from gzip
        tar.add(folder, arcname=folder.name)
    return buffer.getvalue()


def _unpack(packed: bytes, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(packed), mode="r") as tar:
        tar.extractall(into, filter="data")  # no paths out of ``into``, no links or devices


def run_on_ray(
    todo: list[EpisodeSpec],
    agent: AgentSpec,
    workers: int,
    record: Callable[[dict[str, Any]], None],
    traces: Path | None,
    env_options: dict[str, Any],
    address: str | None = None,
    video_fps: float | None = None,
) -> None:
    """Run ``todo`` on Ray actors; called by :func:`dynacu_gym.harness.runner.evaluate`.

    Raises:
        RuntimeError: Ray is not installed, the cluster cannot be joined, or actors keep dying.
    """
    try:
        import ray
    except ImportError as e:
        raise RuntimeError(f"the ray backend needs Ray: {RAY_EXTRA}") from e

    own = not ray.is_initialized()
    if own:
        _check_reachable(address)
        try:
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        except (ConnectionError, RuntimeError, ValueError) as e:
            where = address or "a local cluster"
            raise RuntimeError(f"cannot start or join the Ray cluster at {where}: {e}") from e
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if cpus < 1:
            raise RuntimeError("the Ray cluster has no CPU to run an actor on")
        slots = min(workers, cpus, len(todo))
        _schedule(todo, agent, slots, record, traces, env_options, video_fps)
    finally:
        if own:
            ray.shutdown()


def _schedule(
    todo: list[EpisodeSpec],
    agent: AgentSpec,
    workers: int,
    record: Callable[[dict[str, Any]], None],
    traces: Path | None,
    env_options: dict[str, Any],
    video_fps: float | None = None,
) -> None:
    import ray
    from ray.exceptions import RayActorError, RayError

    # A user's suites travel by name: the actors read $DYNACU_TASK_PATH as this process has it,
    # so every node must hold the suites' folders at the same paths.
    task_path = os.environ.get(TASK_PATH_VAR, "")
    suites = {"env_vars": {TASK_PATH_VAR: task_path}} if task_path else {}
    remote = ray.remote(num_cpus=1, max_restarts=0, runtime_env=suites)(EpisodeActor)
    waiting: collections.deque[int] = collections.deque()
    attempts = Attempts(todo, agent, record, waiting.append, env_options)
    for index in range(len(todo)):
        attempts.submit(index)
    actors: list[Any] = [None] * workers
    held: list[tuple[str, str] | None] = [None] * workers  # the (task, mode) each one holds
    running: dict[Any, tuple[int, int]] = {}  # object ref -> (actor slot, episode index)
    spawn_budget = 2 * len(todo) + workers  # an actor that dies at start must not loop forever

    def start(slot: int) -> None:
        nonlocal spawn_budget
        spawn_budget -= 1
        if spawn_budget < 0:
            raise RuntimeError("evaluation actors keep dying on the Ray cluster")
        actors[slot] = remote.remote(agent, env_options, traces is not None, video_fps)
        held[slot] = None

    def next_for(slot: int) -> int:
        """A waiting episode of the (task, mode) the actor holds, else the oldest waiting."""
        for index in waiting:
            if (todo[index].task, todo[index].mode) == held[slot]:
                waiting.remove(index)
                return index
        return waiting.popleft()

    for slot in range(workers):
        start(slot)
    try:
        while attempts.remaining:
            busy = {slot for slot, _ in running.values()}
            for slot in range(workers):
                if slot not in busy and waiting:
                    index = next_for(slot)
                    spec = todo[index]
                    held[slot] = (spec.task, spec.mode)
                    running[actors[slot].run.remote(spec)] = (slot, index)
            ready, _ = ray.wait(list(running), num_returns=1, timeout=1.0)
            for ref in ready:
                slot, index = running.pop(ref)
                try:
                    kind, payload, packed = ray.get(ref)
                except RayActorError as e:
                    ray.kill(actors[slot])
                    start(slot)
                    attempts.failed(index, f"the Ray actor died: {_first_line(e)}")
                    continue
                except RayError as e:  # the call failed in Ray, not in the episode
                    attempts.failed(index, f"Ray failed the episode: {_first_line(e)}")
                    continue
                if packed is not None and traces is not None:
                    _unpack(packed, traces / TRACES_DIR)
                if kind == "error":
                    attempts.failed(index, payload)
                else:
                    attempts.finished(index, payload)
    finally:
        _close([a for a in actors if a is not None])


def _close(actors: list[Any]) -> None:
    """Close every actor's env (bounded), then end the actors."""
    import ray

    pending = [actor.close.remote() for actor in actors]
    deadline = time.monotonic() + CLOSE_TIMEOUT_S
    while pending and time.monotonic() < deadline:
        _, pending = ray.wait(pending, num_returns=len(pending), timeout=1.0)
    for actor in actors:
        ray.kill(actor)


def _check_reachable(address: str | None, timeout_s: float = 5.0) -> None:
    """Fail at once when nothing listens at ``HOST:PORT`` (Ray itself retries for minutes)."""
    if address is None or address == "auto" or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise RuntimeError(f"expected the Ray cluster's address as HOST:PORT, got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as e:
        raise RuntimeError(
            f"cannot start or join the Ray cluster at {address}: nothing answers there ({e}); "
            "start one with 'ray start --head' and give its address"
        ) from e


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
