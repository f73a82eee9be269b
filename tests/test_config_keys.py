"""Each shared app declares the [config] keys it reads; a task's unknown key is refused."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import dynacu_gym.tasks.apps as apps_module
from dynacu_gym.paths import tasks_root
from dynacu_gym.tasks import CONFIG_KEYS_FILE, TaskFormatError, find_task, load_task, task_folders

APPS = tasks_root() / "_shared" / "apps"
APP_NAMES = sorted(p.name for p in APPS.iterdir() if (p / "index.html").is_file())
PODCAST_KEYS = APPS / "podcast" / CONFIG_KEYS_FILE
A1_TOML = task_folders()["A1"] / "task.toml"


def _task_copy(tmp_path: Path, old: str, new: str) -> Path:
    """A1's task.toml in a folder of its own, with ``old`` (which it must hold) made ``new``."""
    text = A1_TOML.read_text(encoding="utf-8")
    assert old in text, f"A1's task.toml no longer holds {old!r}: pick another line"
    folder = tmp_path / "A" / "1-copy"
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(text.replace(old, new, 1), encoding="utf-8")
    return folder


def _refusal(folder: Path) -> str:
    with pytest.raises(TaskFormatError) as info:
        load_task(folder)
    return str(info.value)


@pytest.mark.parametrize("task_id", sorted(task_folders()))
def test_every_catalogue_task_uses_only_keys_its_app_declares(task_id):
    task = find_task(task_id)
    assert (APPS / task.app / CONFIG_KEYS_FILE).is_file(), f"{task.app} declares no keys"


@pytest.mark.parametrize("app", APP_NAMES)
def test_every_declared_key_is_named_in_the_apps_code(app):
    # A key the code no longer reads would let its typos through: the declaration follows app.js.
    declared = apps_module._config_keys(APPS / app)
    assert declared is not None, f"{app} has no {CONFIG_KEYS_FILE}"
    code = (APPS / app / "app.js").read_text(encoding="utf-8")
    names = set(declared.keys) | {k for keys in declared.tables.values() for k in keys}
    missing = sorted(k for k in names if not re.search(rf"\b{re.escape(k)}\b", code))
    assert not missing, f"{app}: declared but not in app.js: {missing}"


def test_a_misspelt_key_is_refused_with_the_close_match(tmp_path):
    folder = _task_copy(tmp_path, 'app_name = "Podcasts"', 'app_nam = "Podcasts"')
    message = _refusal(folder)
    assert str(folder / "task.toml") in message
    assert "unknown key 'config.app_nam'; did you mean 'app_name'?" in message
    assert str(PODCAST_KEYS) in message


def test_a_misspelt_key_of_a_declared_table_is_refused(tmp_path):
    folder = _task_copy(tmp_path, 'title = "Answer"', 'titel = "Answer"')
    message = _refusal(folder)
    assert str(folder / "task.toml") in message
    assert "unknown key 'config.answer.titel'; did you mean 'title'?" in message


def test_a_misspelt_key_in_a_list_of_tables_names_the_table(tmp_path):
    folder = _task_copy(tmp_path, 'title = "Meet our guest"', 'titl = "Meet our guest"')
    message = _refusal(folder)
    assert "'config.chapters.titl' in [[config.chapters]] #2; did you mean 'title'?" in message


def test_a_key_with_no_close_match_lists_the_apps_keys(tmp_path):
    folder = _task_copy(tmp_path, "autoplay = true", "zzyzx = true")
    message = _refusal(folder)
    assert "unknown key 'config.zzyzx'; the podcast app reads app_name, show, host," in message
    assert "did you mean" not in message


def test_an_app_without_a_declaration_is_not_checked(tmp_path, monkeypatch):
    # An app of the user's own (here a podcast app copied without its declaration).
    root = tmp_path / "tasks"
    shutil.copytree(APPS / "podcast", root / "_shared" / "apps" / "podcast")
    (root / "_shared" / "apps" / "podcast" / CONFIG_KEYS_FILE).unlink()
    monkeypatch.setattr(apps_module, "tasks_root", lambda: root)
    task = load_task(_task_copy(tmp_path, "autoplay = true", "zzyzx = true"))
    assert task.config["zzyzx"] is True


@pytest.mark.parametrize(
    ("declaration", "message"),
    [
        ('keys = "show"', "keys: expected a list of key names"),
        ('keys = ["show", 3]', "keys: expected a list of key names"),
        ("tables = {}", "keys: expected a list of key names"),
        ('keys = ["show"]\n[tabels]\nshow = ["x"]', "unknown key 'tabels'"),
        ('keys = ["show"]\ntables = ["show"]', "tables: expected a table"),
        ('keys = ["show"]\n[tables]\nshow = "name"', "tables.show: expected a list of key names"),
        ('keys = ["show"]\n[tables]\nanswer = ["title"]', "'answer' is not one of the keys"),
        ('keys = ["show"', "not valid TOML"),
    ],
)
def test_a_malformed_declaration_is_an_error_naming_it(tmp_path, monkeypatch, declaration, message):
    root = tmp_path / "tasks"
    shutil.copytree(APPS / "podcast", root / "_shared" / "apps" / "podcast")
    declared = root / "_shared" / "apps" / "podcast" / CONFIG_KEYS_FILE
    declared.write_text(declaration + "\n", encoding="utf-8")
    monkeypatch.setattr(apps_module, "tasks_root", lambda: root)
    refused = _refusal(_task_copy(tmp_path, "autoplay = true", "autoplay = true"))
    assert refused.startswith(f"{declared}: ") and message in refused


def test_the_declaration_is_read_once_per_app():
    apps_module._config_keys.cache_clear()
    for task_id in ("A1", "A2", "A3"):
        find_task(task_id)
    assert apps_module._config_keys.cache_info().misses == 1
