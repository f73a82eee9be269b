"""The Ray backend of the evaluation runner, on a Ray cluster started here on 127.0.0.1.

The cluster's processes are started by ``ray start`` as a user would, apart from this process;
the runner joins it by address. Episodes are real (Chromium, Xvfb, PulseAudio in each actor).
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_eval import _orphaned_sandbox_parts, _stopped

from dynacu_gym.cli import main
from dynacu_gym.evaluation import AgentSpec, evaluate, read_lines
from dynacu_gym.runtime.reaper import start_reaper

RAY = str(Path(sys.executable).parent / "ray")
TESTS = Path(__file__).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory):
    """The address of a two-CPU Ray cluster on 127.0.0.1; its workers can import the tests'
    agents (a user's own agent must be importable on every node the same way)."""
    port = _free_port()
    # Token authentication, with a token of its own: the cluster, its workers and this driver
    # agree on it whatever a ~/.ray/auth_token on the machine says.
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    path = os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, **auth, "PYTHONPATH": path}
    temp = tmp_path_factory.mktemp("ray")
    subprocess.run(
        [RAY, "start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}",
         "--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats",
         f"--temp-dir={temp}"],
        env=env, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    saved = {key: os.environ.get(key) for key in auth}
    os.environ.update(auth)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        subprocess.run([RAY, "stop", "--force"], env=env, capture_output=True, timeout=120)


@pytest.mark.browser
def test_ray_backend_writes_the_local_lines_resumes_and_brings_traces_home(tmp_path, ray_cluster):
    out = tmp_path / "ray"
    lines = evaluate(
        AgentSpec("oracle"), ["F1", "F2"], ["standard"], out, workers=2, traces=True,
        backend="ray", ray_address=ray_cluster,
    )  # fmt: skip
    assert [(line["task"], line["result"], line["attempts"]) for line in lines] == [
        ("F1", "success", 1),
        ("F2", "success", 1),
    ]
    # The same line as the local backend writes, key for key.
    (local,) = evaluate(AgentSpec("oracle"), ["F1"], ["standard"], tmp_path / "local")
    assert list(lines[0]) == list(local)
    assert {k: lines[0][k] for k in ("task", "seed", "result", "variant", "clock")} == {
        k: local[k] for k in ("task", "seed", "result", "variant", "clock")
    }
    # Each actor wrote its trace on its node; the runner unpacked them here.
    for task in ("F1", "F2"):
        trace = out / "traces" / f"{task}-standard-oracle-0"
        assert (trace / "trace.jsonl").is_file() and list((trace / "screens").glob("*.png"))
    # Resume: nothing recorded runs again; a second repeat runs.
    before = (out / "episodes.jsonl").read_text().splitlines()
    again = evaluate(
        AgentSpec("oracle"), ["F1", "F2"], ["standard"], out, repeats=2, workers=2,
        backend="ray", ray_address=ray_cluster,
    )  # fmt: skip
    after = (out / "episodes.jsonl").read_text().splitlines()
    assert after[: len(before)] == before and len(after) == len(before) + 2
    assert sorted((line["task"], line["repeat"]) for line in again) == [
        ("F1", 0), ("F1", 1), ("F2", 0), ("F2", 1),
    ]  # fmt: skip


@pytest.mark.browser
def test_a_dead_actor_is_replaced_its_episode_retried_and_its_sandbox_stopped(
    tmp_path, ray_cluster
):
    orphans_before = _orphaned_sandbox_parts()
    marker = tmp_path / "crashed"
    once = AgentSpec("crash_agents:CrashOnce", {"marker": str(marker)})
    (line,) = evaluate(
        once, ["F1"], ["standard"], tmp_path / "once", backend="ray", ray_address=ray_cluster
    )
    assert marker.exists()  # the first actor died in the episode
    assert line["attempts"] == 2 and line["infra_error"] == "" and line["steps"] == 1
    code = main(
        ["eval", "--agent", "crash_agents:CrashAlways", "--tasks", "F1", "--modes", "standard",
         "--out", str(tmp_path / "always"), "--backend", "ray", "--ray-address", ray_cluster]
    )  # fmt: skip
    assert code == 0
    (line,) = read_lines(tmp_path / "always" / "episodes.jsonl")
    assert line["result"] == "infra_error" and line["attempts"] == 2 and not line["success"]
    assert line["infra_error"].startswith("the Ray actor died")
    # The dead actors' displays and audio daemons were stopped by their reapers.
    deadline = time.monotonic() + 10
    while _orphaned_sandbox_parts() - orphans_before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _orphaned_sandbox_parts() - orphans_before == set()


def test_the_reaper_stops_what_a_killed_process_leaves():
    # A process that starts a grandchild and is then killed without cleaning up.
    parent = subprocess.Popen(
        [sys.executable, "-c",
         "import subprocess, sys, time\n"
         "child = subprocess.Popen(['sleep', '300'])\n"
         "print(child.pid, flush=True)\n"
         "time.sleep(300)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert parent.stdout is not None
    grandchild = int(parent.stdout.readline())
    reaper = start_reaper(parent.pid)
    time.sleep(1.2)  # the reaper has seen the tree
    parent.kill()
    parent.wait()
    parent.stdout.close()
    assert reaper.wait(timeout=10) == 0
    assert _stopped(grandchild)


def test_bad_backend_settings_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown backend 'dask'; expected one of local, ray"):
        evaluate(AgentSpec("null"), ["F1"], ["standard"], tmp_path, backend="dask")
    with pytest.raises(ValueError, match="ray_address is for the ray backend"):
        evaluate(AgentSpec("null"), ["F1"], ["standard"], tmp_path, ray_address="127.0.0.1:1")
    assert not (tmp_path / "episodes.jsonl").exists()


def test_an_unreachable_cluster_is_a_clear_error(tmp_path):
    with pytest.raises(RuntimeError, match="cannot start or join the Ray cluster at 127.0.0.1"):
        evaluate(
            AgentSpec("null"), ["F1"], ["standard"], tmp_path, backend="ray",
            ray_address=f"127.0.0.1:{_free_port()}",
        )  # fmt: skip
