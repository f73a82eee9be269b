"""A watcher that stops what a process leaves behind when it dies.

``python -m dynacu_gym.runtime.reaper PID`` runs in its own session and notes, twice a second,
every descendant of ``PID`` (with its start time, so a reused process id is never mistaken for
one). When ``PID`` is gone it sends SIGTERM to the descendants still alive, then SIGKILL to
those left after a grace period, and exits.

A process that owns a sandbox (Xvfb, PulseAudio, the browser) and is killed without running its
cleanup, a Ray actor killed by Ray or by the kernel's OOM killer for instance, would otherwise
leave the sandbox running on its node: orphans adopted by init, out of reach of whoever started
the process (on a cluster, another machine). :func:`start_reaper` starts one for this process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from dynacu_gym.runtime.process import descendant_starts, proc_stat

INTERVAL_S = 0.5
GRACE_S = 3.0


def _alive(known: dict[int, int]) -> dict[int, int]:
    return {pid: t for pid, t in known.items() if (info := proc_stat(pid)) and info[1] == t}


def _signal(known: dict[int, int], sig: int) -> None:
    for pid in _alive(known):
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def watch(pid: int, interval_s: float = INTERVAL_S, grace_s: float = GRACE_S) -> int:
    """Watch ``pid`` until it dies, then stop its descendants; return how many were left."""
    first = proc_stat(pid)
    if first is None:
        return 0
    known: dict[int, int] = {}
    while (info := proc_stat(pid)) is not None and info[1] == first[1]:
        known = _alive(known)
        known.update(descendant_starts(pid))
        known.pop(os.getpid(), None)  # the reaper is a child of the watched process too
        time.sleep(interval_s)
    left = _alive(known)
    if not left:
        return 0
    _signal(left, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while _alive(left) and time.monotonic() < deadline:
        time.sleep(0.05)
    _signal(left, signal.SIGKILL)
    return len(left)


def start_reaper(pid: int | None = None) -> subprocess.Popen[bytes]:
    """Start a reaper of ``pid`` (default: this process) in its own session."""
    watched = os.getpid() if pid is None else pid
    return subprocess.Popen(
        [sys.executable, "-m", "dynacu_gym.runtime.reaper", str(watched)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # not in the group a killer of the watched process signals
    )


def main(argv: list[str] | None = None) -> int:
    """The command line: ``PID``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not args[0].isdigit():
        print("usage: python -m dynacu_gym.runtime.reaper PID", file=sys.stderr)
        return 2
    watch(int(args[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
