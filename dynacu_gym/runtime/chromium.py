"""Which Chromium the env drives: looked for in a fixed order, never downloaded.

:func:`find_chromium` tries, in this order:

1. ``$DYNACU_CHROMIUM``, when set: a path to an executable or a command name on ``PATH``. Set
   but wrong is an error at once, never a silent fall back to another browser.
2. ``/usr/bin/chromium`` (:data:`SYSTEM_CHROMIUM`): Debian's package, what ``make setup``
   installs.
3. ``chromium`` on ``PATH``, then 4. ``chromium-browser`` on ``PATH`` (Ubuntu's name; a snap's
   ``/snap/bin/chromium`` is found like any other, though Playwright drives it only sometimes).
5. The Chromium of Playwright itself, when ``python -m playwright install chromium`` has put it
   there. Asking Playwright where that is starts its driver (~0.3 s), so it is asked only when
   1-4 found nothing.

Nothing is cached: each call looks again (a few ``stat`` calls), so a changed ``PATH`` or
environment counts at once. :func:`chromium_version` asks a found browser its version.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

from dynacu_gym.errors import InfraError

ENV_VAR = "DYNACU_CHROMIUM"
SYSTEM_CHROMIUM = Path("/usr/bin/chromium")  # Debian's package; a module attribute for tests
PATH_NAMES = ("chromium", "chromium-browser")  # looked up on PATH, in this order
PLAYWRIGHT_INSTALL = "python -m playwright install chromium"

# Each way to get a Chromium: the command (or setting), and where it applies.
INSTALL_COMMANDS = (
    ("apt install chromium", "Debian"),
    ("apt install chromium-browser", "Ubuntu"),
    (PLAYWRIGHT_INSTALL, "any system"),
    (f"{ENV_VAR}=/path/to/chrome", "a Chromium or Chrome installed elsewhere"),
)
INSTALL_HINT = (
    "install one: "
    + ", ".join(f"`{command}` ({where})" for command, where in INSTALL_COMMANDS[:3])
    + f", or set `{INSTALL_COMMANDS[3][0]}` ({INSTALL_COMMANDS[3][1]})"
)

VERSION_TIMEOUT_S = 10.0  # `chromium --version` took 1.3 s on a loaded 2-core machine
PLAYWRIGHT_TIMEOUT_S = 30.0  # Playwright's driver starts in ~0.3 s; a loaded machine is slower

# The browser's name and dotted version at the start of a `--version` line: "Chromium
# 156.0.8078.114" of "Chromium 156.0.8078.114 built on Debian GNU/Linux 12 (bookworm)".
_VERSION_LINE = re.compile(r"\s*([^\d\n]*\d+(?:\.\d+)+)")


class ChromiumNotFound(InfraError):
    """No Chromium was found to drive, or ``$DYNACU_CHROMIUM`` names none.

    Attributes:
        tried: each place looked in, in order, with why it did not do: ``(place, why)``.
        fix: what to run or set so that the next look finds a Chromium.
    """

    def __init__(self, message: str, tried: list[tuple[str, str]], fix: str) -> None:
        super().__init__(message)
        self.tried = list(tried)
        self.fix = fix


def find_chromium() -> Path:
    """The Chromium executable to drive, looked for in the order of this module's docstring.

    ``$DYNACU_CHROMIUM`` counts as set when it is not empty.

    Returns:
        The executable's path, as found (a link, such as a snap's, is not resolved).

    Raises:
        ChromiumNotFound: ``$DYNACU_CHROMIUM`` is set but names no executable, or none of the
            places holds a Chromium; the message lists each place tried with why it failed, and
            how to install one.
    """
    chosen = os.environ.get(ENV_VAR, "")
    if chosen:
        return _chosen_chromium(chosen)
    tried = [(f"${ENV_VAR}", "not set")]
    why = _not_executable(SYSTEM_CHROMIUM)
    if why is None:
        return SYSTEM_CHROMIUM
    tried.append((str(SYSTEM_CHROMIUM), why))
    for name in PATH_NAMES:
        found = shutil.which(name)
        if found is not None:
            return Path(found)
        tried.append((f"`{name}` on PATH", "not found"))
    try:
        bundled = playwright_chromium_path()
    except Exception as e:  # no playwright, or a driver that would not start: one more miss
        tried.append(("Playwright's Chromium", f"Playwright could not say where it is: {e}"))
    else:
        why = _not_executable(bundled)
        if why is None:
            return bundled
        tried.append((f"Playwright's Chromium {bundled}", f"{why} (`{PLAYWRIGHT_INSTALL}`)"))
    lines = [f"  {i}. {place}: {why}" for i, (place, why) in enumerate(tried, start=1)]
    raise ChromiumNotFound(
        "no Chromium found; looked in this order:\n"
        + "\n".join(lines)
        + f"\n(PATH={os.environ.get('PATH', '')})\n"
        + INSTALL_HINT,
        tried,
        INSTALL_HINT,
    )


def _chosen_chromium(value: str) -> Path:
    """The executable ``$DYNACU_CHROMIUM`` names: a path (it holds a ``/``) or a command name."""
    fix = f"set {ENV_VAR} to a Chromium or Chrome executable, or unset it to look elsewhere"
    if os.sep in value or value.startswith("~"):
        path = Path(value).expanduser()
        why = _not_executable(path)
        if why is None:
            return path.absolute()
    else:
        found = shutil.which(value)
        if found is not None:
            return Path(found)
        why = "is no command on PATH"
    raise ChromiumNotFound(
        f"${ENV_VAR}={value!r}, which {why}: expected the path of an executable Chromium or "
        f"Chrome, or a command name on PATH; {fix}",
        [(f"${ENV_VAR}={value!r}", why)],
        fix,
    )


def _not_executable(path: Path) -> str | None:
    """Why ``path`` is not an executable file, or ``None`` when it is one."""
    if not path.exists():
        return "is a broken link" if path.is_symlink() else "does not exist"
    if path.is_dir():
        return "is a directory"
    if not os.access(path, os.X_OK):
        return "is not executable"
    return None


def playwright_chromium_path() -> Path:
    """Where Playwright's own Chromium is, or will be once ``playwright install chromium`` ran.

    Starts Playwright's driver (~0.3 s) but no browser. It runs on a thread of its own: the
    sync API refuses to start on a thread that runs an asyncio loop (a notebook's) or that
    already runs a Playwright.

    Returns:
        The executable Playwright launches by default; it exists only after the install.

    Raises:
        ImportError: playwright is not installed.
        InfraError: the driver did not answer within :data:`PLAYWRIGHT_TIMEOUT_S`.
        Exception: whatever else the driver raised while starting.
    """
    answer: Future[Path] = Future()

    def ask() -> None:
        try:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as p:
                answer.set_result(Path(p.chromium.executable_path))
        except BaseException as e:  # handed to the caller, who re-raises it
            if not answer.done():
                answer.set_exception(e)

    threading.Thread(target=ask, name="dynacu-chromium-lookup", daemon=True).start()
    try:
        return answer.result(timeout=PLAYWRIGHT_TIMEOUT_S)
    except FutureTimeout as e:
        raise InfraError(
            f"Playwright's driver did not say within {PLAYWRIGHT_TIMEOUT_S:g} s where its "
            "Chromium is"
        ) from e


def chromium_version(path: str | Path, timeout: float = VERSION_TIMEOUT_S) -> str:
    """The browser's name and version as ``path --version`` prints them.

    Args:
        path: a Chromium (or Chrome) executable.
        timeout: seconds to wait for the answer.

    Returns:
        E.g. ``"Chromium 156.0.8078.114"`` (what follows the version, such as "built on
        Debian", is left off).

    Raises:
        InfraError: the command cannot run, fails, takes longer than ``timeout`` or prints no
            version; the message holds what it printed.
    """
    command = f"`{path} --version`"
    try:
        done = subprocess.run(
            [str(path), "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        printed = _printed(e.stdout, e.stderr)
        raise InfraError(f"{command} did not answer within {timeout:g} s{printed}") from e
    except OSError as e:
        raise InfraError(f"cannot run {command}: {e}") from e
    printed = _printed(done.stdout, done.stderr)
    if done.returncode != 0:
        raise InfraError(f"{command} failed with exit status {done.returncode}{printed}")
    for line in done.stdout.splitlines():
        match = _VERSION_LINE.match(line)
        if match:
            return match.group(1).strip()
    raise InfraError(
        f"{command} printed no version (expected a line such as "
        f"'Chromium 156.0.8078.114'){printed or '; it printed nothing'}"
    )


def _printed(stdout: str | bytes | None, stderr: str | bytes | None) -> str:
    """What a command printed, as the end of an error message (empty when it printed nothing)."""
    parts = []
    for stream in (stdout, stderr):
        if isinstance(stream, bytes):  # TimeoutExpired keeps bytes even with text=True
            stream = stream.decode("utf-8", "replace")
        if stream and stream.strip():
            parts.append(stream.strip())
    return "; it printed:\n" + "\n".join(parts) if parts else ""
