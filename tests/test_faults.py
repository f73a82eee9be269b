"""Infrastructure faults on the real stack: each ends the episode cleanly (truncated, with
``info["infra_error"]`` naming the part that failed, never scored) or fails clearly at the
start, and the next reset recovers."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dynacu_gym import parse_action
from dynacu_gym.episode import run_episode
from dynacu_gym.runtime.process import InfraError, wait_until
from dynacu_gym.runtime.sandbox import SandboxConfig
from dynacu_gym.tasks import load_task
from dynacu_gym.trace import TRACE_FILE, TraceRecorder

pytestmark = pytest.mark.browser


def _ends_on_infra(outcome, part: str) -> None:
    """The step ended the episode as an infrastructure fault naming ``part``, unscored."""
    obs, reward, terminated, truncated, info = outcome
    assert truncated and not terminated
    assert reward == 0.0 and info["credit"] == 0.0
    assert info["task_result"] == "pending"  # no verdict, neither success nor failure
    assert part in info["infra_error"], info["infra_error"]
    assert info["last_action_error"] == ""  # not the agent's mistake


def _recovers(env, restarts: int = 1) -> None:
    """The next reset rebuilds what failed, and a click lands and shows."""
    _, info = env.reset(seed=1)
    assert info["restarts"] == restarts
    obs, reward, terminated, truncated, info = env.step(parse_action("click 300 300"))
    assert not truncated and "infra_error" not in info and info["last_action_error"] == ""
    assert env.evaluate_in_page("() => window.probe.clicks") == [[300, 300]]
    assert obs["screenshot"][300, 300, 0] > 200  # the page's red click marker, on the new screen


def _kill(pid: int | None) -> None:
    assert pid is not None
    os.kill(pid, signal.SIGKILL)


def test_browser_killed_during_a_wait_ends_the_step_early(make_env, probe_task):
    env = make_env(probe_task)
    env.reset(seed=0)
    pids = env.sandbox.browser.browser_pids()
    assert pids
    killer = threading.Timer(1.0, lambda: [_kill(pid) for pid in pids])
    killer.start()
    t = time.monotonic()
    outcome = env.step(parse_action("wait 20"))
    took = time.monotonic() - t
    killer.join()
    _ends_on_infra(outcome, "browser")
    assert took < 15, f"the step waited {took:.1f} s on a dead browser"
    _recovers(env)


@pytest.mark.audio
def test_killed_speaker_capture_truncates_and_reset_recovers(make_env, probe_task):
    env = make_env(probe_task, sandbox_config=SandboxConfig(capture_speaker=True))
    env.reset(seed=0)
    old = env.sandbox.capture.pid
    _kill(old)
    assert wait_until(lambda: not env.sandbox.capture.alive(), 10)
    _ends_on_infra(env.step(parse_action("wait 0.1")), "speaker capture")
    _recovers(env)
    assert env.sandbox.capture.alive() and env.sandbox.capture.pid != old


def test_killed_xvfb_truncates_and_reset_recovers(make_env, probe_task):
    env = make_env(probe_task)
    env.reset(seed=0)
    old = env.sandbox.display.pid
    _kill(old)
    assert wait_until(lambda: not env.sandbox.display.alive(), 10)
    _ends_on_infra(env.step(parse_action("click 640 200")), "display (Xvfb)")
    _recovers(env)
    assert env.sandbox.display.alive() and env.sandbox.display.pid != old


def _probe_copy(tmp_path: Path, probe_task, script: str) -> Path:
    """The input probe with ``script`` run after its page is set up."""
    folder = tmp_path / "F" / probe_task.root.name
    shutil.copytree(probe_task.root, folder)
    page = folder / "index.html"
    page.write_text(page.read_text().replace("</body>", f"<script>{script}</script>\n</body>"))
    return folder


@pytest.mark.parametrize(
    ("verdict", "message"),
    [
        ('throw new Error("the verdict broke")', "the verdict broke"),
        ("return 42", "returned 42"),
    ],
)
def test_a_page_whose_verdict_fails_truncates_and_reset_recovers(
    make_env, tmp_path, probe_task, verdict, message
):
    # The verdict fails once F9 has been pressed: a fresh page (the next reset) works again.
    script = (
        "const verdict = window.getTaskResult;"
        "window.getTaskResult = () => {"
        f'  if (window.probe.keys.includes("F9")) {{ {verdict}; }}'
        "  return verdict();"
        "};"
    )
    env = make_env(load_task(_probe_copy(tmp_path, probe_task, script)))
    env.reset(seed=0)
    outcome = env.step(parse_action("key F9"))
    _ends_on_infra(outcome, "getTaskResult()")
    assert message in outcome[4]["infra_error"]
    _recovers(env, restarts=0)  # the sandbox was sound: only the page failed


# Run in a network namespace of its own (loopback up), where the kernel has one port to give
# out and it is taken: the task server, which asks for any free port, finds none. The report
# goes back on stdout.
PORT_TAKEN = """
import json, socket, sys, time
from pathlib import Path
from dynacu_gym import parse_action
from dynacu_gym.env import DynaCUEnv
from dynacu_gym.runtime.process import descendants
from dynacu_gym.tasks import load_task

ports = Path("/proc/sys/net/ipv4/ip_local_port_range")
ports.write_text("40000 40000")
busy = socket.socket()
busy.bind(("127.0.0.1", 40000))
busy.listen()
env = DynaCUEnv(load_task(sys.argv[1]), max_restarts=1)
report = {}
try:
    env.reset(seed=0)
except Exception as e:
    report["error"] = f"{type(e).__name__}: {e}"
deadline = time.monotonic() + 10
while descendants() and time.monotonic() < deadline:
    time.sleep(0.1)
report["left"] = sorted(descendants())
busy.close()
ports.write_text("40000 40999")  # ports free again, for the server and the browser's sockets
env.reset(seed=0)
_, _, _, truncated, info = env.step(parse_action("click 640 200"))
report["after"] = {"truncated": truncated, "clicks": env.evaluate_in_page("() => probe.clicks")}
env.close()
print("REPORT " + json.dumps(report))
"""


def test_task_server_port_taken_is_a_clear_error_and_reset_recovers(tmp_path, probe_task):
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs unshare and ip (util-linux, iproute2)")
    if subprocess.run(["unshare", "--net", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot make a network namespace here (needs root)")
    script = tmp_path / "port_taken.py"
    script.write_text(PORT_TAKEN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    run = subprocess.run(
        [
            "unshare",
            "--net",
            "sh",
            "-c",
            'ip link set lo up && exec "$0" "$@"',
            sys.executable,
            str(script),
            str(probe_task.root),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    lines = [x for x in run.stdout.splitlines() if x.startswith("REPORT ")]
    assert run.returncode == 0 and lines, run.stderr[-3000:]
    report = json.loads(lines[-1].removeprefix("REPORT "))
    assert report["error"].startswith("InfraError"), report["error"]
    assert "task server" in report["error"] and "Address already in use" in report["error"]
    assert report["left"] == []  # the parts that had started were stopped
    assert report["after"] == {"truncated": False, "clicks": [[640, 200]]}


# ---- a full disk under a trace -------------------------------------------------------------


class _Agent:
    """Clicks the field, then says done; fills the disk under ``filler`` before saying it."""

    def __init__(self, filler: Path | None = None) -> None:
        self.filler = filler
        self.acted = 0

    def reset(self, instruction: str) -> None:
        self.acted = 0

    def act(self, obs):
        self.acted += 1
        if self.acted == 1:
            return parse_action("click 640 200"), {}
        if self.filler is not None:
            _fill(self.filler)
        return {"type": "done"}, {}


def _fill(path: Path) -> None:
    """Write ``path`` until the file system is full."""
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 65536)
        except OSError as e:
            assert e.errno == errno.ENOSPC


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB tmpfs of its own, unmounted after the test."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], capture_output=True
    )
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mount.stderr.decode().strip()}")
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


def _open_under(path: Path) -> list[str]:
    """Files under ``path`` this process holds open."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(path)):
            found.append(target)
    return found


def test_a_full_disk_under_a_trace_is_a_clear_error_and_the_env_goes_on(
    make_env, probe_task, small_disk
):
    env = make_env(probe_task)
    recorder = TraceRecorder(env, small_disk / "trace")
    filler = small_disk / "filler"
    with pytest.raises(InfraError, match="could not write the trace") as failure:
        run_episode(env, _Agent(filler), seed=0, on_step=recorder.on_step)
    assert "No space left on device" in str(failure.value)
    assert str(small_disk / "trace") in str(failure.value)
    assert _open_under(small_disk) == []  # the trace's files are closed, not left dangling
    assert len((small_disk / "trace" / TRACE_FILE).read_text().splitlines()) == 2  # reset, click
    # The env is untouched: with room again, the next episode runs and is traced whole.
    filler.unlink()
    recorder = TraceRecorder(env, small_disk / "trace")
    outcome = run_episode(env, _Agent(), seed=1, on_step=recorder.on_step)
    recorder.finish(outcome.to_dict())
    assert outcome.infra_error == "" and outcome.steps == 2
    assert len((small_disk / "trace" / TRACE_FILE).read_text().splitlines()) == 3
    assert _open_under(small_disk) == []
