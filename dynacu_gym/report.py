"""The benchmark's tables, ablations and charts, computed from episode lines.

The evaluation runner writes one JSON object per episode per line, in ``*.jsonl`` files. This
module reads them back and reports success by category, tier and mode, the paired ablations
between observation modes (with an exact McNemar test), steps and time to completion, and the
observation overhead::

    from dynacu_gym.report import load_episodes, write_report

    episodes = load_episodes("runs/2026-11-30")
    paths = write_report(episodes, "runs/2026-11-30/report")

It needs nothing but the episode lines (no browser, no env); charts need the ``report`` extra.

Episodes that ended on an infrastructure fault (``infra_error`` non-empty) say nothing about
the agent: they are left out of every rate, pair, median and share, and counted on their own.

The static controls (category S, no audio and nothing moving) are a control set, not the
benchmark: they have their row in success by category and their own table beside the dynamic
tasks per mode, and are left out of the success by mode and tier and of the ablations.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from dynacu_gym.modes import CLOCKS, MODES
from dynacu_gym.tasks import CATEGORIES, TIERS

CONTROL_CATEGORY = "S"  # the static controls
# The mode pairs whose difference the benchmark exists to measure: (first, second).
ABLATIONS: tuple[tuple[str, str], ...] = (
    ("standard", "aoi_full"),
    ("aoi_visual", "aoi_audio"),
    ("aoi_visual", "aoi_full"),
    ("aoi_audio", "aoi_full"),
    ("aoi_full", "aoi_interactive"),
)

# Two-sided 95% normal quantile, for Wilson intervals.
_Z95 = 1.959963984540054

SUMMARY_COLUMNS = (
    "agent",
    "model",
    "group_kind",
    "group",
    "mode",
    "n",
    "successes",
    "rate",
    "credit",
    "infra_failures",
)
ABLATION_COLUMNS = (
    "agent",
    "model",
    "first",
    "second",
    "pairs",
    "first_rate",
    "second_rate",
    "difference_pp",
    "b",
    "c",
    "p_value",
)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_numbers(v: Any) -> bool:
    return isinstance(v, dict) and all(_is_number(x) for x in v.values())


# Every key of an episode line: (check, what the check expects).
_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "task": (lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "category": (lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "tier": (lambda v: v in TIERS, f"one of {TIERS}"),
    "mode": (lambda v: v in MODES, f"one of {MODES}"),
    "agent": (lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "model": (lambda v: v is None or isinstance(v, str), "a string or null"),
    "repeat": (_is_int, "an integer"),
    "seed": (lambda v: v is None or _is_int(v), "an integer or null"),
    "success": (lambda v: isinstance(v, bool), "true or false"),
    "reward": (_is_number, "a number"),
    "result": (lambda v: isinstance(v, str), "a string"),
    "steps": (lambda v: _is_int(v) and v >= 0, "an integer >= 0"),
    "wall_s": (lambda v: _is_number(v) and v >= 0, "a number >= 0"),
    "agent_s": (lambda v: _is_number(v) and v >= 0, "a number >= 0"),
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
            raise ValueError(f"{where}: {key!r}: expected {expected}, got {obj[key]!r}")
    # Keys later lines added; a line written before them ran what they default to (the
    # benchmark's setting: real time, variant 0).
    credit = obj.setdefault("credit", 1.0 if obj["success"] else 0.0)
    if not (_is_number(credit) and 0 <= credit <= 1):
        raise ValueError(f"{where}: 'credit': expected a number from 0 to 1, got {credit!r}")
    for key, default, check, expected in _LATER_FIELDS:
        if not check(obj.setdefault(key, default)):
            raise ValueError(f"{where}: {key!r}: expected {expected}, got {obj[key]!r}")
    return obj


# How the benchmark's episodes run: in real time, on each task's variant 0.
BENCHMARK_SETTING: dict[str, Any] = {"clock": "realtime", "variety": False}

_LATER_FIELDS: tuple[tuple[str, Any, Callable[[Any], bool], str], ...] = (
    ("clock", BENCHMARK_SETTING["clock"], lambda v: v in CLOCKS, f"one of {CLOCKS}"),
    ("variety", BENCHMARK_SETTING["variety"], lambda v: isinstance(v, bool), "true or false"),
    ("variant", 0, lambda v: v is None or (_is_int(v) and v >= 0), "an integer >= 0 or null"),
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

    by_key: dict[tuple[str, str, str, str | None, int], dict[str, Any]] = {}
    for file in files:
        with file.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                where = f"{file}:{number}"
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(
                        f"{where}: not valid JSON ({e.msg}); expected one JSON object per line"
                    ) from e
                episode = _check_episode(obj, where)
                by_key[episode_key(episode)] = episode
    return list(by_key.values())


def is_control(episode: dict[str, Any]) -> bool:
    """Whether the episode is of a static control (category S) rather than a dynamic task."""
    return bool(episode["category"] == CONTROL_CATEGORY)


def is_infra_failure(episode: dict[str, Any]) -> bool:
    """Whether the episode ended on an infrastructure fault rather than the agent's doing."""
    return bool(episode["infra_error"])


def wilson_interval(successes: int, n: int) -> tuple[float, float] | None:
    """The Wilson score 95% interval of a success rate, in percent.

    Args:
        successes: episodes that succeeded.
        n: episodes counted (infrastructure failures excluded).

    Returns:
        ``(low, high)`` in percent, or ``None`` when ``n`` is 0.
    """
    if n == 0:
        return None
    p = successes / n
    z2 = _Z95 * _Z95
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = _Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return (max(0.0, centre - half) * 100, min(1.0, centre + half) * 100)


def mcnemar_p(b: int, c: int) -> float:
    """The exact two-sided McNemar p-value for discordant counts ``b`` and ``c``.

    ``p = min(1, 2 * sum_{i <= min(b, c)} C(b + c, i) / 2^(b + c))``, and 1 when ``b + c`` is 0.
    """
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


def _rate(successes: int, n: int) -> float | None:
    return 100 * successes / n if n else None


def _agent_model_order(key: tuple[str, str | None]) -> tuple[str, str]:
    return (key[0], key[1] or "")


def _category_order(category: str) -> tuple[int, str]:
    order = list(CATEGORIES)
    return (order.index(category) if category in order else len(order), category)


@dataclass(frozen=True)
class SummaryRow:
    """Success of one (agent, model, mode) within one category, tier or mode.

    Attributes:
        agent: the agent's name.
        model: the model behind the agent, or ``None``.
        group_kind: ``"category"``, ``"tier"`` or ``"mode"``.
        group: the category letter, the tier, or the mode.
        mode: the observation mode.
        n: episodes counted (infrastructure failures excluded).
        successes: counted episodes that succeeded.
        infra_failures: episodes that ended on an infrastructure fault (not in ``n``).
        credit_sum: the counted episodes' checklist credit, summed (a success is 1).
    """

    agent: str
    model: str | None
    group_kind: str
    group: str
    mode: str
    n: int
    successes: int
    infra_failures: int
    credit_sum: float = 0.0

    @property
    def credit(self) -> float | None:
        """Mean checklist credit in percent (partial credit; see ``reward_mode``)."""
        return 100 * self.credit_sum / self.n if self.n else None

    @property
    def rate(self) -> float | None:
        """Success rate in percent; ``None`` when no episode counts."""
        return _rate(self.successes, self.n)

    @property
    def interval(self) -> tuple[float, float] | None:
        """Wilson 95% interval of the rate, in percent."""
        return wilson_interval(self.successes, self.n)


def summary_rows(episodes: Iterable[dict[str, Any]]) -> list[SummaryRow]:
    """Success by mode, by tier and by category, for each (agent, model) and mode.

    Args:
        episodes: episodes as from :func:`load_episodes`.

    Returns:
        Rows of ``group_kind`` ``"mode"``, then ``"tier"``, then ``"category"``; within each,
        sorted by agent, model, mode (in :data:`~dynacu_gym.modes.MODES` order) and group.
    """
    # (agent, model, group_kind, group, mode) -> [n, successes, infra_failures, credit]
    counts: dict[tuple[str, str | None, str, str, str], list[float]] = {}
    for ep in episodes:
        for kind, group in (
            ("mode", ep["mode"]),
            ("tier", ep["tier"]),
            ("category", ep["category"]),
        ):
            if kind != "category" and is_control(ep):
                continue  # the controls are not the benchmark's mode and tier rates
            key = (ep["agent"], ep["model"], kind, group, ep["mode"])
            cell = counts.setdefault(key, [0, 0, 0, 0.0])
            if is_infra_failure(ep):
                cell[2] += 1
            else:
                cell[0] += 1
                cell[1] += int(ep["success"])
                cell[3] += float(ep.get("credit", ep["success"]))  # older lines: success

    kinds = ("mode", "tier", "category")
    group_order: dict[str, Callable[[str], tuple[int, str]]] = {
        "mode": lambda g: (MODES.index(g), g),
        "tier": lambda g: (TIERS.index(g), g),
        "category": _category_order,
    }

    def order(key: tuple[str, str | None, str, str, str]) -> tuple[Any, ...]:
        agent, model, kind, group, mode = key
        return (
            kinds.index(kind),
            _agent_model_order((agent, model)),
            MODES.index(mode),
            group_order[kind](group),
        )

    return [
        SummaryRow(agent, model, kind, group, mode, int(n), int(successes), int(infra), credit)
        for (agent, model, kind, group, mode), (n, successes, infra, credit) in sorted(
            counts.items(), key=lambda item: order(item[0])
        )
    ]


@dataclass(frozen=True)
class AblationRow:
    """Two modes compared on the same (task, repeat) episodes of one (agent, model).

    Attributes:
        agent: the agent's name.
        model: the model behind the agent, or ``None``.
        first: the first mode of the pair.
        second: the second mode of the pair.
        pairs: (task, repeat) with an episode in both modes, neither an infrastructure failure.
        first_successes: pairs whose first-mode episode succeeded.
        second_successes: pairs whose second-mode episode succeeded.
        b: pairs where the first succeeded and the second failed.
        c: pairs where the first failed and the second succeeded.
    """

    agent: str
    model: str | None
    first: str
    second: str
    pairs: int
    first_successes: int
    second_successes: int
    b: int
    c: int

    @property
    def first_rate(self) -> float:
        """Success rate of the first mode over the pairs, in percent."""
        return 100 * self.first_successes / self.pairs

    @property
    def second_rate(self) -> float:
        """Success rate of the second mode over the pairs, in percent."""
        return 100 * self.second_successes / self.pairs

    @property
    def difference_pp(self) -> float:
        """Second rate minus first rate, in percentage points (equals ``100 (c - b) / pairs``)."""
        return 100 * (self.c - self.b) / self.pairs

    @property
    def p_value(self) -> float:
        """Exact two-sided McNemar p-value of the difference."""
        return mcnemar_p(self.b, self.c)


def ablation_rows(
    episodes: Iterable[dict[str, Any]],
    pairs: Sequence[tuple[str, str]] = ABLATIONS,
) -> list[AblationRow]:
    """Paired comparisons of modes, for each (agent, model).

    Episodes of dynamic tasks are paired on (task, repeat) where both modes have an episode
    that is not an infrastructure failure. A mode pair with no paired episodes for an
    (agent, model) is left out.

    Args:
        episodes: episodes as from :func:`load_episodes`.
        pairs: the (first, second) mode pairs to compare.

    Returns:
        Rows sorted by agent and model, then in the order of ``pairs``.
    """
    # (agent, model) -> mode -> (task, repeat) -> success
    outcomes: dict[tuple[str, str | None], dict[str, dict[tuple[str, int], bool]]] = {}
    for ep in episodes:
        if is_infra_failure(ep) or is_control(ep):
            continue
        by_mode = outcomes.setdefault((ep["agent"], ep["model"]), {})
        by_mode.setdefault(ep["mode"], {})[(ep["task"], ep["repeat"])] = ep["success"]

    rows = []
    for agent_model in sorted(outcomes, key=_agent_model_order):
        by_mode = outcomes[agent_model]
        for first, second in pairs:
            a, z = by_mode.get(first, {}), by_mode.get(second, {})
            shared = a.keys() & z.keys()
            if not shared:
                continue
            rows.append(
                AblationRow(
                    agent=agent_model[0],
                    model=agent_model[1],
                    first=first,
                    second=second,
                    pairs=len(shared),
                    first_successes=sum(a[k] for k in shared),
                    second_successes=sum(z[k] for k in shared),
                    b=sum(a[k] and not z[k] for k in shared),
                    c=sum(z[k] and not a[k] for k in shared),
                )
            )
    return rows


@dataclass(frozen=True)
class ControlRow:
    """One (agent, model, mode): the dynamic tasks' success beside the static controls'.

    Attributes:
        dynamic_n, dynamic_successes: episodes of dynamic tasks counted, and their successes.
        static_n, static_successes: the same for the static controls (category S).
    """

    agent: str
    model: str | None
    mode: str
    dynamic_n: int
    dynamic_successes: int
    static_n: int
    static_successes: int

    @property
    def dynamic_rate(self) -> float | None:
        """Success on the dynamic tasks in percent; ``None`` without episodes."""
        return _rate(self.dynamic_successes, self.dynamic_n)

    @property
    def static_rate(self) -> float | None:
        """Success on the static controls in percent; ``None`` without episodes."""
        return _rate(self.static_successes, self.static_n)


def control_rows(episodes: Iterable[dict[str, Any]]) -> list[ControlRow]:
    """Per (agent, model, mode), success on the dynamic tasks and on the static controls.

    Only (agent, model)s with at least one static-control episode; infrastructure failures are
    left out. What the observation interface costs on ordinary pages is the static rate across
    modes.
    """
    counts: dict[tuple[str, str | None, str], list[int]] = {}
    agents = set()
    for ep in episodes:
        if is_infra_failure(ep):
            continue
        cell = counts.setdefault((ep["agent"], ep["model"], ep["mode"]), [0, 0, 0, 0])
        k = 2 if is_control(ep) else 0
        cell[k] += 1
        cell[k + 1] += int(ep["success"])
        if is_control(ep):
            agents.add((ep["agent"], ep["model"]))
    return [
        ControlRow(agent, model, mode, *cell)
        for (agent, model, mode), cell in sorted(
            counts.items(),
            key=lambda item: (_agent_model_order(item[0][:2]), MODES.index(item[0][2])),
        )
        if (agent, model) in agents
    ]


def _by_agent_model_mode(
    episodes: Iterable[dict[str, Any]], keep: Callable[[dict[str, Any]], bool]
) -> list[tuple[tuple[str, str | None, str], list[dict[str, Any]]]]:
    groups: dict[tuple[str, str | None, str], list[dict[str, Any]]] = {}
    for ep in episodes:
        if keep(ep):
            groups.setdefault((ep["agent"], ep["model"], ep["mode"]), []).append(ep)
    return sorted(
        groups.items(),
        key=lambda item: (_agent_model_order(item[0][:2]), MODES.index(item[0][2])),
    )


@dataclass(frozen=True)
class CompletionRow:
    """Steps and time of the successful episodes of one (agent, model, mode).

    Attributes:
        agent: the agent's name.
        model: the model behind the agent, or ``None``.
        mode: the observation mode.
        successes: successful episodes (infrastructure failures are never among them).
        median_steps: median steps of those episodes.
        median_wall_s: median wall seconds of those episodes.
    """

    agent: str
    model: str | None
    mode: str
    successes: int
    median_steps: float
    median_wall_s: float


def completion_rows(episodes: Iterable[dict[str, Any]]) -> list[CompletionRow]:
    """Median steps and wall time to completion over successful episodes.

    Args:
        episodes: episodes as from :func:`load_episodes`.

    Returns:
        One row per (agent, model, mode) with at least one success.
    """
    return [
        CompletionRow(
            agent=agent,
            model=model,
            mode=mode,
            successes=len(eps),
            median_steps=statistics.median(ep["steps"] for ep in eps),
            median_wall_s=statistics.median(ep["wall_s"] for ep in eps),
        )
        for (agent, model, mode), eps in _by_agent_model_mode(
            episodes, lambda ep: ep["success"] and not is_infra_failure(ep)
        )
    ]


@dataclass(frozen=True)
class OverheadRow:
    """What observing cost in one (agent, model, mode).

    Attributes:
        agent: the agent's name.
        model: the model behind the agent, or ``None``.
        mode: the observation mode.
        episodes: episodes counted (infrastructure failures excluded).
        perception_ms_per_step: median over episodes with steps of the episode's perception
            seconds (all channels) per step, in milliseconds; ``None`` if none took a step.
        perception_share_pct: all perception seconds over all wall seconds, in percent;
            ``None`` if no wall time was recorded.
        agent_share_pct: all agent seconds over all wall seconds, in percent; ``None`` if no
            wall time was recorded.
    """

    agent: str
    model: str | None
    mode: str
    episodes: int
    perception_ms_per_step: float | None
    perception_share_pct: float | None
    agent_share_pct: float | None


def perception_seconds(episode: dict[str, Any]) -> float:
    """Seconds an episode spent perceiving, summed over its channels."""
    return float(sum(episode["perception_s"].values()))


def overhead_rows(episodes: Iterable[dict[str, Any]]) -> list[OverheadRow]:
    """Perception time per step and as a share of wall time, and the agent's share.

    Shares are time-weighted (sums over the episodes), so long episodes weigh more; time per
    step is a median, so one stalled episode does not move it.

    Args:
        episodes: episodes as from :func:`load_episodes`.

    Returns:
        One row per (agent, model, mode) with an episode that is not an infrastructure failure.
    """
    rows = []
    for (agent, model, mode), eps in _by_agent_model_mode(
        episodes, lambda ep: not is_infra_failure(ep)
    ):
        per_step = [1000 * perception_seconds(ep) / ep["steps"] for ep in eps if ep["steps"]]
        wall = sum(ep["wall_s"] for ep in eps)
        rows.append(
            OverheadRow(
                agent=agent,
                model=model,
                mode=mode,
                episodes=len(eps),
                perception_ms_per_step=statistics.median(per_step) if per_step else None,
                perception_share_pct=(
                    100 * sum(perception_seconds(ep) for ep in eps) / wall if wall else None
                ),
                agent_share_pct=100 * sum(ep["agent_s"] for ep in eps) / wall if wall else None,
            )
        )
    return rows


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _fmt_p(p: float) -> str:
    return f"{p:.3g}"


def _model(model: str | None) -> str:
    return "-" if model is None else model


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines + [""]


def render_markdown(episodes: Sequence[dict[str, Any]]) -> str:
    """The whole report as Markdown: counts, success tables, ablations, completion, overhead.

    Args:
        episodes: episodes as from :func:`load_episodes`.

    Returns:
        Markdown text, ending with a newline.
    """
    out = ["# DynaCU benchmark report", ""]
    if not episodes:
        return "\n".join(out + ["No episodes.", ""])

    infra = [ep for ep in episodes if is_infra_failure(ep)]
    out += [f"Episodes: {len(episodes)} (infra failures: {len(infra)})", ""]
    off = [ep for ep in episodes if off_benchmark(ep)]
    if off:
        settings = sorted({f"clock={ep['clock']}, variety={ep['variety']}" for ep in off})
        out += [
            f"Not the benchmark's setting: {len(off)} episodes ran with "
            f"{'; '.join(settings)} (the benchmark runs in real time, on variant 0).",
            "",
        ]
    per_agent: dict[tuple[str, str | None], list[int]] = {}
    for ep in episodes:
        cell = per_agent.setdefault((ep["agent"], ep["model"]), [0, 0])
        cell[0] += 1
        cell[1] += int(is_infra_failure(ep))
    for (agent, model), (n, n_infra) in sorted(
        per_agent.items(), key=lambda item: _agent_model_order(item[0])
    ):
        out.append(f"- {agent} ({_model(model)}): {n} episodes, infra failures: {n_infra}")
    out += [
        "",
        "Rates leave out infrastructure failures, which are counted on their own. "
        "95% CI: Wilson score interval. Credit: the mean share of a task's checklist met "
        "(partial credit; a success is 100%, and a task without a checklist earns 100% or 0%).",
        "",
    ]

    summary = summary_rows(episodes)
    titles = {
        "mode": "Success by mode",
        "tier": "Success by tier",
        "category": "Success by category",
    }
    for kind in ("mode", "tier", "category"):
        header = ["Agent", "Model", "Mode"]
        if kind != "mode":
            header.append(kind.capitalize())
        header += ["n", "Successes", "Rate (%)", "95% CI (%)", "Credit (%)", "Infra failures"]
        rows = []
        for r in summary:
            if r.group_kind != kind:
                continue
            ci = r.interval
            row: list[Any] = [r.agent, _model(r.model), r.mode]
            if kind != "mode":
                row.append(r.group)
            row += [
                r.n,
                r.successes,
                _fmt(r.rate),
                "-" if ci is None else f"{ci[0]:.1f}-{ci[1]:.1f}",
                _fmt(r.credit),
                r.infra_failures,
            ]
            rows.append(row)
        out += [f"## {titles[kind]}", ""] + _table(header, rows)

    controls = control_rows(episodes)
    if controls:
        out += [
            "## Static controls beside the dynamic tasks",
            "",
            "The static controls (category S) have no audio and nothing moving: success on "
            "them across modes is what the observation interface costs on ordinary pages. "
            "They are not in the mode and tier rates above.",
            "",
        ]
        out += _table(
            ["Agent", "Model", "Mode", "Dynamic n", "Dynamic (%)", "Static n", "Static (%)"],
            [
                [c.agent, _model(c.model), c.mode, c.dynamic_n, _fmt(c.dynamic_rate)]
                + [c.static_n, _fmt(c.static_rate)]
                for c in controls
            ],
        )

    out += [
        "## Ablations",
        "",
        "Episodes paired on (task, repeat) where both modes have one that is not an "
        "infrastructure failure. Difference: second minus first, in percentage points. "
        "b: first succeeded, second failed; c: first failed, second succeeded. "
        "p: exact two-sided McNemar test.",
        "",
    ]
    ablations = ablation_rows(episodes)
    if ablations:
        out += _table(
            ["Agent", "Model", "First", "Second", "Pairs", "First (%)", "Second (%)"]
            + ["Difference (pp)", "b", "c", "p"],
            [
                [a.agent, _model(a.model), a.first, a.second, a.pairs, _fmt(a.first_rate)]
                + [_fmt(a.second_rate), f"{a.difference_pp:+.1f}", a.b, a.c, _fmt_p(a.p_value)]
                for a in ablations
            ],
        )
    else:
        out += ["No mode pair has paired episodes.", ""]

    out += ["## Steps and time to completion", "", "Successful episodes only.", ""]
    out += _table(
        ["Agent", "Model", "Mode", "Successes", "Median steps", "Median wall (s)"],
        [
            [r.agent, _model(r.model), r.mode, r.successes, _fmt(r.median_steps)]
            + [_fmt(r.median_wall_s)]
            for r in completion_rows(episodes)
        ],
    )

    out += [
        "## Observation overhead",
        "",
        "Perception: all channels (capture, keyframes, speech recognition, speech synthesis). "
        "Per step: median over episodes; shares: total time over total wall time.",
        "",
    ]
    out += _table(
        ["Agent", "Model", "Mode", "Episodes", "Perception (ms/step)"]
        + ["Perception (% of wall)", "Agent (% of wall)"],
        [
            [r.agent, _model(r.model), r.mode, r.episodes, _fmt(r.perception_ms_per_step)]
            + [_fmt(r.perception_share_pct), _fmt(r.agent_share_pct)]
            for r in overhead_rows(episodes)
        ],
    )

    if infra:
        counts: dict[tuple[str, str], int] = {}
        for ep in infra:
            key = (ep["mode"], ep["infra_error"].splitlines()[0][:120])
            counts[key] = counts.get(key, 0) + 1
        out += ["## Infrastructure failures", ""]
        out += _table(
            ["Mode", "Error", "Episodes"],
            [
                [mode, error.replace("|", "\\|"), n]
                for (mode, error), n in sorted(
                    counts.items(), key=lambda item: (MODES.index(item[0][0]), item[0][1])
                )
            ],
        )
    return "\n".join(out)


def _csv_number(value: float | None) -> str:
    return "" if value is None else repr(round(value, 4))


def _write_csv(path: Path, columns: Sequence[str], rows: Iterable[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as e:
        raise ImportError('charts need matplotlib; run `pip install "dynacu-gym[report]"`') from e
    # Charts are files, never windows: no display is needed or touched.
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _agent_label(agent: str, model: str | None) -> str:
    return agent if model is None else f"{agent}\n{model}"


def _grouped_bars(
    ax: Any,
    groups: Sequence[str],
    values: dict[tuple[int, str], SummaryRow],
    errors: bool,
) -> None:
    """Bars per mode within each group; each mode keeps one colour, groups show only theirs."""
    drawn: set[str] = set()
    for g in range(len(groups)):
        modes = [m for m in MODES if (g, m) in values]
        bar = 0.8 / max(len(modes), 1)
        for i, mode in enumerate(modes):
            r = values[g, mode]
            rate, ci = r.rate, r.interval
            x = g + (i - (len(modes) - 1) / 2) * bar
            yerr = None
            if errors and rate is not None and ci is not None:
                yerr = [[rate - ci[0]], [ci[1] - rate]]
            ax.bar(
                x,
                math.nan if rate is None else rate,
                bar,
                yerr=yerr,
                capsize=3,
                color=f"C{MODES.index(mode)}",
                label=None if mode in drawn else mode,
            )
            drawn.add(mode)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_xlim(-0.5, max(len(groups), 1) - 0.5)
    ax.set_ylim(0, 105)
    ax.set_ylabel("success (%)")
    if drawn:
        handles, labels = ax.get_legend_handles_labels()
        order = sorted(range(len(labels)), key=lambda i: MODES.index(labels[i]))
        ax.legend(
            [handles[i] for i in order],
            [labels[i] for i in order],
            title="mode",
            fontsize="small",
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
        )


def _chart_by_mode(plt: Any, summary: Sequence[SummaryRow], path: Path) -> None:
    rows = [r for r in summary if r.group_kind == "mode"]
    agents = sorted({(r.agent, r.model) for r in rows}, key=_agent_model_order)
    index = {agent_model: g for g, agent_model in enumerate(agents)}
    values = {(index[r.agent, r.model], r.mode): r for r in rows}

    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(agents) + 2.5), 4.5))
    _grouped_bars(ax, [_agent_label(a, m) for a, m in agents], values, errors=True)
    ax.set_title("Success by mode (95% Wilson interval; infra failures excluded)")
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
    plt.close(fig)


def _chart_by_category(plt: Any, summary: Sequence[SummaryRow], path: Path) -> None:
    rows = [r for r in summary if r.group_kind == "category"]
    agents = sorted({(r.agent, r.model) for r in rows}, key=_agent_model_order) or [("", None)]
    categories = sorted({r.group for r in rows}, key=_category_order)
    index = {category: g for g, category in enumerate(categories)}

    fig, axes = plt.subplots(
        len(agents),
        1,
        figsize=(max(6.0, 0.8 * len(categories) + 3.5), 3.5 * len(agents)),
        squeeze=False,
    )
    for (agent, model), ax in zip(agents, axes[:, 0], strict=True):
        values = {(index[r.group], r.mode): r for r in rows if (r.agent, r.model) == (agent, model)}
        _grouped_bars(ax, categories, values, errors=False)
        label = agent if model is None else f"{agent} ({model})"
        ax.set_title(f"Success by category: {label}")
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
    plt.close(fig)


def write_report(episodes: Sequence[dict[str, Any]], out_dir: str | Path) -> dict[str, Path]:
    """Write the report, its tables as CSV and its charts as PNG into ``out_dir``.

    Files: ``report.md`` (:func:`render_markdown`), ``summary.csv`` (:func:`summary_rows`;
    rates in percent, empty when no episode counts), ``ablations.csv``
    (:func:`ablation_rows`), ``success_by_mode.png`` and ``success_by_category.png``.

    Args:
        episodes: episodes as from :func:`load_episodes`.
        out_dir: the directory to write into (created if missing).

    Returns:
        Each file's name without extension (``"report"``, ``"summary"``, ``"ablations"``,
        ``"success_by_mode"``, ``"success_by_category"``) mapped to its path.

    Raises:
        ImportError: matplotlib is not installed (the ``report`` extra); nothing is written.
    """
    plt = _pyplot()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "report": out / "report.md",
        "summary": out / "summary.csv",
        "ablations": out / "ablations.csv",
        "success_by_mode": out / "success_by_mode.png",
        "success_by_category": out / "success_by_category.png",
    }

    paths["report"].write_text(render_markdown(episodes), encoding="utf-8")
    summary = summary_rows(episodes)
    _write_csv(
        paths["summary"],
        SUMMARY_COLUMNS,
        (
            {
                "agent": r.agent,
                "model": r.model or "",
                "group_kind": r.group_kind,
                "group": r.group,
                "mode": r.mode,
                "n": r.n,
                "successes": r.successes,
                "rate": _csv_number(r.rate),
                "credit": _csv_number(r.credit),
                "infra_failures": r.infra_failures,
            }
            for r in summary
        ),
    )
    _write_csv(
        paths["ablations"],
        ABLATION_COLUMNS,
        (
            {
                "agent": a.agent,
                "model": a.model or "",
                "first": a.first,
                "second": a.second,
                "pairs": a.pairs,
                "first_rate": _csv_number(a.first_rate),
                "second_rate": _csv_number(a.second_rate),
                "difference_pp": _csv_number(a.difference_pp),
                "b": a.b,
                "c": a.c,
                "p_value": repr(a.p_value),
            }
            for a in ablation_rows(episodes)
        ),
    )
    _chart_by_mode(plt, summary, paths["success_by_mode"])
    _chart_by_category(plt, summary, paths["success_by_category"])
    return paths
