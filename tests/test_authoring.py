"""Tasks of one's own: dynacu new-task starts one from an app, dynacu check-task judges it.

A task started from an app passes every check as it is; each way of breaking one (a typo in a
key, a script edited without rendering its speech, a spoken answer the page would misjudge, a
solution that no longer solves it, evidence that is not on the screen) fails the check that
names it, with a non-zero exit.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dynacu_gym.harness.authoring import new_task, starting_task
from dynacu_gym.harness.spoken_forms import Heard, hear_forms, sentences
from dynacu_gym.harness.task_check import CHECKS, said_verdict
from dynacu_gym.tasks import TASK_PATH_VAR, TaskFormatError, find_task, load_task, task_folders

DYNACU = Path(sys.executable).parent / "dynacu"


@pytest.fixture
def suite(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv(TASK_PATH_VAR, raising=False)
    return tmp_path / "mylab"


def dynacu(*args: str, suite: Path | None = None, timeout: float = 900) -> tuple[int, str]:
    """Run ``dynacu`` with ``suite`` on the task path; its exit code and its output."""
    env = {**os.environ, TASK_PATH_VAR: str(suite)} if suite else dict(os.environ)
    done = subprocess.run(
        [DYNACU, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env
    )
    return done.returncode, done.stdout + done.stderr


def verdicts(output: str) -> dict[str, str]:
    """check -> ``ok``, ``FAILED`` or ``not run``, from check-task's table."""
    found = {}
    for line in output.splitlines():
        name, _, rest = line.partition(" ")
        if name in CHECKS:
            found[name] = "not run" if rest.strip().startswith("not run") else rest.split()[0]
    return found


def edit(folder: Path, old: str, new: str) -> None:
    toml = folder / "task.toml"
    text = toml.read_text()
    assert old in text, old
    toml.write_text(text.replace(old, new, 1))


def test_new_task_starts_from_the_apps_first_task(suite):
    folder = suite / "Z" / "1-my-podcast"
    assert new_task(folder, app="podcast") == "mylab/Z1"
    task = load_task(folder, namespace="mylab")
    assert task.id == "mylab/Z1" and task.category == "Z" and task.app == "podcast"
    assert (folder / "audio" / "manifest.json").is_file()  # its speech comes along, current
    text = (folder / "task.toml").read_text()
    assert text.startswith("# Started from the benchmark's A1 (the podcast app)")
    assert "dynacu render-audio mylab/Z1" in text and f"dynacu check-task {folder}" in text
    assert starting_task("site", None) == "S1" and starting_task(None, "B3") == "B3"
    assert new_task(suite / "Q" / "12-from-b3", from_task="B3") == "mylab/Q12"


def test_new_task_refuses_what_it_cannot_write(suite):
    with pytest.raises(ValueError, match="no app 'podcst' \\(did you mean 'podcast'\\?\\)"):
        new_task(suite / "Z" / "1-x", app="podcst")
    with pytest.raises(ValueError, match="expected --app NAME or --from TASK; apps: carousel"):
        new_task(suite / "Z" / "1-x")
    with pytest.raises(TaskFormatError, match="expected a task folder SUITE/<Cat>/<N>-<slug>"):
        new_task(suite / "z" / "one", app="site")
    new_task(suite / "Z" / "1-x", app="site")
    with pytest.raises(TaskFormatError, match="already exists"):
        new_task(suite / "Z" / "1-x", app="site")
    inside = task_folders()["A1"].parent / "99-mine"
    with pytest.raises(TaskFormatError, match="in the benchmark's own tasks"):
        new_task(inside, app="site")
    assert not inside.exists()
    code, out = dynacu("new-task", suite / "Z" / "2-y", "--app", "sight")
    assert code == 2 and "did you mean 'site'" in out


def test_check_task_names_a_broken_format_and_stale_audio(suite):
    folder = suite / "Z" / "1-bread"
    new_task(folder, app="podcast")
    code, out = dynacu("check-task", folder, "--only", "format,audio,forms")
    assert code == 0 and verdicts(out) == {"format": "ok", "audio": "ok", "forms": "ok"}, out
    edit(folder, "\nshow = ", "\nshoow = ")
    code, out = dynacu("check-task", folder, "--only", "format,audio,solvable")
    assert code == 1 and verdicts(out) == {
        "format": "FAILED",
        "audio": "not run",
        "solvable": "not run",
    }
    assert "unknown key 'config.shoow'; did you mean 'show'?" in out
    edit(folder, "\nshoow = ", "\nshow = ")
    edit(folder, "It's been a wild three years", "It has been a wild four years")
    code, out = dynacu("check-task", "mylab/Z1", "--only", "audio,solvable", suite=suite)
    assert code == 1 and verdicts(out) == {"audio": "FAILED", "solvable": "not run"}, out
    assert "dynacu render-audio mylab/Z1" in out
    code, out = dynacu("check-task", folder, "--only", "audiio")
    assert code == 2 and "unknown check 'audiio'" in out


def test_each_form_is_said_in_the_solutions_own_sentence():
    task = find_task("G10")
    said = {(field, form): (want, text) for field, form, want, text in sentences(task)}
    driver = task.answers["driver"]
    assert said[("driver", driver.accept[0])] == ("accepted", f"The driver is {driver.accept[0]}.")
    assert said[("driver", driver.reject[0])] == ("rejected", f"The driver is {driver.reject[0]}.")
    assert len(said) == sum(len(a.accept) + len(a.reject) for a in task.answers.values())
    clicked = {field for field, *_ in sentences(find_task("I8"))}
    assert clicked == {"fare"}  # meals is typed and meals_row clicked: the page hears neither
    unnamed = {(field, text) for field, form, _, text in sentences(find_task("H6")) if form == text}
    assert {"users_pantry", "users_compass"} <= {field for field, _ in unnamed}
    # A form that carries the unit its sentence adds says it once.
    price = dict(((f, form), text) for f, form, _, text in sentences(find_task("H5")))
    assert price[("team_price", "twenty-seven dollars")] == (
        "The Team plan is twenty-seven dollars per user per month."
    )
    assert price[("team_price", "27")] == "The Team plan is 27 dollars per user per month."


def capital_with_a_hedge(suite: Path) -> Path:
    """An interview task whose accepted answer names the near miss too: said, it is rejected."""
    folder = suite / "Y" / "1-capital"
    new_task(folder, app="interview")
    edit(folder, 'accept = ["${capital}",', 'accept = ["${capital}, not ${decoy1}",')
    return folder


@pytest.mark.browser
@pytest.mark.audio
def test_a_form_said_into_the_page_is_heard_and_judged(suite):
    folder = capital_with_a_hedge(suite)
    task = load_task(folder, namespace="mylab")
    heard = {h.form: h for h in hear_forms([task])}
    assert set(heard) == {
        "Canberra, not Sydney",
        "the city of Canberra",
        "Sydney",
        "Melbourne",
        "Perth",
    }
    hedge = heard["Canberra, not Sydney"]
    assert hedge.said == "The capital of Australia is Canberra, not Sydney."
    assert "Canberra" in hedge.heard and "Sydney" in hedge.heard, hedge
    assert hedge.verdict == "rejected" and not hedge.ok
    assert heard["the city of Canberra"].ok and heard["Sydney"].ok, heard


@pytest.mark.browser
@pytest.mark.slow
def test_check_task_finds_a_spoken_answer_the_page_would_misjudge(suite):
    folder = capital_with_a_hedge(suite)
    code, out = dynacu("check-task", folder, "--only", "forms")
    assert code == 1 and verdicts(out) == {"forms": "FAILED"}, out
    assert "capital 'Canberra, not Sydney' (accepted form): said 'The capital of" in out
    assert "and finds it rejected" in out


@pytest.mark.browser
@pytest.mark.slow
def test_check_task_passes_a_new_static_task(suite, tmp_path):
    """The site app's first task as it is, through every check but the random agent's
    (minutes of clicking on a static page), in two modes."""
    folder = suite / "S" / "1-hours"
    new_task(folder, app="site")
    checks = ",".join(c for c in CHECKS if c != "random")
    args = ["--only", checks, "--seeds", "1", "--modes", "standard,aoi_visual"]
    code, out = dynacu("check-task", folder, *args, "--out", tmp_path / "good")
    assert code == 0, out
    assert verdicts(out) == {c: "ok" for c in CHECKS if c != "random"}, out
    assert (tmp_path / "good" / "audit.md").is_file()


@pytest.mark.browser
def test_check_task_fails_a_solution_that_misses_and_evidence_off_the_screen(suite, tmp_path):
    """A static task whose solution types a near miss, and whose evidence names what the page
    never shows."""
    folder = suite / "S" / "1-hours"
    new_task(folder, app="site")
    edit(folder, "action = 'type \"{answer.closes}\"'", "action = 'type \"8:00 pm\"'")
    edit(folder, 'keys = ["${day}", "${close}"]', 'keys = ["${day}", "Midnight Feast"]')
    code, out = dynacu(
        "check-task",
        folder,
        "--only",
        "solvable,evidence",
        "--seeds",
        "1",
        "--modes",
        "standard",
        "--out",
        tmp_path / "bad",
    )
    assert code == 1 and verdicts(out) == {"solvable": "FAILED", "evidence": "FAILED"}, out
    assert "the scripted solution ended 'wrong_answer'" in out
    assert "Midnight Feast" in out


def test_a_near_miss_heard_as_nothing_is_listed_and_a_misheard_answer_fails():
    def said(form, want, heard, verdict):
        return Heard(1, "city", form, want, f"It is {form}.", heard, verdict)

    right = said("Perth", "accepted", "It is Perth.", "accepted")
    unheard = said("Christchurch", "rejected", "It is Christ Church.", None)
    faults, summary = said_verdict([right, unheard], variants=3)
    assert faults == []
    assert summary.startswith("; 1 of 2 said in 3 variant(s) heard as declared, and 1 near miss")
    assert "variant 1, city 'Christchurch' (rejected form)" in summary
    misheard = said("Perth", "accepted", "It is per.", None)
    taken = said("Sydney", "rejected", "It is Sydney.", "accepted")
    faults, _ = said_verdict([misheard, taken], variants=1)
    assert faults == [
        "city 'Perth' (accepted form): said 'It is Perth.', the listening page heard "
        "'It is per.' and finds no answer in it",
        "city 'Sydney' (rejected form): said 'It is Sydney.', the listening page heard "
        "'It is Sydney.' and finds it accepted",
    ]
