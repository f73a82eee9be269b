"""Where the catalogue lives: ``tasks/`` and ``envs/`` in a source tree or inside the wheel."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
VARIANT_URL = "/variant-audio/"  # where the task server serves a variant's rendered clips


def data_root() -> Path:
    """The folder holding ``tasks/`` and ``envs/``.

    An installed wheel carries them in ``dynacu_gym/_data/``; a source checkout (editable
    install) has them beside the package.
    """
    bundled = _PACKAGE / "_data"
    if (bundled / "tasks").is_dir():
        return bundled
    return _PACKAGE.parent


def tasks_root() -> Path:
    """The ``tasks/`` folder."""
    return data_root() / "tasks"


def envs_root() -> Path:
    """The ``envs/`` folder."""
    return data_root() / "envs"


def cache_root() -> Path:
    """Where rendered assets are kept between runs.

    ``$DYNACU_CACHE``, else ``$XDG_CACHE_HOME/dynacu-gym`` (by default ``~/.cache/dynacu-gym``).
    """
    if os.environ.get("DYNACU_CACHE"):
        return Path(os.environ["DYNACU_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "dynacu-gym"
