"""The benchmark's tables, ablations and charts, computed from episode lines.

The evaluation runner writes one JSON object per episode per line, in ``*.jsonl`` files. This
module reads them back and reports success by category, tier and mode, the paired ablations
between observation modes (with an exact McNemar test), the split of the gain into format and
perception, the ablation of each channel, how well a listening page received what the agent
said, steps and time to completion, the observation overhead, and what the model calls cost
(tokens, and dollars at the prices of a price file: :func:`load_prices`)::

    from dynacu_gym.harness.report import load_episodes, write_report

    episodes = load_episodes("runs/2026-11-30")
    paths = write_report(episodes, "runs/2026-11-30/report")

It needs nothing but the episode lines (no browser, no env); charts need the ``report`` extra.

Episodes that ended on an infrastructure fault (``infra_error`` non-empty) say nothing about
the agent: they are left out of every rate, pair, median and share, and counted on their own.

The static controls (category S, no audio and nothing moving) are a control set, not the
benchmark: they have their row in success by category and their own table beside the dynamic
tasks per mode, and are left out of the success by mode and tier and of the ablations.

A mode is a preset of :data:`~dynacu_gym.modes.MODES` or any other channel set, named by its
channels joined with ``+``; tables list the presets first. Lines written before they carried
``channels`` ran the presets of that time, whose AOI modes had no element list
(:data:`PRESETS_BEFORE_CHANNELS`): they keep their mode's name in every table, and count with
the channels they ran where channels matter (the format and perception split, the ablation
of each channel).
"""

from __future__ import annotations

import csv
import json
import math
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, TypeAlias

from dynacu_gym.harness.lines import (  # noqa: F401 - the report's readers load lines from here
    BENCHMARK_SETTING,
    REQUIRED_KEYS,
    VERDICTS,
    episode_key,
    is_infra_failure,
    is_number,
    load_episodes,
    off_benchmark,
    setting_of,
)
from dynacu_gym.modes import (
    MODE_CHANNELS,
    MODES,
    check_channels,
    mode_channels,
)
from dynacu_gym.tasks import CATEGORIES, TIERS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONTROL_CATEGORY = "S"  # the static controls
# The mode pairs whose difference the benchmark exists to measure: (first, second).
ABLATIONS: tuple[tuple[str, str], ...] = (
    ("standard", "aoi_full"),
    ("aoi_visual", "aoi_audio"),
    ("aoi_visual", "aoi_full"),
    ("aoi_audio", "aoi_full"),
    ("aoi_full", "aoi_interactive"),
)
# The gain of aoi_full over standard, split in two: (step, first, second). standard_structured
# adds the element list and the record's layout and no new perception; aoi_full adds the
# perception to it.
DECOMPOSITION: tuple[tuple[str, str, str], ...] = (
    ("format", "standard", "standard_structured"),
    ("perception", "standard_structured", "aoi_full"),
    ("total", "standard", "aoi_full"),
)
DECOMPOSITION_MODES = ("standard", "standard_structured", "aoi_full")

# What a line without ``channels`` ran: the presets before the element list joined the AOI
# modes (and before standard_structured existed). Such a line keeps its mode's name.
PRESETS_BEFORE_CHANNELS: dict[str, tuple[str, ...]] = {
    "standard": (),
    "aoi_visual": ("keyframes", "narration"),
    "aoi_audio": ("transcript",),
    "aoi_full": ("keyframes", "narration", "transcript"),
    "aoi_interactive": ("keyframes", "narration", "transcript", "speech"),
}

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
DECOMPOSITION_COLUMNS = ("agent", "model", "step", *ABLATION_COLUMNS[2:])
COMPONENT_ABLATION_COLUMNS = ("agent", "model", "channel", *ABLATION_COLUMNS[2:])
AUDIO_OUTPUT_COLUMNS = (
    "agent",
    "model",
    "mode",
    "category",
    "episodes",
    "successes",
    "success_rate",
    "answers",
    "received",
    "received_pct",
    "said_accepted",
    "heard_accepted",
    "heard_accepted_pct",
    "unjudged",
)
COST_COLUMNS = (
    "agent",
    "model",
    "episodes",
    "infra_failures",
    "llm_calls",
    "steps",
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "input_tokens_per_episode",
    "output_tokens_per_episode",
    "calls_per_step",
    "agent_failures",
    "usd_per_million_input",
    "usd_per_million_output",
    "usd",
    "usd_per_episode",
)


def episode_channels(episode: dict[str, Any]) -> tuple[str, ...]:
    """The channels an episode ran with, in :data:`~dynacu_gym.modes.CHANNELS` order.

    A line that carries ``channels`` ran those; an infrastructure failure that carries them
    (perhaps ``[]``: it failed before they were wrapped) was to run its mode's channels. A line
    from before that key ran its mode's preset of the time (:data:`PRESETS_BEFORE_CHANNELS`):
    an aoi_full line of then ran keyframes, narration and transcript, without the element list.
    """
    mode = episode["mode"]
    if "channels" in episode:
        if is_infra_failure(episode):
            return mode_channels(mode)
        return check_channels(episode["channels"])
    if mode in PRESETS_BEFORE_CHANNELS:
        return PRESETS_BEFORE_CHANNELS[mode]
    return mode_channels(mode)


def mode_order(mode: str) -> tuple[int, int, str]:
    """Sort key of a mode: presets first, then other channel sets by size, then by name.

    The presets keep :data:`~dynacu_gym.modes.MODES` order.
    """
    if mode in MODES:
        return (0, MODES.index(mode), "")
    return (1, len(mode.split("+")), mode)


def is_control(episode: dict[str, Any]) -> bool:
    """Whether the episode is of a static control (category S) rather than a dynamic task."""
    return bool(episode["category"] == CONTROL_CATEGORY)


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
    group_order: dict[str, Callable[[str], tuple[Any, ...]]] = {
        "mode": lambda g: (mode_order(g), g),
        "tier": lambda g: (TIERS.index(g), g),
        "category": _category_order,
    }

    def order(key: tuple[str, str | None, str, str, str]) -> tuple[Any, ...]:
        agent, model, kind, group, mode = key
        return (
            kinds.index(kind),
            _agent_model_order((agent, model)),
            mode_order(mode),
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


# (agent, model) -> mode -> (task, repeat) -> success
_Outcomes = dict[tuple[str, str | None], dict[str, dict[tuple[str, int], bool]]]


def _paired_outcomes(
    episodes: Iterable[dict[str, Any]],
    keep: Callable[[dict[str, Any]], bool] = lambda ep: True,
) -> _Outcomes:
    """The outcomes that ablations pair: dynamic tasks, no infrastructure failures."""
    outcomes: _Outcomes = {}
    for ep in episodes:
        if is_infra_failure(ep) or is_control(ep) or not keep(ep):
            continue
        by_mode = outcomes.setdefault((ep["agent"], ep["model"]), {})
        by_mode.setdefault(ep["mode"], {})[(ep["task"], ep["repeat"])] = ep["success"]
    return outcomes


def _paired_row(
    agent_model: tuple[str, str | None],
    by_mode: dict[str, dict[tuple[str, int], bool]],
    first: str,
    second: str,
    within: set[tuple[str, int]] | None = None,
) -> AblationRow | None:
    """``first`` against ``second`` on their shared (task, repeat), or ``None`` without any.

    Args:
        agent_model: the (agent, model) the outcomes are of.
        by_mode: mode -> (task, repeat) -> success.
        first: the first mode.
        second: the second mode.
        within: if given, only these (task, repeat) are paired.
    """
    a, z = by_mode.get(first, {}), by_mode.get(second, {})
    shared = a.keys() & z.keys()
    if within is not None:
        shared &= within
    if not shared:
        return None
    return AblationRow(
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
    outcomes = _paired_outcomes(episodes)
    rows = []
    for agent_model in sorted(outcomes, key=_agent_model_order):
        for first, second in pairs:
            row = _paired_row(agent_model, outcomes[agent_model], first, second)
            if row is not None:
                rows.append(row)
    return rows


@dataclass(frozen=True)
class Decomposition:
    """The gain of aoi_full over standard for one (agent, model): format and perception.

    Attributes:
        agent: the agent's name.
        model: the model behind the agent, or ``None``.
        pairs: (task, repeat) with an episode in every one of :data:`DECOMPOSITION_MODES` that
            the (agent, model) ran, none an infrastructure failure; every rate and step is
            over these.
        successes: mode -> successes over those (task, repeat), for the modes it ran.
        steps: (step, paired comparison) for each step of :data:`DECOMPOSITION` whose two
            modes it ran, in that order.
    """

    agent: str
    model: str | None
    pairs: int
    successes: dict[str, int]
    steps: tuple[tuple[str, AblationRow], ...]

    def rate(self, mode: str) -> float | None:
        """Success rate of ``mode`` in percent; ``None`` if the (agent, model) did not run it."""
        return _rate(self.successes[mode], self.pairs) if mode in self.successes else None

    def step(self, name: str) -> AblationRow | None:
        """The comparison of step ``name`` (``"format"``, ``"perception"``, ``"total"``)."""
        return dict(self.steps).get(name)


def _runs_its_preset(episode: dict[str, Any]) -> bool:
    mode = episode["mode"]
    return mode in MODE_CHANNELS and episode_channels(episode) == MODE_CHANNELS[mode]


def decomposition_rows(episodes: Iterable[dict[str, Any]]) -> list[Decomposition]:
    """The format and perception split of the gain, for each (agent, model) that allows it.

    standard -> standard_structured is the format (the element list and the record's layout,
    no new perception), standard_structured -> aoi_full the perception, standard -> aoi_full
    the total. Episodes are those of dynamic tasks without infrastructure failure that ran
    their mode's preset as it is now: an aoi_full line from before ``channels`` (no element
    list) is left out. The (task, repeat) are those with an episode in every one of the three
    modes that the (agent, model) ran; with two of them, only their step is shown.

    Args:
        episodes: episodes as from :func:`load_episodes`.

    Returns:
        One per (agent, model) with at least two of the modes on shared (task, repeat),
        sorted by agent and model.
    """
    outcomes = _paired_outcomes(
        episodes, lambda ep: ep["mode"] in DECOMPOSITION_MODES and _runs_its_preset(ep)
    )
    rows = []
    for agent_model in sorted(outcomes, key=_agent_model_order):
        by_mode = outcomes[agent_model]
        present = [m for m in DECOMPOSITION_MODES if m in by_mode]
        if len(present) < 2:
            continue
        keys = set.intersection(*(set(by_mode[m]) for m in present))
        if not keys:
            continue
        steps = []
        for step, first, second in DECOMPOSITION:
            row = _paired_row(agent_model, by_mode, first, second, within=keys)
            if row is not None:
                steps.append((step, row))
        rows.append(
            Decomposition(
                agent=agent_model[0],
                model=agent_model[1],
                pairs=len(keys),
                successes={m: sum(by_mode[m][k] for k in keys) for m in present},
                steps=tuple(steps),
            )
        )
    return rows


@dataclass(frozen=True)
class ComponentAblationRow(AblationRow):
    """Two modes whose channel sets differ by one channel, paired as in :class:`AblationRow`.

    Attributes:
        channel: the channel the second mode has and the first lacks.
    """

    channel: str

    @property
    def label(self) -> str:
        """The difference as the report shows it: ``"+keyframes"``."""
        return f"+{self.channel}"


def component_ablation_rows(episodes: Iterable[dict[str, Any]]) -> list[ComponentAblationRow]:
    """Every pair of modes an (agent, model) ran whose channel sets differ by one channel.

    A mode's channel set is the one its episodes ran (:func:`episode_channels`); a mode whose
    episodes ran more than one (lines from before ``channels`` beside newer ones) is left
    out. Pairs in :data:`ABLATIONS`, either way round, are left out too: they have their row
    there. Pairing is that of :func:`ablation_rows`.

    Args:
        episodes: episodes as from :func:`load_episodes`.

    Returns:
        Rows with the smaller set first, sorted by agent and model, then by the first mode and
        the second (:func:`mode_order`).
    """
    episodes = list(episodes)
    outcomes = _paired_outcomes(episodes)
    channel_sets: dict[tuple[str, str | None, str], set[tuple[str, ...]]] = {}
    for ep in episodes:
        if not (is_infra_failure(ep) or is_control(ep)):
            key = (ep["agent"], ep["model"], ep["mode"])
            channel_sets.setdefault(key, set()).add(episode_channels(ep))
    fixed = set(ABLATIONS) | {(second, first) for first, second in ABLATIONS}

    rows = []
    for agent_model in sorted(outcomes, key=_agent_model_order):
        by_mode = outcomes[agent_model]
        sets: dict[str, set[str]] = {}
        for mode in by_mode:
            ran = channel_sets[agent_model[0], agent_model[1], mode]
            if len(ran) == 1:
                sets[mode] = set(next(iter(ran)))
        modes = sorted(sets, key=mode_order)
        for first in modes:
            for second in modes:
                added = sets[second] - sets[first]
                if len(added) != 1 or not sets[first] < sets[second]:
                    continue
                if (first, second) in fixed:
                    continue
                row = _paired_row(agent_model, by_mode, first, second)
                if row is not None:
                    rows.append(ComponentAblationRow(**vars(row), channel=added.pop()))
    return rows


@dataclass(frozen=True)
class AudioOutputRow:
    """How well listening pages received the answers an agent spoke, in one (agent, model, mode).

    Attributes:
        agent: the agent's name.
        model: the model behind the agent, or ``None``.
        mode: the observation mode.
        category: the category letter, or ``"all"`` for every dynamic category together.
        episodes: episodes with a spoken answer (``spoken_answers`` not empty), of dynamic
            tasks and not infrastructure failures.
        successes: those episodes that succeeded.
        answers: their spoken answers (entries of ``spoken_answers``).
        received: answers on which the page's verdict, on what its speech recogniser heard,
            was the task check's verdict on what the agent said.
        said_accepted: answers whose words the task's check accepted.
        heard_accepted: of those, the answers the page heard as accepted.
        unjudged: answers the page never judged (``heard_verdict`` null; never received).
    """

    agent: str
    model: str | None
    mode: str
    category: str
    episodes: int
    successes: int
    answers: int
    received: int
    said_accepted: int
    heard_accepted: int
    unjudged: int

    @property
    def success_rate(self) -> float | None:
        """Success of these episodes in percent; ``None`` without episodes."""
        return _rate(self.successes, self.episodes)

    @property
    def received_pct(self) -> float | None:
        """Answers received, in percent of the spoken answers; ``None`` without answers."""
        return _rate(self.received, self.answers)

    @property
    def heard_accepted_pct(self) -> float | None:
        """Accepted answers the page heard as accepted, in percent; ``None`` without any."""
        return _rate(self.heard_accepted, self.said_accepted)


def audio_output_rows(episodes: Iterable[dict[str, Any]]) -> list[AudioOutputRow]:
    """How often a listening page received what the agent said, per (agent, model, mode).

    Args:
        episodes: episodes as from :func:`load_episodes`.

    Returns:
        For each (agent, model, mode) with a spoken answer, its ``"all"`` row and then one
        row per category, in category order.
    """
    # (agent, model, mode, category) -> [episodes, successes, answers, received,
    # said_accepted, heard_accepted, unjudged]
    counts: dict[tuple[str, str | None, str, str], list[int]] = {}
    for ep in episodes:
        spoken = ep.get("spoken_answers") or []
        if not spoken or is_infra_failure(ep) or is_control(ep):
            continue
        accepted = [a for a in spoken if a["said_verdict"] == "accepted"]
        counted = (
            1,
            int(ep["success"]),
            len(spoken),
            sum(a["received"] for a in spoken),
            len(accepted),
            sum(a["heard_verdict"] == "accepted" for a in accepted),
            sum(a["heard_verdict"] is None for a in spoken),
        )
        for category in ("all", ep["category"]):
            cell = counts.setdefault((ep["agent"], ep["model"], ep["mode"], category), [0] * 7)
            cell[:] = [x + y for x, y in zip(cell, counted, strict=True)]

    def order(key: tuple[str, str | None, str, str]) -> tuple[Any, ...]:
        agent, model, mode, category = key
        return (
            _agent_model_order((agent, model)),
            mode_order(mode),
            (-1, "") if category == "all" else _category_order(category),
        )

    return [
        AudioOutputRow(agent, model, mode, category, *cell)
        for (agent, model, mode, category), cell in sorted(
            counts.items(), key=lambda item: order(item[0])
        )
    ]


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
            key=lambda item: (_agent_model_order(item[0][:2]), mode_order(item[0][2])),
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
        key=lambda item: (_agent_model_order(item[0][:2]), mode_order(item[0][2])),
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


# A price file's prices: model -> (USD per million input tokens, USD per million output tokens).
Prices: TypeAlias = dict[str, tuple[float, float]]
_PRICE_KEYS = ("input", "output")


def load_prices(path: str | Path) -> Prices:
    """Read a price file: each model's USD per million input tokens and per million output.

    JSON (``.json``) or TOML (``.toml``), by the file's suffix::

        {"gpt-4o": {"input": 2.5, "output": 10}}

        [gpt-4o]
        input = 2.5
        output = 10

    In TOML a model name with a dot is quoted (``["gpt-4.1"]``). There is no price for
    reasoning tokens: they are a part of the output tokens and billed at the output price.

    Args:
        path: the price file.

    Returns:
        Model -> (USD per million input tokens, USD per million output tokens).

    Raises:
        ValueError: the file cannot be read, its suffix is neither ``.json`` nor ``.toml``, it
            is not valid JSON or TOML, or a model's entry lacks ``input`` or ``output``, has
            another key, or holds a price that is not a finite number >= 0 (naming the file,
            the model and what was expected).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".json", ".toml"):
        raise ValueError(f"{path}: expected a price file ending in .json or .toml, got {suffix!r}")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ValueError(f"{path}: cannot read the price file ({e.strerror or e})") from e
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: expected UTF-8 text in the price file ({e})") from e
    try:
        raw = json.loads(text) if suffix == ".json" else tomllib.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from e
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: not valid TOML ({e})") from e
    expected = "'input' and 'output', in USD per million tokens"
    if not isinstance(raw, dict):
        raise ValueError(
            f"{path}: expected an object of models, each with {expected}, got {type(raw).__name__}"
        )
    prices: Prices = {}
    for model, entry in raw.items():
        at = f"{path}: model {model!r}"
        if not isinstance(entry, dict):
            raise ValueError(f"{at}: expected an object with {expected}, got {entry!r}")
        missing = [k for k in _PRICE_KEYS if k not in entry]
        if missing:
            tables = [k for k, v in entry.items() if isinstance(v, dict)]
            hint = (
                f'; in TOML a model name with a dot is quoted: ["{model}.{tables[0]}"]'
                if suffix == ".toml" and tables
                else ""
            )
            raise ValueError(
                f"{at}: missing {' and '.join(map(repr, missing))}; expected {expected}{hint}"
            )
        extra = [k for k in entry if k not in _PRICE_KEYS]
        if extra:
            raise ValueError(
                f"{at}: unexpected key(s) {', '.join(map(repr, extra))}; expected only {expected}"
                " (reasoning tokens are a part of output and billed at its price)"
            )
        for key in _PRICE_KEYS:
            value = entry[key]
            if not (is_number(value) and math.isfinite(value) and value >= 0):
                raise ValueError(
                    f"{at}: {key!r}: expected a finite number >= 0 (USD per million tokens), "
                    f"got {value!r}"
                )
        prices[model] = (float(entry["input"]), float(entry["output"]))
    return prices


@dataclass(frozen=True)
class CostRow:
    """What the model calls of one (agent, model) came to, in tokens and, when priced, dollars.

    Totals are over every line of the (agent, model), infrastructure failures included: a
    fault's line holds what was spent before it (often nothing). Means are over the episodes
    without an infrastructure failure, whose count is ``episodes``.

    Attributes:
        agent: the agent's name.
        model: the model behind the agent, or ``None``.
        episodes: episodes without an infrastructure failure (static controls included).
        infra_failures: episodes that ended on an infrastructure fault (not in ``episodes``).
        llm_calls: model calls, in total.
        steps: actions taken in ``episodes``.
        input_tokens: input tokens, in total.
        output_tokens: output tokens, in total (reasoning tokens among them).
        reasoning_tokens: the part of ``output_tokens`` the model server reported as
            reasoning, in total; ``None`` when no line reports it.
        agent_failures: episodes the agent could not go on with (``agent_failure`` not empty).
        input_tokens_per_episode: mean input tokens of ``episodes``; ``None`` without any.
        output_tokens_per_episode: mean output tokens of ``episodes``; ``None`` without any.
        calls_per_step: model calls over steps, in ``episodes``; ``None`` without steps.
        price: (USD per million input tokens, per million output), or ``None`` when the
            prices lack the model.
        usd: what the tokens cost in total, at ``price``; ``None`` without a price.
        usd_per_episode: mean cost of ``episodes``; ``None`` without a price or episodes.
    """

    agent: str
    model: str | None
    episodes: int
    infra_failures: int
    llm_calls: int
    steps: int
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int | None
    agent_failures: int
    input_tokens_per_episode: float | None
    output_tokens_per_episode: float | None
    calls_per_step: float | None
    price: tuple[float, float] | None
    usd: float | None
    usd_per_episode: float | None


def _tokens(episode: dict[str, Any], kind: str) -> int:
    return int(episode["tokens"].get(kind, 0))


def _usd(price: tuple[float, float], input_tokens: float, output_tokens: float) -> float:
    """Dollars for tokens at ``price``; reasoning is within the output tokens, never added."""
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


def cost_rows(episodes: Iterable[dict[str, Any]], prices: Prices | None = None) -> list[CostRow]:
    """Model calls, tokens and, at ``prices``, dollars, for each (agent, model) that called one.

    An (agent, model) has a row when one of its episodes made a model call; the row counts all
    its episodes, static controls and agent failures included. Infrastructure failures are
    counted apart and left out of every mean; their tokens (what was spent before the fault,
    often nothing) are in the totals, so ``usd`` is all the lines cost and ``usd_per_episode``
    what an episode without a fault cost on average. Reasoning tokens are a part of the output
    tokens: they are billed at the output price within them, never a second time.

    Args:
        episodes: episodes as from :func:`load_episodes`.
        prices: model -> (USD per million input tokens, per million output), as from
            :func:`load_prices`; a model it lacks gets no dollars.

    Returns:
        Rows sorted by agent and model.
    """
    groups: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for ep in episodes:
        groups.setdefault((ep["agent"], ep["model"]), []).append(ep)
    rows = []
    for (agent, model), eps in sorted(groups.items(), key=lambda item: _agent_model_order(item[0])):
        if not any(ep["llm_calls"] > 0 for ep in eps):
            continue
        counted = [ep for ep in eps if not is_infra_failure(ep)]
        n, steps = len(counted), sum(ep["steps"] for ep in counted)
        calls = sum(ep["llm_calls"] for ep in counted)
        input_tokens = sum(_tokens(ep, "input") for ep in eps)
        output_tokens = sum(_tokens(ep, "output") for ep in eps)
        counted_input = sum(_tokens(ep, "input") for ep in counted)
        counted_output = sum(_tokens(ep, "output") for ep in counted)
        reported = [ep for ep in eps if "reasoning" in ep["tokens"]]
        price = prices.get(model) if prices is not None and model is not None else None
        usd = usd_per_episode = None
        if price is not None:
            usd = _usd(price, input_tokens, output_tokens)
            usd_per_episode = _usd(price, counted_input, counted_output) / n if n else None
        rows.append(
            CostRow(
                agent=agent,
                model=model,
                episodes=n,
                infra_failures=len(eps) - n,
                llm_calls=sum(ep["llm_calls"] for ep in eps),
                steps=steps,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                reasoning_tokens=(
                    sum(_tokens(ep, "reasoning") for ep in reported) if reported else None
                ),
                agent_failures=sum(1 for ep in eps if ep.get("agent_failure")),  # older: none
                input_tokens_per_episode=counted_input / n if n else None,
                output_tokens_per_episode=counted_output / n if n else None,
                calls_per_step=calls / steps if steps else None,
                price=price,
                usd=usd,
                usd_per_episode=usd_per_episode,
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


def render_markdown(episodes: Sequence[dict[str, Any]], prices: Prices | None = None) -> str:
    """The whole report as Markdown, one section after another.

    Counts, success tables, the static controls, ablations, the format and perception split,
    the ablation of each channel, audio output, completion, overhead, cost and infrastructure
    failures; a section whose data the run lacks is left out.

    Args:
        episodes: episodes as from :func:`load_episodes`.
        prices: model -> (USD per million input tokens, per million output), as from
            :func:`load_prices`; without them the cost section has tokens and no dollars.

    Returns:
        Markdown text, ending with a newline.
    """
    out = ["# DynaCU benchmark report", ""]
    if not episodes:
        return "\n".join(out + ["No episodes.", ""])
    for section in (
        _overview_section,
        _success_sections,
        _controls_section,
        _ablations_section,
        _decomposition_section,
        _component_ablations_section,
        _audio_output_section,
        _completion_section,
        _overhead_section,
        lambda eps: _cost_section(eps, prices),
        _infra_section,
    ):
        out += section(episodes)
    return "\n".join(out)


def _overview_section(episodes: Sequence[dict[str, Any]]) -> list[str]:
    infra = [ep for ep in episodes if is_infra_failure(ep)]
    out = [f"Episodes: {len(episodes)} (infra failures: {len(infra)})", ""]
    off = [ep for ep in episodes if off_benchmark(ep)]
    if off:
        settings = sorted(
            {
                f"clock={ep['clock']}, variety={ep['variety']}"
                + (
                    f", max_episode_steps={ep['max_episode_steps']}"
                    if ep["max_episode_steps"]
                    else ""
                )
                for ep in off
            }
        )
        out += [
            f"Not the benchmark's setting: {len(off)} episodes ran with "
            f"{'; '.join(settings)} (the benchmark runs in real time, on variant 0, to each "
            "task's own step limit).",
            "",
        ]
    older = sorted(
        {ep["mode"] for ep in episodes if not _runs_its_preset(ep) and ep["mode"] in MODES},
        key=mode_order,
    )
    if older:
        n = sum(1 for ep in episodes if ep["mode"] in older and not _runs_its_preset(ep))
        out += [
            f"Older lines: {n} episodes of {', '.join(older)} predate the `channels` key and "
            "ran the presets of then, without the element list; they keep their mode's name, "
            "and count with the channels they ran in the format and perception split and the "
            "component ablations.",
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
    return out + [
        "",
        "Rates leave out infrastructure failures, which are counted on their own. "
        "95% CI: Wilson score interval. Credit: the mean share of a task's checklist met "
        "(partial credit; a success is 100%, and a task without a checklist earns 100% or 0%).",
        "",
    ]


def _success_sections(episodes: Sequence[dict[str, Any]]) -> list[str]:
    summary = summary_rows(episodes)
    titles = {
        "mode": "Success by mode",
        "tier": "Success by tier",
        "category": "Success by category",
    }
    out: list[str] = []
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
    return out


def _controls_section(episodes: Sequence[dict[str, Any]]) -> list[str]:
    controls = control_rows(episodes)
    if not controls:
        return []
    return [
        "## Static controls beside the dynamic tasks",
        "",
        "The static controls (category S) have no audio and nothing moving: success on "
        "them across modes is what the observation interface costs on ordinary pages. "
        "They are not in the mode and tier rates above.",
        "",
    ] + _table(
        ["Agent", "Model", "Mode", "Dynamic n", "Dynamic (%)", "Static n", "Static (%)"],
        [
            [c.agent, _model(c.model), c.mode, c.dynamic_n, _fmt(c.dynamic_rate)]
            + [c.static_n, _fmt(c.static_rate)]
            for c in controls
        ],
    )


def _paired_cells(a: AblationRow) -> list[Any]:
    return [a.first, a.second, a.pairs, _fmt(a.first_rate), _fmt(a.second_rate)] + [
        f"{a.difference_pp:+.1f}",
        a.b,
        a.c,
        _fmt_p(a.p_value),
    ]


_PAIRED_HEADER = ["First", "Second", "Pairs", "First (%)", "Second (%)", "Difference (pp)"] + [
    "b",
    "c",
    "p",
]


def _ablations_section(episodes: Sequence[dict[str, Any]]) -> list[str]:
    out = [
        "## Ablations",
        "",
        "Episodes paired on (task, repeat) where both modes have one that is not an "
        "infrastructure failure. Difference: second minus first, in percentage points. "
        "b: first succeeded, second failed; c: first failed, second succeeded. "
        "p: exact two-sided McNemar test.",
        "",
    ]
    ablations = ablation_rows(episodes)
    if not ablations:
        return out + ["No mode pair has paired episodes.", ""]
    return out + _table(
        ["Agent", "Model", *_PAIRED_HEADER],
        [[a.agent, _model(a.model), *_paired_cells(a)] for a in ablations],
    )


def _decomposition_section(episodes: Sequence[dict[str, Any]]) -> list[str]:
    rows = decomposition_rows(episodes)
    if not rows:
        return []
    out = [
        "## Format and perception",
        "",
        "The gain of aoi_full over standard in two steps: standard_structured adds the element "
        "list and the record's layout and no new perception (format), aoi_full adds keyframes, "
        "narration and the transcript to it (perception). Over the (task, repeat) with an "
        "episode in each of these modes the agent ran, none an infrastructure failure; "
        "aoi_full lines from before the element list joined it are left out. "
        "Paired as in the ablations.",
        "",
    ]
    out += _table(
        ["Agent", "Model", "Pairs", *(f"{m} (%)" for m in DECOMPOSITION_MODES)],
        [
            [d.agent, _model(d.model), d.pairs, *(_fmt(d.rate(m)) for m in DECOMPOSITION_MODES)]
            for d in rows
        ],
    )
    return out + _table(
        ["Agent", "Model", "Step", *_PAIRED_HEADER],
        [[d.agent, _model(d.model), step, *_paired_cells(a)] for d in rows for step, a in d.steps],
    )


def _component_ablations_section(episodes: Sequence[dict[str, Any]]) -> list[str]:
    rows = component_ablation_rows(episodes)
    if not rows:
        return []
    return [
        "## Component ablations",
        "",
        "Every two modes an agent ran whose channel sets differ by one channel (the channel "
        "the second adds), other than the pairs of the ablations table. Paired as there.",
        "",
    ] + _table(
        ["Agent", "Model", "Channel", *_PAIRED_HEADER],
        [[a.agent, _model(a.model), a.label, *_paired_cells(a)] for a in rows],
    )


def _audio_output_section(episodes: Sequence[dict[str, Any]]) -> list[str]:
    rows = audio_output_rows(episodes)
    if not rows:
        return []
    out = [
        "## Audio output",
        "",
        "Episodes of dynamic tasks where the agent spoke answers to a listening page (no "
        "infrastructure failures). Received: the page's verdict on what its speech recogniser "
        "heard was the task check's verdict on what the agent said. Heard as accepted: of the "
        "answers the check accepted, those the page accepted too. Unjudged: answers the page "
        "never judged. Success: of these episodes.",
        "",
    ]
    interviews = [r for r in rows if r.category == "H"]
    for r in interviews:
        out.append(
            f"- Voice interviews (H), {r.agent} ({_model(r.model)}), {r.mode}: the page received "
            f"{r.received} of {r.answers} spoken answers ({_fmt(r.received_pct)}%)."
        )
    if interviews:
        out.append("")
    return out + _table(
        ["Agent", "Model", "Mode", "Category", "Episodes", "Success (%)", "Answers"]
        + ["Received", "Received (%)", "Accepted said", "Heard as accepted"]
        + ["Heard as accepted (%)", "Unjudged"],
        [
            [r.agent, _model(r.model), r.mode, r.category, r.episodes, _fmt(r.success_rate)]
            + [r.answers, r.received, _fmt(r.received_pct), r.said_accepted, r.heard_accepted]
            + [_fmt(r.heard_accepted_pct), r.unjudged]
            for r in rows
        ],
    )


def _completion_section(episodes: Sequence[dict[str, Any]]) -> list[str]:
    return [
        "## Steps and time to completion",
        "",
        "Successful episodes only.",
        "",
    ] + _table(
        ["Agent", "Model", "Mode", "Successes", "Median steps", "Median wall (s)"],
        [
            [r.agent, _model(r.model), r.mode, r.successes, _fmt(r.median_steps)]
            + [_fmt(r.median_wall_s)]
            for r in completion_rows(episodes)
        ],
    )


def _overhead_section(episodes: Sequence[dict[str, Any]]) -> list[str]:
    return [
        "## Observation overhead",
        "",
        "Perception: all channels (capture, keyframes, speech recognition, speech synthesis). "
        "Per step: median over episodes; shares: total time over total wall time.",
        "",
    ] + _table(
        ["Agent", "Model", "Mode", "Episodes", "Perception (ms/step)"]
        + ["Perception (% of wall)", "Agent (% of wall)"],
        [
            [r.agent, _model(r.model), r.mode, r.episodes, _fmt(r.perception_ms_per_step)]
            + [_fmt(r.perception_share_pct), _fmt(r.agent_share_pct)]
            for r in overhead_rows(episodes)
        ],
    )


def _cost_section(episodes: Sequence[dict[str, Any]], prices: Prices | None) -> list[str]:
    rows = cost_rows(episodes, prices)
    if not rows:
        return []
    about = (
        "Model calls and tokens of each agent and model that called one, over all its "
        "episodes (static controls and agent failures included). Calls and tokens are totals, "
        "infrastructure failures included (what was spent before the fault, often nothing); "
        "per episode and per step are over the episodes without an infrastructure failure. "
        "Reasoning tokens are a part of the output tokens (-: the model server reported none). "
        "Agent failures: episodes the agent could not go on with (the model server refused a "
        "request, say)."
    )
    header = ["Agent", "Model", "Episodes", "Infra failures", "Model calls", "Calls per step"]
    header += ["Input tokens", "Output tokens", "Reasoning tokens", "Input per episode"]
    header += ["Output per episode", "Agent failures"]
    if prices is not None:
        about += (
            " Cost: at the price file's USD per million input and output tokens; reasoning "
            "is billed as output, within the output tokens."
        )
        header += ["Cost (USD)", "USD per episode"]
    out = ["## Cost", "", about, ""]
    table = []
    for r in rows:
        row: list[Any] = [r.agent, _model(r.model), r.episodes, r.infra_failures, r.llm_calls]
        row += [_fmt(r.calls_per_step, 2), r.input_tokens, r.output_tokens]
        row += ["-" if r.reasoning_tokens is None else r.reasoning_tokens]
        row += [_fmt(r.input_tokens_per_episode), _fmt(r.output_tokens_per_episode)]
        row += [r.agent_failures]
        if prices is not None:
            row += [_fmt(r.usd, 4), _fmt(r.usd_per_episode, 4)]
        table.append(row)
    out += _table(header, table)
    if prices is None:
        return out
    unpriced = sorted({r.model for r in rows if r.model is not None and r.price is None})
    if unpriced:
        out += [f"Not in the price file (no cost shown): {', '.join(unpriced)}.", ""]
    priced = [r for r in rows if r.usd is not None]
    if priced:
        total = sum(r.usd or 0.0 for r in priced)
        episodes_priced = sum(r.episodes + r.infra_failures for r in priced)
        out += [
            f"Total cost: {total:.4f} USD, for {episodes_priced} episodes and "
            f"{sum(r.llm_calls for r in priced)} model calls"
            + (", leaving out the models not in the price file." if unpriced else "."),
            "",
        ]
    return out


def _infra_section(episodes: Sequence[dict[str, Any]]) -> list[str]:
    counts: dict[tuple[str, str], int] = {}
    for ep in episodes:
        if is_infra_failure(ep):
            key = (ep["mode"], ep["infra_error"].splitlines()[0][:120])
            counts[key] = counts.get(key, 0) + 1
    if not counts:
        return []
    return ["## Infrastructure failures", ""] + _table(
        ["Mode", "Error", "Episodes"],
        [
            [mode, error.replace("|", "\\|"), n]
            for (mode, error), n in sorted(
                counts.items(), key=lambda item: (mode_order(item[0][0]), item[0][1])
            )
        ],
    )


def _csv_number(value: float | None, digits: int = 4) -> str:
    return "" if value is None else repr(round(value, digits))


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


def _mode_colours(summary: Sequence[SummaryRow]) -> dict[str, str]:
    """A colour per mode: a preset's is always its own, other channel sets take the next."""
    others = sorted({r.mode for r in summary if r.mode not in MODES}, key=mode_order)
    colours = {mode: f"C{i}" for i, mode in enumerate(MODES)}
    return colours | {mode: f"C{len(MODES) + i}" for i, mode in enumerate(others)}


def _grouped_bars(
    ax: Any,
    groups: Sequence[str],
    values: dict[tuple[int, str], SummaryRow],
    errors: bool,
    colours: dict[str, str],
) -> None:
    """Bars per mode within each group; each mode keeps one colour, groups show only theirs."""
    drawn: set[str] = set()
    for g in range(len(groups)):
        modes = sorted((m for group, m in values if group == g), key=mode_order)
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
                color=colours[mode],
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
        order = sorted(range(len(labels)), key=lambda i: mode_order(labels[i]))
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
    labels = [_agent_label(a, m) for a, m in agents]
    _grouped_bars(ax, labels, values, errors=True, colours=_mode_colours(rows))
    ax.set_title("Success by mode (95% Wilson interval; infra failures excluded)")
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
    plt.close(fig)


def _chart_by_category(plt: Any, summary: Sequence[SummaryRow], path: Path) -> None:
    rows = [r for r in summary if r.group_kind == "category"]
    agents = sorted({(r.agent, r.model) for r in rows}, key=_agent_model_order) or [("", None)]
    categories = sorted({r.group for r in rows}, key=_category_order)
    index = {category: g for g, category in enumerate(categories)}
    colours = _mode_colours(rows)

    fig, axes = plt.subplots(
        len(agents),
        1,
        figsize=(max(6.0, 0.8 * len(categories) + 3.5), 3.5 * len(agents)),
        squeeze=False,
    )
    for (agent, model), ax in zip(agents, axes[:, 0], strict=True):
        values = {(index[r.group], r.mode): r for r in rows if (r.agent, r.model) == (agent, model)}
        _grouped_bars(ax, categories, values, errors=False, colours=colours)
        label = agent if model is None else f"{agent} ({model})"
        ax.set_title(f"Success by category: {label}")
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
    plt.close(fig)


def _paired_csv(a: AblationRow) -> dict[str, Any]:
    """The :data:`ABLATION_COLUMNS` from ``first`` on of a paired comparison."""
    return {
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


def write_report(
    episodes: Sequence[dict[str, Any]], out_dir: str | Path, prices: Prices | None = None
) -> dict[str, Path]:
    """Write the report, its tables as CSV and its charts as PNG into ``out_dir``.

    Files (every CSV is written, with its header alone when the run lacks its data; rates and
    shares in percent, empty when nothing counts):

    - ``report.md``: :func:`render_markdown`.
    - ``summary.csv``: :func:`summary_rows`, columns :data:`SUMMARY_COLUMNS`.
    - ``ablations.csv``: the fixed pairs of :func:`ablation_rows`, :data:`ABLATION_COLUMNS`.
    - ``decomposition.csv``: the steps of :func:`decomposition_rows`, one row per (agent,
      model, step), :data:`DECOMPOSITION_COLUMNS` (``step`` is ``format``, ``perception`` or
      ``total``; each mode's rate is the ``first_rate`` or ``second_rate`` of a step).
    - ``component_ablations.csv``: :func:`component_ablation_rows`,
      :data:`COMPONENT_ABLATION_COLUMNS` (``channel``: the one the second mode adds). A file of
      its own, so that ``ablations.csv`` stays the benchmark's fixed pairs.
    - ``audio_output.csv``: :func:`audio_output_rows`, :data:`AUDIO_OUTPUT_COLUMNS`
      (``category`` is ``all`` or a category letter).
    - ``cost.csv``: :func:`cost_rows`, :data:`COST_COLUMNS` (dollars, to six decimals, and
      the prices they are at, empty for a model the prices lack or without prices).
    - ``success_by_mode.png`` and ``success_by_category.png``.

    Args:
        episodes: episodes as from :func:`load_episodes`.
        out_dir: the directory to write into (created if missing).
        prices: model -> (USD per million input tokens, per million output), as from
            :func:`load_prices`, for the cost in the report and in ``cost.csv``.

    Returns:
        Each file's name without extension (``"report"``, ``"summary"``, ``"ablations"``,
        ``"decomposition"``, ``"component_ablations"``, ``"audio_output"``, ``"cost"``,
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
        "decomposition": out / "decomposition.csv",
        "component_ablations": out / "component_ablations.csv",
        "audio_output": out / "audio_output.csv",
        "cost": out / "cost.csv",
        "success_by_mode": out / "success_by_mode.png",
        "success_by_category": out / "success_by_category.png",
    }

    paths["report"].write_text(render_markdown(episodes, prices), encoding="utf-8")
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
            {"agent": a.agent, "model": a.model or "", **_paired_csv(a)}
            for a in ablation_rows(episodes)
        ),
    )
    _write_csv(
        paths["decomposition"],
        DECOMPOSITION_COLUMNS,
        (
            {"agent": d.agent, "model": d.model or "", "step": step, **_paired_csv(a)}
            for d in decomposition_rows(episodes)
            for step, a in d.steps
        ),
    )
    _write_csv(
        paths["component_ablations"],
        COMPONENT_ABLATION_COLUMNS,
        (
            {"agent": a.agent, "model": a.model or "", "channel": a.channel, **_paired_csv(a)}
            for a in component_ablation_rows(episodes)
        ),
    )
    _write_csv(
        paths["audio_output"],
        AUDIO_OUTPUT_COLUMNS,
        (
            {
                "agent": r.agent,
                "model": r.model or "",
                "mode": r.mode,
                "category": r.category,
                "episodes": r.episodes,
                "successes": r.successes,
                "success_rate": _csv_number(r.success_rate),
                "answers": r.answers,
                "received": r.received,
                "received_pct": _csv_number(r.received_pct),
                "said_accepted": r.said_accepted,
                "heard_accepted": r.heard_accepted,
                "heard_accepted_pct": _csv_number(r.heard_accepted_pct),
                "unjudged": r.unjudged,
            }
            for r in audio_output_rows(episodes)
        ),
    )
    _write_csv(
        paths["cost"],
        COST_COLUMNS,
        (
            {
                "agent": r.agent,
                "model": r.model or "",
                "episodes": r.episodes,
                "infra_failures": r.infra_failures,
                "llm_calls": r.llm_calls,
                "steps": r.steps,
                "input_tokens": r.input_tokens,
                "output_tokens": r.output_tokens,
                "reasoning_tokens": "" if r.reasoning_tokens is None else r.reasoning_tokens,
                "input_tokens_per_episode": _csv_number(r.input_tokens_per_episode),
                "output_tokens_per_episode": _csv_number(r.output_tokens_per_episode),
                "calls_per_step": _csv_number(r.calls_per_step),
                "agent_failures": r.agent_failures,
                "usd_per_million_input": _csv_number(None if r.price is None else r.price[0], 6),
                "usd_per_million_output": _csv_number(None if r.price is None else r.price[1], 6),
                "usd": _csv_number(r.usd, 6),
                "usd_per_episode": _csv_number(r.usd_per_episode, 6),
            }
            for r in cost_rows(episodes, prices)
        ),
    )
    _chart_by_mode(plt, summary, paths["success_by_mode"])
    _chart_by_category(plt, summary, paths["success_by_category"])
    return paths
