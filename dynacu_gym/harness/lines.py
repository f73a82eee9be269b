"""The episode line: one JSON object per episode, the schema its writer and readers share.

The runner (:mod:`~dynacu_gym.harness.runner`) writes the lines; the report, the audit and the
viewer read them back through :func:`load_episodes`, which checks every key (:data:`REQUIRED_KEYS`
and the keys later versions added, read with their defaults from older lines) and names the
file, the line and the key of anything wrong. :data:`BENCHMARK_SETTING` is the setting the
benchmark's figures run on (real time, variant 0, each task's own step limit); lines off it are
named apart.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dynacu_gym.modes import CHANNELS, CLOCKS, MODES, check_channels, mode_channels, mode_name
from dynacu_gym.tasks import TIERS

# A verdict on an answer: what the task's check makes of it, or what the page made of it.
VERDICTS = ("accepted", "rejected")


def is_infra_failure(episode: dict[str, Any]) -> bool:
    """Whether the episode ended on an infrastructure fault rather than the agent's doing."""
    return bool(episode["infra_error"])


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v: Any) -> bool:
    """Whether ``v`` is a JSON number (an int or a float, not a bool)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_numbers(v: Any) -> bool:
    return isinstance(v, dict) and all(is_number(x) for x in v.values())


def _is_mode(v: Any) -> bool:
    """Whether ``v`` is a mode's canonical name (a preset's, or its channels joined with +)."""
    if not isinstance(v, str):
        return False
    try:
        return mode_name(mode_channels(v)) == v
    except ValueError:
        return False


def _mode_hint(v: Any) -> str:
    if not isinstance(v, str):
        return ""
    try:
        name = mode_name(mode_channels(v))
    except ValueError as e:
        if "+" in v or v in CHANNELS:
            return f"; {e}"  # channels, but not a set that can run: say why
        close = difflib.get_close_matches(v, MODES, n=1)
        return f"; did you mean {close[0]!r}?" if close else ""
    return f"; that channel set is called {name!r}"


# Every key of an episode line: (check, what the check expects).
_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "task": (lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "category": (lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "tier": (lambda v: v in TIERS, f"one of {TIERS}"),
    "mode": (
        _is_mode,
        f"a mode in {MODES} or channels joined with '+' in the order {'+'.join(CHANNELS)}",
    ),
    "agent": (lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "model": (lambda v: v is None or isinstance(v, str), "a string or null"),
    "repeat": (_is_int, "an integer"),
    "seed": (lambda v: v is None or _is_int(v), "an integer or null"),
    "success": (lambda v: isinstance(v, bool), "true or false"),
    "reward": (is_number, "a number"),
    "result": (lambda v: isinstance(v, str), "a string"),
    "steps": (lambda v: _is_int(v) and v >= 0, "an integer >= 0"),
    "wall_s": (lambda v: is_number(v) and v >= 0, "a number >= 0"),
    "agent_s": (lambda v: is_number(v) and v >= 0, "a number >= 0"),
    "perception_s": (_is_numbers, "an object of seconds per channel"),
    "tokens": (_is_numbers, "an object of token counts"),
    "llm_calls": (_is_int, "an integer"),
    "infra_error": (lambda v: isinstance(v, str), "a string (empty when there was no fault)"),
    "attempts": (_is_int, "an integer"),
    "agent_errors": (_is_int, "an integer"),
    "finished_at": (lambda v: isinstance(v, str), "an ISO 8601 timestamp string"),
}
REQUIRED_KEYS = tuple(_FIELDS)


def episode_key(episode: dict[str, Any]) -> tuple[str, str, str, str | None, int]:
    """The identity of an episode: (task, mode, agent, model, repeat)."""
    return (
        episode["task"],
        episode["mode"],
        episode["agent"],
        episode["model"],
        episode["repeat"],
    )


def _check_episode(obj: Any, where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in obj]
    if missing:
        raise ValueError(
            f"{where}: missing key(s) {', '.join(map(repr, missing))}; "
            f"expected every key of {REQUIRED_KEYS}"
        )
    for key, (check, expected) in _FIELDS.items():
        if not check(obj[key]):
            hint = _mode_hint(obj[key]) if key == "mode" else ""
            raise ValueError(f"{where}: {key!r}: expected {expected}, got {obj[key]!r}{hint}")
    # Keys later lines added; a line written before them ran what they default to (the
    # benchmark's setting: real time, variant 0; and the agent went on to the end).
    credit = obj.setdefault("credit", 1.0 if obj["success"] else 0.0)
    if not (is_number(credit) and 0 <= credit <= 1):
        raise ValueError(f"{where}: 'credit': expected a number from 0 to 1, got {credit!r}")
    for key, default, check, expected in _LATER_FIELDS:
        if not check(obj.setdefault(key, default)):
            raise ValueError(f"{where}: {key!r}: expected {expected}, got {obj[key]!r}")
    # Keys only some lines have, and no default is written for: a line without them ran
    # before them (channels) or spoke no answer (said, spoken_answers).
    _check_channels(obj, where)
    if "said" in obj and not (
        isinstance(obj["said"], list) and all(isinstance(t, str) for t in obj["said"])
    ):
        raise ValueError(f"{where}: 'said': expected a list of strings, got {obj['said']!r}")
    _check_spoken_answers(obj.get("spoken_answers", []), where)
    return obj


def _check_channels(obj: dict[str, Any], where: str) -> None:
    if "channels" not in obj:
        return
    channels = obj["channels"]
    if not (isinstance(channels, list) and all(isinstance(c, str) for c in channels)):
        raise ValueError(
            f"{where}: 'channels': expected a list of channel names from {CHANNELS}, "
            f"got {channels!r}"
        )
    try:
        ordered = check_channels(channels)
    except ValueError as e:
        raise ValueError(f"{where}: 'channels': {e}") from e
    # An infrastructure failure may have failed before its channels were wrapped (the runner
    # then writes []); its mode still says what it was to run.
    if mode_name(ordered) != obj["mode"] and not is_infra_failure(obj):
        expected = mode_channels(obj["mode"])
        raise ValueError(
            f"{where}: 'channels': expected the channels of mode {obj['mode']!r} "
            f"({list(expected)!r}), got {channels!r}"
        )


# Every key of an entry of ``spoken_answers``: (check, what the check expects).
_SPOKEN_ANSWER_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "field": (lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "said": (lambda v: isinstance(v, str), "a string"),
    "said_verdict": (lambda v: v in VERDICTS, "'accepted' or 'rejected'"),
    "heard": (lambda v: v is None or isinstance(v, str), "a string or null"),
    "heard_verdict": (
        lambda v: v is None or v in VERDICTS,
        "'accepted', 'rejected' or null (never judged)",
    ),
    "received": (lambda v: isinstance(v, bool), "true or false"),
}


def _check_spoken_answers(entries: Any, where: str) -> None:
    if not isinstance(entries, list):
        raise ValueError(f"{where}: 'spoken_answers': expected a list of objects, got {entries!r}")
    keys = tuple(_SPOKEN_ANSWER_FIELDS)
    for i, entry in enumerate(entries):
        at = f"{where}: 'spoken_answers'[{i}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{at}: expected an object with the keys {keys}, got {entry!r}")
        missing = [k for k in keys if k not in entry]
        if missing:
            raise ValueError(
                f"{at}: missing key(s) {', '.join(map(repr, missing))}; "
                f"expected every key of {keys}"
            )
        for key, (check, expected) in _SPOKEN_ANSWER_FIELDS.items():
            if not check(entry[key]):
                raise ValueError(f"{at}: {key!r}: expected {expected}, got {entry[key]!r}")
        if entry["received"] != (entry["heard_verdict"] == entry["said_verdict"]):
            raise ValueError(
                f"{at}: 'received': expected {not entry['received']} (whether heard_verdict "
                f"{entry['heard_verdict']!r} is said_verdict {entry['said_verdict']!r}), "
                f"got {entry['received']}"
            )


# How the benchmark's episodes run: in real time, on each task's variant 0.
# The benchmark's setting: real time, variant 0, each task's own step limit (None).
BENCHMARK_SETTING: dict[str, Any] = {
    "clock": "realtime",
    "variety": False,
    "max_episode_steps": None,
}

_LATER_FIELDS: tuple[tuple[str, Any, Callable[[Any], bool], str], ...] = (
    ("clock", BENCHMARK_SETTING["clock"], lambda v: v in CLOCKS, f"one of {CLOCKS}"),
    ("variety", BENCHMARK_SETTING["variety"], lambda v: isinstance(v, bool), "true or false"),
    (
        "max_episode_steps",
        None,
        lambda v: v is None or (_is_int(v) and v >= 1),
        "an integer >= 1 or null (the task's own step limit)",
    ),
    ("variant", 0, lambda v: v is None or (_is_int(v) and v >= 0), "an integer >= 0 or null"),
    (
        "agent_failure",
        "",
        lambda v: isinstance(v, str),
        "a string (why the agent could not go on; empty when it could)",
    ),
)


def setting_of(record: dict[str, Any]) -> dict[str, Any]:
    """The ``clock`` and ``variety`` of an episode line or of a run's env options.

    What is not said is the benchmark's, as in lines written before these keys existed.
    """
    return {key: record.get(key, value) for key, value in BENCHMARK_SETTING.items()}


def off_benchmark(episode: dict[str, Any]) -> bool:
    """Whether an episode ran off the benchmark's setting (paused time or seeded variety)."""
    return setting_of(episode) != BENCHMARK_SETTING


def load_episodes(path: str | Path) -> list[dict[str, Any]]:
    """Read episode lines from a ``.jsonl`` file or from every ``*.jsonl`` in a directory.

    Files of a directory are read in sorted name order. When an episode's key
    (:func:`episode_key`) appears more than once, as in a resumed or retried run, the last line
    wins; the episode keeps the place where its key first appeared.

    Args:
        path: a directory or a single file.

    Returns:
        The episodes, one dict per key.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: a directory without ``*.jsonl`` files, or a line that is not JSON, not an
            object, lacks a key or holds a value of the wrong kind (naming file and line).
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.jsonl"))
        if not files:
            raise ValueError(f"{path}: expected *.jsonl episode files, found none")
    elif path.exists():
        files = [path]
    else:
        raise FileNotFoundError(f"{path}: no such file or directory")

    episodes, _ = _read_files(files, strict=True)
    return episodes


def load_episodes_leniently(path: Path) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Like :func:`load_episodes` for one file, but a bad line is left out and named.

    For a run still being written (its last line half out). Returns the episodes and
    ``(file:line, what is wrong)`` of each bad line.
    """
    return _read_files([Path(path)], strict=False)


def _read_files(
    files: list[Path], strict: bool
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    by_key: dict[tuple[str, str, str, str | None, int], dict[str, Any]] = {}
    bad: list[tuple[str, str]] = []
    for file in files:
        with file.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                where = f"{file}:{number}"
                try:
                    try:
                        obj = json.loads(line)
                    except json.JSONDecodeError as e:
                        raise ValueError(
                            f"{where}: not valid JSON ({e.msg}); expected one JSON object per line"
                        ) from e
                    episode = _check_episode(obj, where)
                except ValueError as e:
                    if strict:
                        raise
                    bad.append((where, str(e).removeprefix(f"{where}: ")))
                    continue
                by_key[episode_key(episode)] = episode
    return list(by_key.values()), bad
