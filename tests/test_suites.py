"""A user's own task suite: found through $DYNACU_TASK_PATH or register_suite, ids NS/Z1."""

import os
import shutil

import pytest

from dynacu_gym.tasks import TaskFormatError
from dynacu_gym.tasks.catalogue import (
    TASK_PATH_VAR,
    all_task_folders,
    catalogue_order,
    find_task,
    gym_id,
    register_suite,
    suites,
    task_folders,
)


@pytest.fixture
def suite(tmp_path, monkeypatch):
    """A suite of one task: the benchmark's A1, copied as Z1 (a category of the user's own)."""
    monkeypatch.delenv(TASK_PATH_VAR, raising=False)
    folder = tmp_path / "mylab" / "Z" / "1-sourdough-copy"
    shutil.copytree(task_folders()["A1"], folder)
    toml = folder / "task.toml"
    text = (
        toml.read_text()
        .replace('id = "A1"', 'id = "Z1"')
        .replace('category = "A"', 'category = "Z"')
    )
    toml.write_text(text)
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
    with pytest.raises(ValueError, match="no suite 'mylab'.*suites: lab2.*register_suite"):
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
