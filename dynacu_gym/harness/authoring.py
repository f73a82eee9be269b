"""Writing tasks of one's own: ``dynacu new-task`` and ``dynacu check-task``.

``dynacu new-task SUITE/Z/1-my-task --app podcast`` starts a task in a suite folder from the
benchmark's first task of that app (or ``--from B3``, any task): its ``task.toml`` with the
new id, and its rendered audio, so it runs and passes its checks before it is edited.
``dynacu check-task`` (:mod:`dynacu_gym.harness.task_check`) then says what an edit broke.
"""

from __future__ import annotations

import argparse
import difflib
import re
import shutil
from pathlib import Path

from dynacu_gym.errors import TaskFormatError
from dynacu_gym.paths import tasks_root
from dynacu_gym.tasks import (
    TASK_PATH_VAR,
    catalogue_order,
    find_task,
    load_task,
    task_folders,
)
from dynacu_gym.tasks.apps import app_names
from dynacu_gym.tasks.catalogue import NAMESPACE

TASK_FOLDER = re.compile(r"^(\d+)-[^\s/]+$")  # as the catalogue reads a task folder's name


def task_id_of(folder: Path) -> str:
    """The local id a task folder names (``Z/1-my-task`` is ``Z1``).

    Raises:
        TaskFormatError: the folder is not ``<Cat>/<N>-<slug>``.
    """
    category, m = folder.parent.name, TASK_FOLDER.match(folder.name)
    if not (len(category) == 1 and "A" <= category <= "Z") or not m:
        raise TaskFormatError(
            f"{folder}: expected a task folder SUITE/<Cat>/<N>-<slug>, with <Cat> one upper-case "
            f"letter and <N> a number, e.g. my-tasks/Z/1-opening-hours"
        )
    return f"{category}{int(m.group(1))}"


def starting_task(app: str | None, from_task: str | None) -> str:
    """The benchmark task a new one starts from: ``from_task``, or the first of ``app``'s.

    Raises:
        ValueError: neither or both given, an unknown app (with the close match), or no task.
    """
    if (app is None) == (from_task is None):
        raise ValueError(f"expected --app NAME or --from TASK; apps: {', '.join(app_names())}")
    if from_task is not None:
        return find_task(from_task).id
    apps = app_names()
    if app not in apps:
        close = difflib.get_close_matches(str(app), apps, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"no app {app!r}{hint}; expected one of {', '.join(apps)}")
    for task_id in sorted(task_folders(), key=catalogue_order):
        if find_task(task_id).app == app:
            return task_id
    raise ValueError(f"no task of the benchmark uses the {app} app to start from")


def new_task(folder: str | Path, app: str | None = None, from_task: str | None = None) -> str:
    """Write a new task into ``folder`` (``SUITE/<Cat>/<N>-<slug>``); return its id.

    The task is a copy of a benchmark task (see :func:`starting_task`) under the folder's id,
    its rendered audio included, with a header saying where it came from and what to run next.

    Raises:
        TaskFormatError: the folder is out of the layout, exists already, or lies in the
            benchmark's own tasks.
        ValueError: see :func:`starting_task`.
    """
    folder = Path(folder).expanduser().resolve()
    local = task_id_of(folder)
    if folder.exists():
        raise TaskFormatError(f"{folder}: already exists; new-task writes a new folder only")
    if folder.is_relative_to(tasks_root().resolve()):
        raise TaskFormatError(
            f"{folder} is in the benchmark's own tasks; write a task of your own in a folder "
            f"of yours (a suite), e.g. ~/my-tasks/Z/1-my-task"
        )
    source = find_task(starting_task(app, from_task))
    suite = folder.parent.parent
    shutil.copytree(source.root, folder, ignore=shutil.ignore_patterns("*.part-*"))
    toml = folder / "task.toml"
    text = toml.read_text(encoding="utf-8")
    text = re.sub(r'(?m)^id = "[^"]*"', f'id = "{local}"', text, count=1)
    text = re.sub(r'(?m)^category = "[^"]*"', f'category = "{local[0]}"', text, count=1)
    namespace = suite.name if NAMESPACE.match(suite.name) else "NAMESPACE"
    header = (
        f"# Started from the benchmark's {source.id} (the {source.app} app) by dynacu new-task.\n"
        f"# The format: tasks/README.md. After an edit to the script, render its speech:\n"
        f"#   dynacu render-audio {namespace}/{local}      (with ${TASK_PATH_VAR} naming "
        f"{suite})\n"
        f"# and check it: dynacu check-task {folder}\n"
    )
    toml.write_text(header + text, encoding="utf-8")
    try:
        load_task(folder, namespace=namespace)
    except TaskFormatError:
        shutil.rmtree(folder)
        raise
    return f"{namespace}/{local}"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``dynacu new-task`` and ``dynacu check-task`` on ``dynacu``'s subcommands.

    Args:
        sub: what ``ArgumentParser.add_subparsers`` returned.
    """
    from dynacu_gym.harness import task_check
    from dynacu_gym.modes import MODES

    p = sub.add_parser("new-task", help="start a task of your own from an app's first task")
    p.add_argument("folder", help="the new task's folder: SUITE/<Cat>/<N>-<slug>")
    p.add_argument("--app", help=f"start from this app's first task: {', '.join(app_names())}")
    p.add_argument("--from", dest="from_task", help="or from this benchmark task, e.g. B3")
    p.set_defaults(func=_cmd_new_task)

    p = sub.add_parser("check-task", help="is a task of your own well formed, solvable, fair?")
    p.add_argument("task", help="a task folder (SUITE/<Cat>/<N>-<slug>) or id (mylab/Z1, B3)")
    p.add_argument(
        "--only", help=f"comma-separated checks (default all): {', '.join(task_check.CHECKS)}"
    )
    p.add_argument(
        "--seeds", type=int, default=2, help="seeds the solution is played on (default 2)"
    )
    p.add_argument(
        "--modes",
        help=f"comma-separated modes the evidence is looked for in (default all): "
        f"{', '.join(MODES)}",
    )
    p.add_argument("--workers", type=int, default=2, help="episodes run at a time (default 2)")
    p.add_argument("--out", help="where the episodes are kept (default runs/check/ID)")
    p.set_defaults(func=task_check.cmd_check_task)


def _cmd_new_task(args: argparse.Namespace) -> int:
    task_id = new_task(args.folder, args.app, args.from_task)
    folder = Path(args.folder).expanduser().resolve()
    suite = folder.parent.parent
    print(f"wrote {folder / 'task.toml'}: task {task_id}")
    if not NAMESPACE.match(suite.name):
        print(f"(the suite's folder name is no namespace: name one, as NAMESPACE={suite})")
    print(f"next: export {TASK_PATH_VAR}={suite}; edit it; dynacu check-task {folder}")
    return 0
