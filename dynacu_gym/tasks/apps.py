"""The shared apps (``tasks/_shared/apps/<name>/``) and the ``[config]`` keys each declares.

An app declares the keys it reads in its ``config-keys.toml``; a task's key that its app does
not declare is refused, since the page would silently fall back to a default.
"""

from __future__ import annotations

import difflib
import functools
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dynacu_gym.errors import TaskFormatError
from dynacu_gym.paths import tasks_root

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# In an app's folder: the [config] keys the app reads (read by the loader, never by a page).
CONFIG_KEYS_FILE = "config-keys.toml"


def app_folder(app: str) -> Path:
    """The folder of the shared app named ``app`` (it may not exist)."""
    return tasks_root() / "_shared" / "apps" / app


def app_names() -> tuple[str, ...]:
    """The names of the shared apps, sorted: every folder of ``tasks/_shared/apps/``."""
    apps = tasks_root() / "_shared" / "apps"
    return tuple(sorted(p.name for p in apps.iterdir() if p.is_dir()))


@dataclass(frozen=True)
class ConfigKeys:
    """The ``[config]`` keys a shared app reads, from its ``config-keys.toml``.

    Attributes:
        file: the declaration, named in errors.
        keys: every top-level key the app reads.
        tables: for a key whose value is a table (or a list of tables), the keys it may hold;
            a table key not listed here is checked at the top level only.
    """

    file: Path
    keys: tuple[str, ...]
    tables: dict[str, tuple[str, ...]]


def _names(file: Path, where: str, value: Any) -> tuple[str, ...]:
    """A declaration's list of key names, or an error naming the file."""
    if not (isinstance(value, list) and all(isinstance(v, str) and v for v in value)):
        raise TaskFormatError(f"{file}: {where}: expected a list of key names, got {value!r}")
    return tuple(value)


@functools.cache
def _config_keys(app_folder: Path) -> ConfigKeys | None:
    """The app's declared ``[config]`` keys, read once per app; None without a declaration."""
    file = app_folder / CONFIG_KEYS_FILE
    try:
        raw = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None  # an app of the user's own: not checked
    except tomllib.TOMLDecodeError as e:
        raise TaskFormatError(f"{file}: not valid TOML: {e}") from e
    extra = sorted(set(raw) - {"keys", "tables"})
    if extra:
        raise TaskFormatError(f"{file}: unknown key {extra[0]!r}; expected keys and [tables]")
    keys = _names(file, "keys", raw.get("keys"))
    tables = raw.get("tables", {})
    if not isinstance(tables, dict):
        raise TaskFormatError(f"{file}: tables: expected a table, got {tables!r}")
    for name in tables:
        if name not in keys:
            raise TaskFormatError(f"{file}: [tables] {name!r} is not one of the keys")
    subkeys = {name: _names(file, f"tables.{name}", value) for name, value in tables.items()}
    return ConfigKeys(file, keys, subkeys)


def check_config(path: Path, app: str, config: dict[str, Any]) -> None:
    """Every ``[config]`` key (and sub-key of a declared table) is one the task's app reads."""
    declared = _config_keys(app_folder(app)) if app else None
    if declared is None:
        return

    def refuse(key: str, known: tuple[str, ...], where: str = "") -> None:
        close = difflib.get_close_matches(key.rsplit(".", 1)[-1], known, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"the {app} app reads {', '.join(known)}"
        raise TaskFormatError(f"{path}: unknown key {key!r}{where}; {hint} (see {declared.file})")

    for key, value in config.items():
        if key not in declared.keys:
            refuse(f"config.{key}", declared.keys)
        known = declared.tables.get(key)
        if known is None:
            continue
        tables = value if isinstance(value, list) else [value]
        for i, table in enumerate(tables):
            # A list may hold plain values too, e.g. nav = ["Home", {label = "Help", to = "help"}].
            unknown = [sub for sub in table if sub not in known] if isinstance(table, dict) else []
            if unknown:
                where = f" in [[config.{key}]] #{i + 1}" if isinstance(value, list) else ""
                refuse(f"config.{key}.{unknown[0]}", known, where)
