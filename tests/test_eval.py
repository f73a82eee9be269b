"""The evaluation runner and `dynacu run`: real episodes in worker processes, resumable, with
crashed workers retried once and then recorded as infrastructure failures."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import wave
from pathlib import Path

import numpy as np
import pytest
from tasks_sample import SAMPLE

from dynacu_gym.cli import main
from dynacu_gym.evaluation import (
    AgentSpec,
    episode_key,
    evaluate,
    make_agent,
    plan_episodes,
    read_lines,
    run_one,
)
from dynacu_gym.runtime.process import descendant_starts, proc_stat

# ---- pure logic ------------------------------------------------------------------------------


def test_plan_gives_every_mode_of_a_repeat_the_same_seed():
    plan = plan_episodes(["A1", "B1"], ["standard", "aoi_full"], repeats=2)
    assert len(plan) == 8
    seeds = {(s.task, s.repeat): set() for s in plan}
    for spec in plan:
        seeds[(spec.task, spec.repeat)].add(spec.seed)
    assert all(len(v) == 1 for v in seeds.values())  # same page in every mode
    assert len({next(iter(v)) for v in seeds.values()}) == 4  # different across repeats
    assert plan_episodes(["A1"], ["standard"], 1, base_seed=1)[0].seed != plan[0].seed
    with pytest.raises(ValueError, match="repeats"):
        plan_episodes(["A1"], ["standard"], 0)


def test_read_lines_ignores_a_line_cut_short_at_the_end(tmp_path):
    path = tmp_path / "episodes.jsonl"
    line = {"task": "A1", "mode": "standard", "agent": "null", "model": None, "repeat": 0}
    path.write_text(json.dumps(line) + "\n" + '{"task": "A1", "mo')
    assert read_lines(path) == [line]
    assert episode_key(line) == ("A1", "standard", "null", None, 0)
    path.write_text('{"broken\n' + json.dumps(line) + "\n")
    with pytest.raises(ValueError, match="episodes.jsonl:1"):
        read_lines(path)


def test_env_options_reach_the_env(monkeypatch):
    import gymnasium

    made = {}

    def make(env_id, **kwargs):
        made.update(kwargs, id=env_id)
        raise RuntimeError("made")

    monkeypatch.setattr(gymnasium, "make", make)
    spec = plan_episodes(["B4"], ["aoi_visual"], 1)[0]
    with pytest.raises(RuntimeError, match="made"):
        run_one(spec, AgentSpec("null"), env_options={"max_keyframes": 16})
    assert made == {"id": "DynaCU-B4-v0", "mode": "aoi_visual", "max_keyframes": 16}


def test_unknown_agents_and_modes_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown agent 'smart'"):
        make_agent(AgentSpec("smart"), None)
    with pytest.raises(ValueError, match="cannot load agent"):
        make_agent(AgentSpec("no_such_module:Agent"), None)
    with pytest.raises(ValueError, match="expected a mode"):
        evaluate(AgentSpec("null"), ["A1"], ["aoi_everything"], tmp_path)
    with pytest.raises(ValueError, match="no task 'Z9'"):
        evaluate(AgentSpec("null"), ["Z9"], ["standard"], tmp_path)
    assert main(["eval", "--agent", "llm", "--tasks", "A1", "--out", str(tmp_path)]) == 2


def test_the_random_agent_draws_each_episodes_own_actions():
    def actions(options, seed, n=20):
        agent = make_agent(AgentSpec("random", options), None, seed)
        return [agent.act({})[0] for _ in range(n)]

    plan = plan_episodes(["S13", "S19"], ["aoi_interactive"], 2)
    drawn = [actions({"seed": 0}, spec.seed) for spec in plan]
    # Another task or another repeat: other actions. The same episode again: the same ones.
    assert all(a != b for i, a in enumerate(drawn) for b in drawn[i + 1 :])
    assert actions({"seed": 0}, plan[0].seed) == drawn[0]
    assert actions({}, plan[0].seed) == drawn[0]  # the run's seed defaults to 0
    assert actions({"seed": 1}, plan[0].seed) != drawn[0]


def test_a_run_does_not_resume_into_episodes_of_another_clock_or_variety(tmp_path):
    line = {"task": "F1", "mode": "standard", "agent": "oracle", "model": None, "repeat": 0}
    (tmp_path / "episodes.jsonl").write_text(json.dumps(line) + "\n")  # the benchmark's setting
    for options, asked in [
        ({"clock": "paused"}, "clock=paused, variety=False"),
        ({"variety": True}, "clock=realtime, variety=True"),
    ]:
        with pytest.raises(
            ValueError,
            match=f"run with clock=realtime, variety=False; this run "
            f"asks for {asked}: give it another output folder",
        ):
            evaluate(AgentSpec("oracle"), ["F1"], ["standard"], tmp_path, env_options=options)
    assert main(["eval", "--tasks", "F1", "--modes", "standard", "--clock", "paused",
                 "--out", str(tmp_path)]) == 2  # fmt: skip


# ---- real episodes ---------------------------------------------------------------------------


@pytest.mark.browser
def test_eval_on_paused_time_with_variety_records_both_and_the_variant(tmp_path, capsys):
    argv = ["eval", "--agent", "oracle", "--tasks", "F1", "--modes", "standard", "--repeats", "3",
            "--clock", "paused", "--variety", "--out", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    assert "Not the benchmark's setting: 3 episodes ran with clock=paused, variety=True" in (
        capsys.readouterr().out
    )
    lines = read_lines(tmp_path / "episodes.jsonl")
    assert [line["result"] for line in lines] == ["success"] * 3
    assert {(line["clock"], line["variety"]) for line in lines} == {("paused", True)}
    # The three seeds drew their variants from F1's three (this base seed draws two of them).
    assert {line["variant"] for line in lines} <= {0, 1, 2}
    assert len({line["variant"] for line in lines}) > 1


@pytest.mark.browser
@pytest.mark.audio
def test_oracle_succeeds_null_fails_and_a_run_resumes(tmp_path):
    oracle = evaluate(AgentSpec("oracle"), ["F1", "H1"], ["aoi_interactive"], tmp_path, workers=2)
    assert [(line["task"], line["result"]) for line in oracle] == [
        ("F1", "success"),
        ("H1", "success"),
    ]
    line = oracle[1]
    assert line["success"] and line["reward"] == 1.0 and line["attempts"] == 1
    assert line["category"] == "H" and line["tier"] == "easy" and line["model"] is None
    assert line["steps"] > 0 and line["wall_s"] > 10 and line["agent_s"] >= 0
    assert line["perception_s"]["tts"] > 0 and line["perception_s"]["capture"] > 0
    null = evaluate(AgentSpec("null"), ["H1"], ["aoi_interactive"], tmp_path)
    assert [(line["task"], line["result"], line["success"]) for line in null] == [
        ("H1", "timeout", False)
    ]
    # Resume: a second repeat of F1 runs; nothing recorded before runs again.
    before = (tmp_path / "episodes.jsonl").read_text().splitlines()
    again = evaluate(AgentSpec("oracle"), ["F1"], ["aoi_interactive"], tmp_path, repeats=2)
    after = (tmp_path / "episodes.jsonl").read_text().splitlines()
    assert after[: len(before)] == before and len(after) == len(before) + 1
    assert sorted((line["task"], line["repeat"]) for line in again) == [("F1", 0), ("F1", 1)]
    # The report reads the same lines (oracle and null are separate agents).
    assert main(["report", str(tmp_path)]) == 0
    assert (tmp_path / "report.md").exists() and (tmp_path / "summary.csv").exists()


def _orphaned_sandbox_parts() -> set[int]:
    """Xvfb and PulseAudio processes whose parent died (adopted by init)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)
            name = fields[0].split("(", 1)[1]
            ppid = int(fields[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == 1 and name in ("Xvfb", "pulseaudio"):
            found.add(int(stat.parent.name))
    return found


@pytest.mark.browser
def test_crashed_worker_is_retried_once_then_recorded_as_infra(tmp_path):
    orphans_before = _orphaned_sandbox_parts()
    marker = tmp_path / "crashed"
    once = AgentSpec("crash_agents:CrashOnce", {"marker": str(marker)})
    (line,) = evaluate(once, ["F1"], ["standard"], tmp_path / "once")
    assert marker.exists()  # it did crash the first time
    assert line["attempts"] == 2 and line["infra_error"] == "" and line["steps"] == 1
    (line,) = evaluate(AgentSpec("crash_agents:CrashAlways"), ["F1"], ["standard"], tmp_path)
    assert line["result"] == "infra_error" and line["attempts"] == 2
    assert "exit code 4" in line["infra_error"] and not line["success"]
    # Resuming does not run a recorded infra failure again unless asked to.
    assert evaluate(AgentSpec("crash_agents:CrashAlways"), ["F1"], ["standard"], tmp_path)
    assert len(read_lines(tmp_path / "episodes.jsonl")) == 1
    # The crashed workers' sandboxes were stopped, not left running.
    assert _orphaned_sandbox_parts() - orphans_before == set()


WORKER = """
import sys, time
from pathlib import Path
from dynacu_gym.runtime.process import die_with_parent, exit_on_sigterm
exit_on_sigterm()
die_with_parent(int(sys.argv[1]))
print("ready", flush=True)
try:
    time.sleep(60)
finally:
    Path(sys.argv[2]).write_text("closed")
"""
RUNNER = """
import os, subprocess, sys, time
subprocess.Popen([sys.executable, "-c", sys.argv[1], str(os.getpid()), sys.argv[2]])
time.sleep(60)
"""


def test_a_worker_whose_runner_is_killed_stops_through_its_cleanup(tmp_path):
    # The kernel sends the worker SIGTERM when its runner dies, and SIGTERM runs `finally`.
    closed = tmp_path / "closed"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    runner = subprocess.Popen(
        [sys.executable, "-c", RUNNER, WORKER, str(closed)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert runner.stdout is not None
    try:
        assert runner.stdout.readline().strip() == "ready"
        worker = descendant_starts(runner.pid)
        assert len(worker) == 1 and not closed.exists()
        runner.kill()
        runner.wait()
    finally:
        runner.kill()
        runner.stdout.close()
    deadline = time.monotonic() + 10
    while not closed.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert closed.read_text() == "closed"
    deadline = time.monotonic() + 10
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(worker) == []


STOPPING = """
import sys, time
from pathlib import Path
from dynacu_gym.runtime.process import exit_on_sigterm
exit_on_sigterm()
try:
    # Inside the try: a SIGTERM handled between this print and the try, were the print above
    # it, would raise where no finally runs (seen in CI on a loaded machine).
    print("ready", flush=True)
    time.sleep(60)
finally:
    print("stopping", flush=True)
    time.sleep(1.0)  # a sandbox's stop takes about this long
    Path(sys.argv[1]).write_text("closed")
"""


def test_a_second_sigterm_does_not_cut_the_cleanup_short(tmp_path):
    # A worker of a killed runner was seen to get its parent-death signal twice, 13 ms apart;
    # the second, inside the sandbox's stop, left its display and audio daemon running.
    closed = tmp_path / "closed"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", STOPPING, str(closed)], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGTERM)
        assert proc.stdout.readline().strip() == "stopping"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        proc.stdout.close()
    assert closed.read_text() == "closed"


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _stopped(pid: int) -> bool:
    """Gone, or a zombie (dead; a container's init may never reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2] == "Z"


def _alive(tree: dict[int, int]) -> list[str]:
    """The processes of ``tree`` (id -> start time) still running, by name."""
    return [
        f"{_name(pid)} ({pid})"
        for pid, start in tree.items()
        if (info := proc_stat(pid)) is not None and info[1] == start and not _stopped(pid)
    ]


@pytest.mark.browser
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_a_stopped_runner_leaves_no_worker_or_sandbox_behind(tmp_path, sig):
    # `kill` (SIGTERM) runs the runner's cleanup; SIGKILL runs none, and the kernel stops its
    # workers, which close their envs.
    orphans_before = _orphaned_sandbox_parts()
    argv = ["eval", "--agent", "null", "--tasks", "F1", "--modes", "standard"]
    argv += ["--repeats", "2", "--workers", "2", "--out", str(tmp_path)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    runner = subprocess.Popen(
        [sys.executable, "-m", "dynacu_gym.cli", *argv],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    tree: dict[int, int] = {}
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline:
            now = descendant_starts(runner.pid)
            tree.update(now)
            names = [_name(pid) for pid in now]
            if names.count("Xvfb") == 2 and sum(n.startswith("chrom") for n in names) >= 2:
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"two episodes never started: {sorted(map(_name, tree))}")
        time.sleep(1.0)  # the episodes are under way
        tree.update(descendant_starts(runner.pid))
        runner.send_signal(sig)
        runner.wait(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    deadline = time.monotonic() + 30
    while _alive(tree) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _alive(tree) == []
    assert _orphaned_sandbox_parts() - orphans_before == set()
    if sig == signal.SIGTERM:
        assert runner.returncode == 128 + signal.SIGTERM  # it exited through its cleanup


@pytest.mark.browser
@pytest.mark.audio
def test_run_records_a_whole_trace(tmp_path):
    out = tmp_path / "trace"
    code = main(
        ["run", "H1", "--agent", "oracle", "--mode", "aoi_interactive", "--record", str(out)]
    )
    assert code == 0
    steps = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines()]
    result = json.loads((out / "episode.json").read_text())
    assert result["result"] == "success" and len(steps) == result["steps"] + 1
    assert steps[0]["action"] is None and steps[-1]["task_result"] == "success"
    assert any(s["action"] and s["action"]["type"] == "speak" for s in steps)
    assert any("speech" in s for s in steps)
    assert len(list((out / "records").glob("*.txt"))) == len(steps)
    assert len(list((out / "screens").glob("*.png"))) == len(steps)
    assert list((out / "keyframes").glob("*.png"))  # the interview's picture changes
    with wave.open(str(out / "speaker.wav")) as wav:
        rate, frames = wav.getframerate(), wav.readframes(wav.getnframes())
    audio = np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768
    assert len(audio) / rate > 0.9 * steps[-1]["elapsed"]  # the whole episode
    # The interviewer speaks from 1.0 s: loud there, silent in the first half second.
    assert np.sqrt(np.mean(audio[: rate // 2] ** 2)) < 0.003
    assert np.sqrt(np.mean(audio[int(1.5 * rate) : int(3.5 * rate)] ** 2)) > 0.02


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.audio
def test_oracle_succeeds_and_null_fails_through_eval(tmp_path):
    """Through the runner, in the richest mode, on every category and tier. Each task's own
    solution and waiting are checked one by one in test_solutions.py."""
    tasks = sorted(SAMPLE)
    oracle = evaluate(AgentSpec("oracle"), tasks, ["aoi_interactive"], tmp_path, workers=2)
    assert {line["task"]: line["result"] for line in oracle} == dict.fromkeys(tasks, "success")
    null = evaluate(AgentSpec("null"), tasks, ["aoi_interactive"], tmp_path, workers=2)
    assert not any(line["success"] or line["infra_error"] for line in null)
