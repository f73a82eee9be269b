"""The layers hold: lint-imports passes here and fails on an import across a contract."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def contracts() -> list[dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["importlinter"]["contracts"]


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}  # the copy, before the installed package
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(tree / "pyproject.toml")],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the two packages and the contracts, to break on purpose."""
    for package in ("dynacu_gym", "dynacu_agents"):
        skip = shutil.ignore_patterns("_data", "__pycache__")
        shutil.copytree(ROOT / package, tmp_path / package, ignore=skip)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_every_top_level_module_is_in_a_layer() -> None:
    core = set(contracts()[0]["source_modules"])
    assert contracts()[0]["forbidden_modules"] == ["dynacu_gym.harness", "dynacu_agents"]
    unplaced = []
    for path in sorted((ROOT / "dynacu_gym").iterdir()):
        name = path.stem if path.suffix == ".py" else path.name
        if name.startswith("_") or not (path.suffix == ".py" or (path / "__init__.py").is_file()):
            continue
        module = f"dynacu_gym.{name}"
        moved = path.suffix == ".py" and "sys.modules[__name__] = " in path.read_text()
        if module not in core and name != "harness" and not moved:
            unplaced.append(module)
    assert unplaced == [], "core modules missing from the first contract in pyproject.toml"


def test_the_contracts_hold_and_an_import_across_one_breaks_them(tree: Path) -> None:
    kept = lint_imports(tree)
    assert kept.returncode == 0, kept.stdout[-3000:] + kept.stderr[-2000:]
    assert "Contracts: 4 kept, 0 broken." in kept.stdout
    record = tree / "dynacu_gym" / "record.py"
    record.write_text(record.read_text() + "\nfrom dynacu_gym.harness import runner  # noqa\n")
    sandbox = tree / "dynacu_gym" / "runtime" / "sandbox.py"
    sandbox.write_text(sandbox.read_text() + "\nimport dynacu_gym.perception.keyframes  # noqa\n")
    broken = lint_imports(tree)
    assert broken.returncode != 0
    assert "Contracts: 2 kept, 2 broken." in broken.stdout
    assert "dynacu_gym.record -> dynacu_gym.harness.runner" in broken.stdout
    assert "dynacu_gym.runtime.sandbox -> dynacu_gym.perception.keyframes" in broken.stdout


def test_listing_the_catalogue_loads_neither_the_runner_nor_the_audit_nor_the_report() -> None:
    code = (
        "import contextlib, io, sys\n"
        "from dynacu_gym.harness.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    main(['list'])\n"
        "assert 'A1' in out.getvalue()\n"
        "heavy = ('runner', 'audit', 'report', 'ray_backend', 'episode')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[1:3] and\n"
        "      m.startswith('dynacu_gym.harness.') and m.split('.')[2] in heavy))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_moved_module_keeps_its_old_path_as_the_same_module() -> None:
    moved = {}
    for path in sorted((ROOT / "dynacu_gym").glob("*.py")):
        text = path.read_text()
        if "sys.modules[__name__] = " in text:
            target = text.split("Moved to :mod:`", 1)[1].split("`", 1)[0]
            moved[f"dynacu_gym.{path.stem}"] = target
    assert {"dynacu_gym.answers", "dynacu_gym.audio_assets", "dynacu_gym.audit"} <= set(moved)
    for old, new in moved.items():
        assert importlib.import_module(old) is importlib.import_module(new), old


def test_the_tasks_package_exports_what_the_tasks_module_did() -> None:
    import dynacu_gym.tasks as tasks

    old_names = {
        "AXES", "CATEGORIES", "CENTER_PLACEHOLDER", "CHANNELS", "CONFIG_KEYS_FILE", "CRITERION",
        "PAGE_PLACEHOLDER", "PLACEHOLDER", "TASK_ID", "TIERS", "AnswerSpec", "ConfigKeys",
        "Evidence", "ScriptLine", "SolutionStep", "Speaker", "TaskFormatError", "TaskSpec",
        "catalogue_order", "find_task", "load_task", "task_folders",
    }  # fmt: skip
    assert old_names <= set(tasks.__all__)
    assert all(hasattr(tasks, name) for name in tasks.__all__)
