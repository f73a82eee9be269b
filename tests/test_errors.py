"""Every error the package defines comes under DynaCUError, and keeps its old import path."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import dynacu_agents
import dynacu_gym
from dynacu_gym import errors
from dynacu_gym.errors import DynaCUError

OPTIONAL = ("ray", "open_clip", "stable_baselines3", "anthropic", "openai", "google.genai")


def package_errors() -> dict[str, type]:
    """Public exception classes defined anywhere in the two packages, by qualified name."""
    found: dict[str, type] = {}
    for package in (dynacu_gym, dynacu_agents):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            try:
                module = importlib.import_module(info.name)
            except ImportError as e:  # an optional extra this machine lacks
                assert any(name in str(e) for name in OPTIONAL), e
                continue
            for name, obj in vars(module).items():
                if (
                    inspect.isclass(obj)
                    and issubclass(obj, BaseException)
                    and obj.__module__ == module.__name__
                    and not name.startswith("_")
                ):
                    found[f"{module.__name__}.{name}"] = obj
    return found


def test_every_error_of_the_package_is_a_dynacu_error() -> None:
    found = package_errors()
    assert "dynacu_gym.errors.ActionError" in found
    assert "dynacu_agents.llm.ModelRefused" in found
    outside = [name for name, cls in found.items() if not issubclass(cls, DynaCUError)]
    assert outside == []


@pytest.mark.parametrize(
    ("module", "name", "kind"),
    [
        ("dynacu_gym.actions", "ActionError", ValueError),
        ("dynacu_gym.tasks", "TaskFormatError", ValueError),
        ("dynacu_gym.audio_assets", "AudioNotRendered", ValueError),
        ("dynacu_gym.modes", "ModeUnavailableError", ValueError),
        ("dynacu_gym.perception.clip_gate", "ClipWeightsError", ValueError),
        ("dynacu_gym.runtime.process", "InfraError", RuntimeError),
        ("dynacu_gym.runtime.browser", "BrowserCrashed", RuntimeError),
        ("dynacu_gym.audit", "AuditError", RuntimeError),
        ("dynacu_gym.episode", "AgentFailure", RuntimeError),
    ],
)
def test_the_old_paths_name_the_same_classes(module, name, kind) -> None:
    cls = getattr(importlib.import_module(module), name)
    assert cls is getattr(errors, name)
    assert issubclass(cls, kind) and issubclass(cls, DynaCUError)
