"""The catalogue: the benchmark's task folders and the users' suites, by id, in catalogue order.

The benchmark's tasks live under the tasks root and are named by their id alone (``"B3"``).
A *suite* is a folder of the user's own in the same layout (``<Cat>/<N>-<slug>/task.toml``),
named by a namespace; its tasks are ``"<namespace>/<Cat><N>"`` (``"mylab/Z1"``), so they never
collide with the benchmark's. Suites come from ``$DYNACU_TASK_PATH`` (entries separated by
``os.pathsep``, each ``FOLDER`` or ``NAMESPACE=FOLDER``; the namespace is the folder's name
unless given) and from :func:`register_suite` (``dynacu_gym.register_tasks`` registers the
suite's envs with it), which adds its folder to this process's
``$DYNACU_TASK_PATH``, so worker processes and Ray jobs started after it know the suite too.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

from dynacu_gym.errors import TaskFormatError
from dynacu_gym.paths import tasks_root
from dynacu_gym.tasks.loader import load_task
from dynacu_gym.tasks.spec import TaskSpec

TASK_PATH_VAR = "DYNACU_TASK_PATH"
# A namespace is the first part of a Gymnasium id ("mylab/Z1-v0"): a letter, then letters,
# digits, "_", "." or "-". The benchmark's own ids carry none; "DynaCU" is kept for them.
NAMESPACE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
RESERVED_NAMESPACES = ("dynacu",)
_TASK_FOLDER = re.compile(r"^(\d+)-")


def catalogue_order(task_id: str) -> tuple[str, str, int]:
    """Sort key of task ids in catalogue order.

    The benchmark's tasks come first, then each suite's; within each, by category, then
    number (A2 before A10).
    """
    namespace, _, local = task_id.rpartition("/")
    return namespace, local[0], int(local[1:])


def task_folders(root: Path | None = None) -> dict[str, Path]:
    """Task id -> folder, for every ``task.toml`` under the tasks root (the benchmark's own)."""
    root = root or tasks_root()
    found: dict[str, Path] = {}
    for toml in sorted(root.glob("[A-Z]/*/task.toml")):
        m = _TASK_FOLDER.match(toml.parent.name)
        if m:
            found[f"{toml.parent.parent.name}{int(m.group(1))}"] = toml.parent
    return found


def _check_namespace(namespace: str, where: str) -> None:
    if not NAMESPACE.match(namespace):
        raise TaskFormatError(
            f"{where}: namespace {namespace!r} is not valid; expected a letter, then letters, "
            f"digits, '_', '.' or '-' (at most 64), e.g. 'mylab'"
        )
    if namespace.lower() in RESERVED_NAMESPACES:
        raise TaskFormatError(
            f"{where}: namespace {namespace!r} is the benchmark's own; choose another"
        )


def _check_suite(namespace: str, folder: Path, where: str) -> None:
    """Refuse a suite with a bad or reserved namespace, or a missing folder.

    The benchmark's own tasks are refused too: their ids carry no namespace.
    """
    _check_namespace(namespace, where)
    if not folder.is_dir():
        raise TaskFormatError(f"{where}: {folder}: no such folder")
    if folder.is_relative_to(tasks_root().resolve()):
        raise TaskFormatError(f"{where}: {folder} is the benchmark's own tasks")


def suite_folders(folder: Path) -> dict[str, Path]:
    """Local task id (``"Z1"``) -> folder, for every task of a suite folder.

    Raises:
        TaskFormatError: the folder is missing, holds no task, or holds a ``task.toml`` out of
            the layout; the message names the path.
    """
    if not folder.is_dir():
        raise TaskFormatError(f"{folder}: no such task folder")
    found: dict[str, Path] = {}
    for toml in sorted(folder.glob("*/*/task.toml")):
        category, name = toml.parent.parent.name, toml.parent.name
        m = _TASK_FOLDER.match(name)
        if not (len(category) == 1 and "A" <= category <= "Z") or not m:
            raise TaskFormatError(
                f"{toml}: out of the suite's layout; expected <Cat>/<N>-<slug>/task.toml with "
                f"<Cat> one upper-case letter and <N> a number, e.g. Z/1-my-task/task.toml"
            )
        task_id = f"{category}{int(m.group(1))}"
        if task_id in found:
            raise TaskFormatError(f"{toml}: task {task_id} is also {found[task_id]}")
        found[task_id] = toml.parent
    if not found:
        raise TaskFormatError(
            f"{folder}: holds no task; expected <Cat>/<N>-<slug>/task.toml inside it"
        )
    return found


def _parse_entry(entry: str) -> tuple[str, Path]:
    """One ``$DYNACU_TASK_PATH`` entry: ``FOLDER`` or ``NAMESPACE=FOLDER``."""
    name, sep, rest = entry.partition("=")
    if sep and NAMESPACE.match(name.strip()):
        return name.strip(), Path(rest.strip()).expanduser().resolve()
    folder = Path(entry.strip()).expanduser().resolve()
    return folder.name, folder


def suites() -> dict[str, Path]:
    """Namespace -> folder, for every suite ``$DYNACU_TASK_PATH`` names.

    Raises:
        TaskFormatError: an entry names a missing folder, a bad or reserved namespace, the
            benchmark's own tasks, or a namespace another entry holds.
    """
    found: dict[str, Path] = {}
    for entry in os.environ.get(TASK_PATH_VAR, "").split(os.pathsep):
        if not entry.strip():
            continue
        namespace, folder = _parse_entry(entry)
        where = f"${TASK_PATH_VAR} entry {entry!r}"
        _check_suite(namespace, folder, where)
        if namespace in found and found[namespace] != folder:
            raise TaskFormatError(
                f"{where}: namespace {namespace!r} is already {found[namespace]}; give one of "
                f"them another as NAMESPACE=FOLDER"
            )
        found[namespace] = folder
    return found


def register_suite(folder: str | Path, namespace: str | None = None) -> tuple[str, list[str]]:
    """Add a suite folder to this process's catalogue; return its namespace and task ids.

    Every task is loaded once, so a broken one is reported now, naming its file and field.
    Registering the same folder under the same namespace again changes nothing.

    Raises:
        TaskFormatError: the folder is missing, holds no task or is the benchmark's own, the
            namespace is bad, reserved or another folder's, or a task does not load.
    """
    path = Path(folder).expanduser().resolve()
    namespace = path.name if namespace is None else namespace
    _check_suite(namespace, path, "register_suite")
    held = suites()
    if namespace in held and held[namespace] != path:
        raise TaskFormatError(
            f"{path}: namespace {namespace!r} is already {held[namespace]}; "
            f"pass namespace= to register it under another"
        )
    local = suite_folders(path)
    for task_folder in local.values():
        load_task(task_folder, namespace=namespace)
    add_to_task_path(namespace, path)
    return namespace, [f"{namespace}/{t}" for t in sorted(local, key=catalogue_order)]


def add_to_task_path(namespace: str, folder: Path) -> None:
    """Name the suite in this process's ``$DYNACU_TASK_PATH``, unless it is there already.

    Unlike :func:`register_suite`, its tasks are not loaded: one broken task of a suite does
    not keep another from being checked.

    Raises:
        TaskFormatError: as :func:`register_suite`, for the namespace and folder.
    """
    folder = folder.expanduser().resolve()
    _check_suite(namespace, folder, f"suite {folder}")
    held = suites()
    if held.get(namespace) == folder:
        return
    if namespace in held:
        raise TaskFormatError(
            f"{folder}: namespace {namespace!r} is already {held[namespace]}; "
            f"name this suite another as NAMESPACE={folder} in ${TASK_PATH_VAR}"
        )
    entries = [e for e in os.environ.get(TASK_PATH_VAR, "").split(os.pathsep) if e.strip()]
    os.environ[TASK_PATH_VAR] = os.pathsep.join([*entries, f"{namespace}={folder}"])


def all_task_folders() -> dict[str, Path]:
    """Task id -> folder for the benchmark's tasks and every suite's (``"mylab/Z1"``)."""
    found = task_folders()
    for namespace, folder in suites().items():
        for local, task_folder in suite_folders(folder).items():
            found[f"{namespace}/{local}"] = task_folder
    return found


def find_task(task_id: str) -> TaskSpec:
    """Load the task with id ``task_id`` (``"B3"``, or ``"mylab/Z1"`` from a suite).

    Raises:
        ValueError: no such task.
        TaskFormatError: the task's file breaks the format, or a suite is misconfigured.
    """
    namespace, _, local = task_id.rpartition("/")
    if not namespace:
        folders = task_folders()
        where = str(tasks_root())
    else:
        held = suites()
        if namespace not in held:
            known = ", ".join(sorted(held)) or f"none: ${TASK_PATH_VAR} names no suite"
            raise ValueError(
                f"no task {task_id!r}: no suite {namespace!r} is registered (suites: {known}); "
                f"add its folder to ${TASK_PATH_VAR} or call "
                f"dynacu_gym.register_tasks(FOLDER, namespace={namespace!r})"
            )
        folders = suite_folders(held[namespace])
        where = str(held[namespace])
    if local not in folders:
        close = difflib.get_close_matches(local, sorted(folders), n=3)
        prefix = f"{namespace}/" if namespace else ""
        hint = f"; close: {', '.join(prefix + c for c in close)}" if close else ""
        raise ValueError(f"no task {task_id!r} under {where}{hint}")
    return load_task(folders[local], namespace=namespace or None)
