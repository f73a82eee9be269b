"""Evaluation throughput: episodes per hour with 1, 2 and 4 workers, and memory per worker.

    python benchmarks/throughput.py [--backend ray|local] [--workers 1,2,4]
        [--tasks F1,E1,B2,D4] [--mode aoi_full] [--repeats 2]

For each worker count, the oracle plays the same plan (every task x ``--repeats``, in one mode)
through ``evaluate`` into a fresh folder, while a sampler reads, twice a second, the
proportional set size (PSS: shared pages split between the processes that share them) of
every process the run started: the workers or Ray actors and their sandboxes (Xvfb, PulseAudio,
Chromium and its renderers, ffmpeg). Printed per worker count: episodes, wall seconds,
episodes per hour, the peak PSS of the run and that peak per worker, and the share of episodes
solved (a run that solves fewer is a run that was too loaded). With the Ray backend, the Ray
cluster's own processes (GCS, raylet) are counted apart, once: they run on the head node.

Size a cluster from it: a node runs about as many workers as its CPU count allows before
episodes per hour stop rising, and needs the peak per worker times that, plus Ray's own.

Then, per worker count, the peak's parts (at the sample of the peak): Chromium, the worker
processes (Python: the env, Whisper, the voice), Xvfb, PulseAudio and its clients (parec,
pacat), ffmpeg, the rest. Target: at most 800 MiB per worker with every channel.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

from dynacu_gym.harness.runner import AgentSpec, evaluate

RAY_PARTS = ("gcs_server", "raylet", "ray::IDLE", "ray::Sandbox", "log_monitor", "monitor.py",
             "dashboard", "runtime_env", "ray::Actor")  # fmt: skip


TARGET_MIB_PER_WORKER = 800
PARTS = ("chromium", "python", "Xvfb", "pulseaudio", "parec/pacat", "ffmpeg", "other")


def _part(cmd: str) -> str:
    """Which part of a sandbox or worker a process is, by its command line."""
    program = Path(cmd.split(" ", 1)[0]).name
    if "chrom" in program:
        return "chromium"
    if program.startswith("python") or cmd.startswith(("ray::", "ray_")):
        return "python"
    if program in ("parec", "pacat"):
        return "parec/pacat"
    return program if program in PARTS else "other"


def _pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _processes() -> dict[int, str]:
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                found[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
    return {pid: cmd.decode(errors="replace") for pid, cmd in found.items()}


class Sampler(threading.Thread):
    """Peak PSS of the processes that appeared after it started (not this one), split into
    Ray's own and the rest."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.before = set(_processes())
        self.stop = threading.Event()
        self.peak_kib = 0
        self.peak_ray_kib = 0
        self.peak_parts: dict[str, int] = {}  # KiB by part, at the sample of the peak

    def run(self) -> None:
        me = os.getpid()
        while not self.stop.wait(0.5):
            work = ray = 0
            parts: dict[str, int] = {}
            for pid, cmd in _processes().items():
                if pid in self.before or pid == me:
                    continue
                is_ray = any(part in cmd for part in RAY_PARTS) and "Sandbox" not in cmd
                if is_ray:
                    ray += _pss_kib(pid)
                else:
                    kib = _pss_kib(pid)
                    work += kib
                    parts[_part(cmd)] = parts.get(_part(cmd), 0) + kib
            if work > self.peak_kib:
                self.peak_kib, self.peak_parts = work, parts
            self.peak_ray_kib = max(self.peak_ray_kib, ray)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=("ray", "local"), default="ray")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--tasks", default="F1,E1,B2,D4")
    parser.add_argument("--mode", default="aoi_full")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    counts = [int(w) for w in args.workers.split(",")]

    print(f"backend {args.backend}, mode {args.mode}, tasks {','.join(tasks)} x {args.repeats}, "
          f"{os.cpu_count()} CPUs")  # fmt: skip
    print(f"{'workers':>7} {'episodes':>8} {'solved':>6} {'wall s':>7} {'ep/hour':>8} "
          f"{'peak MiB':>8} {'MiB/worker':>10} {'Ray MiB':>7}")  # fmt: skip
    rows: list[tuple[int, float, dict[str, int]]] = []
    for workers in counts:
        sampler = Sampler()  # started first, so it counts Ray's own processes too
        sampler.start()
        if args.backend == "ray":
            import ray

            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        try:
            with tempfile.TemporaryDirectory(prefix="dynacu-throughput-") as out:
                t = time.monotonic()
                lines = evaluate(
                    AgentSpec("oracle"), tasks, [args.mode], Path(out), repeats=args.repeats,
                    workers=workers, backend=args.backend,
                )  # fmt: skip
                wall = time.monotonic() - t
        finally:
            sampler.stop.set()
            sampler.join()
            if args.backend == "ray":
                ray.shutdown()
        solved = sum(line["success"] for line in lines)
        per_hour = len(lines) / wall * 3600
        peak = sampler.peak_kib / 1024
        print(f"{workers:>7} {len(lines):>8} {solved:>6} {wall:>7.0f} {per_hour:>8.0f} "
              f"{peak:>8.0f} {peak / workers:>10.0f} {sampler.peak_ray_kib / 1024:>7.0f}",
              flush=True)  # fmt: skip
        rows.append((workers, peak / workers, sampler.peak_parts))
    print(f"\npeak PSS per worker by part, MiB (target <= {TARGET_MIB_PER_WORKER} per worker):")
    print(f"{'workers':>7} " + " ".join(f"{part:>11}" for part in PARTS) + f" {'total':>7}")
    for workers, per_worker, parts in rows:
        cells = " ".join(f"{parts.get(part, 0) / 1024 / workers:>11.0f}" for part in PARTS)
        print(f"{workers:>7} {cells} {per_worker:>7.0f}")


if __name__ == "__main__":
    main()
