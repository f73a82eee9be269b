"""Soak: hundreds of episodes back to back, and what the process holds as they go.

    python benchmarks/soak.py [--episodes 300] [--every 25] [--task H1]
        [--modes standard,aoi_visual,aoi_audio,aoi_full,aoi_interactive]

One env per mode plays its share of the episodes in turn (60 each by default), each a
``reset`` and the same short script: a wait, a click, typing, in ``aoi_interactive`` a spoken
sentence, a wait, ``done``. The default task's page plays a voice, so every mode's channels
work: the screen and keyframes, the transcript of the page's audio (Whisper), and speech into
the microphone. Every ``--every`` episodes it prints, for this process and everything it
started: resident memory (RSS, MiB: all of it, this process's, the browser's), open file
descriptors (all, this process's), processes, threads of this process, and the PulseAudio
modules loaded in the env's sandbox. A leak shows as a column that keeps
rising within a mode's block; the processes column must come back to its level between
blocks (a closed env leaves nothing). The last line compares the first and last reading of
each block.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from pathlib import Path

import gymnasium as gym

import dynacu_gym  # noqa: F401 - registers the envs
from dynacu_gym import parse_action
from dynacu_gym.modes import MODES
from dynacu_gym.runtime.process import descendants

SCRIPT = ["wait 1", "click 640 360", 'type "soak"', 'speak "This is the soak test speaking."',
          "wait 2", "done"]  # fmt: skip


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def _is_browser(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip().startswith("chromium")
    except OSError:
        return False


def reading(env: gym.Env) -> dict[str, float]:
    """What this process and its descendants hold now."""
    me = os.getpid()
    tree = descendants() | {me}
    audio = env.unwrapped.sandbox.audio
    modules = audio.pactl("list", "short", "modules", check=False).strip().splitlines()
    return {
        "rss_mib": sum(_rss_kib(p) for p in tree) / 1024,
        "own_rss_mib": _rss_kib(me) / 1024,
        "browser_rss_mib": sum(_rss_kib(p) for p in tree if _is_browser(p)) / 1024,
        "fds": sum(_fds(p) for p in tree),
        "own_fds": _fds(me),
        "processes": len(tree) - 1,
        "threads": threading.active_count(),
        "pulse_modules": len(modules),
    }


def play(env: gym.Env, seed: int, speak: bool) -> str:
    _, info = env.reset(seed=seed)
    result = "pending"
    for text in SCRIPT:
        if text.startswith("speak") and not speak:
            continue
        _, _, terminated, truncated, info = env.step(parse_action(text))
        if info.get("infra_error"):
            return f"infra_error: {info['infra_error']}"
        result = str(info.get("task_result", result))
        if terminated or truncated:
            break
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--every", type=int, default=25)
    parser.add_argument("--task", default="H1")
    parser.add_argument("--modes", default=",".join(MODES))
    args = parser.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    per_mode = -(-args.episodes // len(modes))

    columns = ("rss_mib", "own_rss_mib", "browser_rss_mib", "fds", "own_fds", "processes",
               "threads", "pulse_modules")  # fmt: skip
    print(f"task {args.task}, {args.episodes} episodes, {per_mode} per mode, "
          f"{os.cpu_count()} CPUs")  # fmt: skip
    print(f"{'episode':>7} {'mode':<16} {'wall s':>7} " + " ".join(f"{c:>15}" for c in columns))
    blocks: list[tuple[str, dict[str, float], dict[str, float]]] = []
    infra: list[str] = []
    done, t0 = 0, time.monotonic()
    baseline = len(descendants())
    for mode in modes:
        env = gym.make(f"DynaCU-{args.task}-v0", mode=mode)
        first: dict[str, float] | None = None
        last: dict[str, float] = {}
        try:
            for k in range(per_mode):
                if done == args.episodes:
                    break
                result = play(env, seed=done, speak=mode == "aoi_interactive")
                if result.startswith("infra_error"):
                    infra.append(f"episode {done} ({mode}): {result}")
                done += 1
                if done % args.every == 0 or k == 0:
                    last = reading(env)
                    first = first or last
                    print(f"{done:>7} {mode:<16} {time.monotonic() - t0:>7.0f} "
                          + " ".join(f"{last[c]:>15.1f}" for c in columns), flush=True)  # fmt: skip
        finally:
            env.close()
        blocks.append((mode, first or {}, last))
    time.sleep(1.0)
    left = len(descendants()) - baseline
    print()
    for mode, first, last in blocks:
        change = ", ".join(f"{c} {last[c] - first[c]:+.1f}" for c in columns if c in first)
        print(f"{mode:<16} first to last reading: {change}")
    print(f"processes left after the last env closed: {left}")
    print(f"infrastructure failures: {len(infra)}")
    for line in infra:
        print(f"  {line}")


if __name__ == "__main__":
    main()
