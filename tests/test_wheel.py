"""The built wheel carries the library, the agents, tasks/ and envs/, and works on its own."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import os, sys
import gymnasium as gym, dynacu_gym, dynacu_agents
from dynacu_gym.paths import data_root
site = os.environ["WHEEL_SITE"]
assert dynacu_gym.__file__.startswith(site), dynacu_gym.__file__
assert dynacu_agents.__file__.startswith(site), dynacu_agents.__file__
assert str(data_root()).startswith(site), data_root()
env = gym.make("DynaCU-H1-v0")
obs, info = env.reset(seed=0)
obs, reward, terminated, truncated, info = env.step(dynacu_gym.parse_action("wait 0.2"))
env.close()
assert obs["screenshot"].shape == (720, 1280, 3) and not truncated
print("WHEEL-OK", len(gym.registry))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out),
         str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (path,) = out.glob("dynacu_gym-*.whl")
    return path


def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "dynacu_gym/env.py" in names and "dynacu_gym/runtime/sandbox.py" in names
    assert "dynacu_agents/oracle.py" in names
    assert "dynacu_gym/_data/envs/dynacu_bench.toml" in names
    assert "dynacu_gym/_data/tasks/_shared/dynacu-task.js" in names
    assert any(
        n.startswith("dynacu_gym/_data/tasks/H/1-") and n.endswith("task.toml") for n in names
    )
    assert any(n.endswith(".ogg") for n in names)
    assert not any("tests/" in n or "/fixtures/" in n for n in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "dynacu = dynacu_gym.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


@pytest.mark.browser
def test_installed_wheel_makes_an_env_outside_the_source_tree(wheel, tmp_path):
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site),
         str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=tmp_path,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(site),
            "WHEEL_SITE": str(site),
            "HOME": str(tmp_path),
        },
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert "WHEEL-OK" in run.stdout
