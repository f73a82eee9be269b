"""Agents that crash their worker process, for the evaluation runner's tests."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


class CrashOnce:
    """Kills its process on its first action unless ``marker`` exists (then it says done)."""

    name = "crash_once"
    privileged = False

    def __init__(self, env: Any, marker: str) -> None:
        self.marker = Path(marker)

    def reset(self, instruction: str) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        if not self.marker.exists():
            self.marker.write_text("crashed once")
            os._exit(3)
        return {"type": "done"}, {}


class CrashAlways:
    """Kills its process on every first action."""

    name = "crash_always"
    privileged = False

    def __init__(self, env: Any) -> None:
        pass

    def reset(self, instruction: str) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        os._exit(4)
