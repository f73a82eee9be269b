"""A user's own task suite: found through $DYNACU_TASK_PATH or register_tasks, ids NS/Z1.

The end-to-end test runs a suite's task through ``dynacu eval`` in worker processes (which
know the suite only from the environment), keeps its trace and lists it.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import dynacu_gym
from dynacu_gym.tasks import (
    TASK_PATH_VAR,
    TaskFormatError,
    all_task_folders,
    catalogue_order,
    file_stem,
    find_task,
    gym_id,
    register_suite,
    suites,
    task_folders,
)

DYNACU = Path(sys.executable).parent / "dynacu"


def copy_task(task_id: str, into: Path, new_id: str, slug: str) -> Path:
    """The benchmark's task ``task_id`` copied into a suite folder as ``new_id``."""
    folder = into / new_id[0] / f"{new_id[1:]}-{slug}"
    shutil.copytree(task_folders()[task_id], folder)
    toml = folder / "task.toml"
    text = (
        toml.read_text()
        .replace(f'id = "{task_id}"', f'id = "{new_id}"')
        .replace(f'category = "{task_id[0]}"', f'category = "{new_id[0]}"')
    )
    toml.write_text(text)
    return folder


@pytest.fixture
def suite(tmp_path, monkeypatch):
    """A suite of one task: the benchmark's A1, copied as Z1 (a category of the user's own)."""
    monkeypatch.delenv(TASK_PATH_VAR, raising=False)
    copy_task("A1", tmp_path / "mylab", "Z1", "sourdough-copy")
    return tmp_path / "mylab"


def test_a_registered_suite_loads_under_its_namespace(suite):
    namespace, ids = register_suite(suite)
    assert (namespace, ids) == ("mylab", ["mylab/Z1"])
    task = find_task("mylab/Z1")
    assert task.id == "mylab/Z1" and task.category == "Z"
    assert all_task_folders()["mylab/Z1"] == suite / "Z" / "1-sourdough-copy"
    assert suites() == {"mylab": suite.resolve()}
    assert register_suite(suite) == (namespace, ids)  # again: no second entry
    assert len([e for e in os.environ[TASK_PATH_VAR].split(os.pathsep) if e]) == 1


def test_the_task_path_names_a_suite_under_another_namespace(suite, monkeypatch):
    monkeypatch.setenv(TASK_PATH_VAR, f"lab2={suite}")
    assert find_task("lab2/Z1").id == "lab2/Z1"
    with pytest.raises(ValueError, match="no suite 'mylab'.*suites: lab2.*register_tasks"):
        find_task("mylab/Z1")
    with pytest.raises(ValueError, match="no task 'lab2/Z2' under "):
        find_task("lab2/Z2")


def test_bad_suites_are_refused_with_what_was_expected(suite, tmp_path, monkeypatch):
    with pytest.raises(TaskFormatError, match="no such folder"):
        register_suite(tmp_path / "absent")
    with pytest.raises(TaskFormatError, match="is the benchmark's own tasks"):
        register_suite(task_folders()["A1"].parent.parent)
    assert TASK_PATH_VAR not in os.environ  # a refused suite is not added
    with pytest.raises(TaskFormatError, match="the benchmark's own"):
        register_suite(suite, namespace="dynacu")
    with pytest.raises(TaskFormatError, match="namespace 'my lab' is not valid"):
        register_suite(suite, namespace="my lab")
    monkeypatch.setenv(TASK_PATH_VAR, str(tmp_path / "absent"))
    with pytest.raises(TaskFormatError, match="no such folder"):
        suites()
    monkeypatch.delenv(TASK_PATH_VAR)
    (suite / "Z" / "stray").mkdir()
    (suite / "Z" / "stray" / "task.toml").write_text("")
    with pytest.raises(TaskFormatError, match="out of the suite's layout"):
        register_suite(suite)


def test_a_suite_task_that_breaks_the_format_names_its_file(suite):
    toml = suite / "Z" / "1-sourdough-copy" / "task.toml"
    toml.write_text(toml.read_text().replace('id = "Z1"', 'id = "Z2"'))
    with pytest.raises(TaskFormatError, match="does not match the folder"):
        register_suite(suite)


def test_ids_sort_and_name_their_gym_envs():
    assert sorted(["mylab/Z1", "B10", "A2", "B3"], key=catalogue_order) == [
        "A2",
        "B3",
        "B10",
        "mylab/Z1",
    ]
    assert gym_id("B3") == "DynaCU-B3-v0"
    assert gym_id("mylab/Z1") == "mylab/Z1-v0"


def test_benchmark_tasks_still_load_with_their_own_ids(monkeypatch):
    monkeypatch.delenv(TASK_PATH_VAR, raising=False)
    assert find_task("A1").id == "A1"
    with pytest.raises(ValueError, match="no task 'A999'"):
        find_task("A999")


def test_register_tasks_registers_the_suites_gym_envs(suite):
    assert dynacu_gym.register_tasks(suite, namespace="lab3") == ["lab3/Z1-v0"]
    spec = gym.spec("lab3/Z1-v0")
    assert spec.namespace == "lab3" and spec.kwargs == {"task": "lab3/Z1"}
    assert spec.max_episode_steps == 200 and find_task("lab3/Z1").gym_id == "lab3/Z1-v0"
    assert file_stem("lab3/Z1") == "lab3_Z1"


def _python(code: str, task_path: str) -> subprocess.CompletedProcess:
    env = {**os.environ, TASK_PATH_VAR: task_path}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )


def test_importing_registers_the_task_paths_suites_and_only_warns_of_a_bad_one(suite, tmp_path):
    shown = "import gymnasium as gym, dynacu_gym; print(gym.spec('mylab/Z1-v0').kwargs['task'])"
    done = _python(shown, str(suite))
    assert done.returncode == 0 and done.stdout.strip() == "mylab/Z1", done.stderr
    done = _python("import dynacu_gym; print(len(dynacu_gym.register_all()))", str(tmp_path / "x"))
    assert done.returncode == 0 and int(done.stdout) == len(task_folders()), done.stderr
    assert "no suite registered" in done.stderr and "no such folder" in done.stderr


@pytest.mark.browser
def test_a_suites_task_runs_through_eval_in_workers_and_keeps_its_trace(tmp_path, monkeypatch):
    """The oracle on a copy of S1 as lab/Q1: the workers find it from $DYNACU_TASK_PATH."""
    copy_task("S1", tmp_path / "lab", "Q1", "opening-hours")
    monkeypatch.setenv(TASK_PATH_VAR, str(tmp_path / "lab"))
    listed = subprocess.run(
        [DYNACU, "list", "--tasks", "lab/*"], capture_output=True, text=True, timeout=120
    )
    assert listed.returncode == 0 and "lab/Q1-v0" in listed.stdout, listed.stderr
    assert "category Q" in listed.stdout
    out = tmp_path / "run"
    done = subprocess.run(
        [DYNACU, "eval", "--agent", "oracle", "--tasks", "lab/Q1", "--modes", "standard"]
        + ["--workers", "1", "--traces", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    assert line["task"] == "lab/Q1" and line["result"] == "success"
    assert (out / "traces" / "lab_Q1-standard-oracle-0" / "screens").is_dir()
