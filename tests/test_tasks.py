"""The task format: every task loads, its audio is current, and bad files give clear errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dynacu_gym.audio_assets import AudioNotRendered, audio_clips, script_hash, spoken_lines
from dynacu_gym.registration import catalogue
from dynacu_gym.tasks import TaskFormatError, find_task, load_task, task_folders

TASK_IDS = sorted(task_folders())
PROBE = Path(__file__).parent / "fixtures" / "tasks" / "F" / "90-input-probe"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_loads_and_is_complete(task_id):
    task = find_task(task_id)
    assert task.solution, "every task has a scripted solution"
    assert task.evidence, "every task says what the agent must perceive"
    for name, spec in task.answers.items():
        assert spec.reject, f"answer {name!r} lists near misses to reject"
    if task.tier == "hard":
        assert set(task.axes) == {"audio", "visual", "interaction"}


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_audio_matches_script(task_id):
    """Fails when a spoken line changed and `dynacu render-audio` was not run."""
    task = find_task(task_id)
    clips = audio_clips(task)
    assert len(clips) == len(spoken_lines(task))
    for clip in clips:
        assert (task.root / clip["src"].removeprefix("/task/")).is_file()


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_spoken_words_are_not_on_the_page(task_id):
    """What is said must not be written in any file the server hands the page."""
    task = find_task(task_id)
    public = [
        p
        for p in task.root.rglob("*")
        if p.is_file() and p.suffix in (".html", ".js", ".json", ".css")
    ]
    if task.app:
        public += [
            p
            for p in (task.root.parent.parent / "_shared" / "apps" / task.app).rglob("*")
            if p.is_file()
        ]
    texts = [p.read_text(errors="ignore").lower() for p in public]
    config_text = repr(task.config).lower() + repr([line.show for line in task.script]).lower()
    for line in task.script:
        if line.say:
            assert line.say.lower() not in config_text
            assert all(line.say.lower() not in t for t in texts)
    for name, spec in task.answers.items():
        # The page may show visual answers at run time (from the timeline), but no static file
        # may hold an accepted answer of a spoken fact.
        if any(e.channel == "audio" for e in task.evidence) and not any(
            e.channel == "visual" for e in task.evidence
        ):
            for form in spec.accept:
                assert all(form.lower() not in t for t in texts), (name, form)


def test_catalogue_lists_existing_tasks_only():
    ids = {entry["task"] for entry in catalogue()}
    assert ids and ids <= set(TASK_IDS)


def test_stale_audio_is_refused(tmp_path):
    src = find_task("H1").root
    copy = tmp_path / "H" / src.name
    shutil.copytree(src, copy)
    toml = copy / "task.toml"
    toml.write_text(toml.read_text().replace("What is the capital", "Which is the capital"))
    task = load_task(copy)
    assert script_hash(task) != script_hash(find_task("H1"))
    with pytest.raises(AudioNotRendered, match="render-audio H1"):
        audio_clips(task)


def _broken(tmp_path: Path, edit) -> Path:
    folder = tmp_path / "F" / "90-input-probe"
    shutil.copytree(PROBE, folder)
    toml = folder / "task.toml"
    toml.write_text(edit(toml.read_text()))
    return folder


REQUIRED = ["id", "title", "tier", "axes", "instruction", "duration_s", "time_limit_s"]


@pytest.mark.parametrize("field", REQUIRED)
def test_missing_field_is_named(tmp_path, field):
    def drop(text: str) -> str:
        return "\n".join(x for x in text.splitlines() if not x.startswith(f"{field} ="))

    with pytest.raises(TaskFormatError, match=rf"task\.toml: .*{field}"):
        load_task(_broken(tmp_path, drop))


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('tier = "easy"', 'tier = "esay"', "'tier': expected one of easy, medium, hard"),
        ('tier = "easy"', "tier = 1", "'tier': expected one of"),
        ("duration_s = 60", 'duration_s = "60"', "'duration_s': expected a number"),
        ("time_limit_s = 60", "time_limit_s = 10", "'time_limit_s': expected at least duration_s"),
        ('axes = ["visual"]', 'axes = ["visuals"]', "'axes': expected a non-empty list"),
        ('axes = ["visual"]', 'axes = ["interaction"]', "audio or visual for an easy task"),
        ('title = "Input probe"', 'titel = "Input probe"', "missing 'title'.*is 'titel' a typo"),
        ('kind = "text"', 'kind = "colour"', r"\[answers.word\] 'kind'"),
        ('reject = ["grey whale"]', 'reject = ["Blue  Whale"]', "near misses that differ"),
        ('action = "key Enter"', 'action = "key Hyper"', r"\[solution #3\] 'action': unknown key"),
        ('"{answer.word}"', '"{answer.colour}"', "FIELD in"),
        ('id = "F90"', 'id = "F91"', "does not match the folder"),
        (
            'failures = ["wrong_answer"]',
            'failures = ["wrong_answer"]\ncolour = 1',
            "unknown key 'colour'",
        ),
        ('id = "F90"', 'id = "Q90"', "'id'"),
        ("[answers.word]", "[answers.word\n", "not valid TOML"),
    ],
)
def test_typos_give_clear_errors(tmp_path, old, new, message):
    folder = _broken(tmp_path, lambda t: t.replace(old, new, 1))
    with pytest.raises(TaskFormatError, match=message) as info:
        load_task(folder)
    assert "task.toml" in str(info.value)


def test_missing_task_file(tmp_path):
    with pytest.raises(TaskFormatError, match="no such task file"):
        load_task(tmp_path / "F" / "1-nothing")


def test_unknown_task_id_suggests():
    with pytest.raises(ValueError, match="no task 'H11'"):
        find_task("H11")
