"""Child processes that the sandbox owns: started with Popen, stopped by signal, always reaped."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from dynacu_gym.errors import InfraError  # noqa: F401 - its home before errors.py


class ChildProcess:
    """One child process, owned and reaped by us.

    Daemonising (``-D``, a shell ``&``) leaves zombies in containers, so every child runs in the
    foreground under ``Popen`` and ``stop()`` always ``wait()``s for it. Its stderr goes to a log
    file so that an error can quote the child's last words.
    """

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        log_path: Path,
        env: Mapping[str, str] | None = None,
        pass_fds: Sequence[int] = (),
        stdin: int | None = subprocess.DEVNULL,
        stdout: int | None = subprocess.DEVNULL,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self._log = open(log_path, "ab")
        try:
            self.popen = subprocess.Popen(
                self.argv,
                env=dict(env) if env is not None else None,
                stdin=stdin,
                stdout=stdout,
                stderr=self._log,
                pass_fds=tuple(pass_fds),
                close_fds=True,
            )
        except OSError as e:
            self._log.close()
            raise InfraError(f"could not start {name} ({self.argv[0]}): {e}") from e

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self.popen.pid

    def alive(self) -> bool:
        """Whether the child is still running."""
        return self.popen.poll() is None

    def log_tail(self, max_chars: int = 800) -> str:
        """The end of the child's stderr, for error messages."""
        try:
            data = self.log_path.read_bytes()[-max_chars:]
        except OSError:
            return ""
        return data.decode("utf-8", "replace").strip()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 3.0) -> None:
        """Send ``sig``, wait up to ``timeout`` seconds, then SIGKILL; always reap. Idempotent."""
        if self.popen.poll() is None:
            try:
                self.popen.send_signal(sig)
                self.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
            except ProcessLookupError:
                self.popen.wait()
        if self.popen.stdin is not None:
            try:
                self.popen.stdin.close()
            except (BrokenPipeError, OSError, ValueError):
                pass  # the child is gone: what was still buffered for it does not matter
        if self.popen.stdout is not None:
            self.popen.stdout.close()
        self._log.close()


def wait_until(predicate, timeout: float, interval: float = 0.02) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` seconds pass; return its last value."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def proc_stat(pid: int) -> tuple[int, int] | None:
    """(parent id, start time in clock ticks) of ``pid`` from /proc, or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may hold spaces; fields follow the last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    return int(fields[1]), int(fields[19])


def descendant_starts(pid: int | None = None) -> dict[int, int]:
    """Every living descendant of ``pid`` (default: this process): id -> start time, from /proc.

    The start time tells a process from a later one given the same id.
    """
    root = os.getpid() if pid is None else pid
    started: dict[int, int] = {}
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (info := proc_stat(int(entry))) is not None:
            children.setdefault(info[0], []).append(int(entry))
            started[int(entry)] = info[1]
    found: dict[int, int] = {}
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found[child] = started[child]
                stack.append(child)
    return found


def descendants(pid: int | None = None) -> set[int]:
    """Process ids of all living descendants of ``pid`` (default: this process), from /proc."""
    return set(descendant_starts(pid))


def exit_on_sigterm() -> None:
    """Make SIGTERM raise ``SystemExit(143)`` in this process, so ``finally`` blocks run.

    Python's default on SIGTERM is to die at once: a process that owns a sandbox would leave
    its display, audio daemon and browser running. Call from the main thread.

    Only the first SIGTERM stops the process; later ones are ignored, so they cannot cut its
    cleanup short. They come: a worker of a killed runner can get its parent-death signal more
    than once (seen on a loaded machine: two, 13 ms apart, the second inside the browser's
    stop, and the display and audio daemon were left running). SIGKILL still ends it at once.
    """

    def stop(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


PR_SET_PDEATHSIG = 1  # prctl(2)


def die_with_parent(parent: int) -> None:
    """Have the kernel send this process SIGTERM when ``parent`` (its parent) dies.

    A worker of a killed runner would otherwise go on running its queue's episodes with no one
    to collect them. Exits at once if the parent is already gone. Linux only (``prctl``).
    """
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # it died before the request took hold
        raise SystemExit(128 + signal.SIGTERM)
