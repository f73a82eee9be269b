"""The report's tables: each a list of rows computed from episode lines, with its statistics."""

from __future__ import annotations

import math
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

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
    pass
else:  # pragma: no cover - Python 3.10
    pass


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
    # The interval holds p; at p = 0 or 1 rounding would leave it a hair outside (1 - 1e-16).
    return (max(0.0, min(p, centre - half)) * 100, min(1.0, max(p, centre + half)) * 100)


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


def agent_model_order(key: tuple[str, str | None]) -> tuple[str, str]:
    """Sort key of an (agent, model): by agent, then model (a scripted agent's None first)."""
    return (key[0], key[1] or "")


def category_order(category: str) -> tuple[int, str]:
    """Sort key of a category: the catalogue's order, unknown ones after it by name."""
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
        "category": category_order,
    }

    def order(key: tuple[str, str | None, str, str, str]) -> tuple[Any, ...]:
        agent, model, kind, group, mode = key
        return (
            kinds.index(kind),
            agent_model_order((agent, model)),
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
    for agent_model in sorted(outcomes, key=agent_model_order):
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


def runs_its_preset(episode: dict[str, Any]) -> bool:
    """Whether an episode ran its mode's preset channels (a line from before them did not)."""
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
        episodes, lambda ep: ep["mode"] in DECOMPOSITION_MODES and runs_its_preset(ep)
    )
    rows = []
    for agent_model in sorted(outcomes, key=agent_model_order):
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
    for agent_model in sorted(outcomes, key=agent_model_order):
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
            agent_model_order((agent, model)),
            mode_order(mode),
            (-1, "") if category == "all" else category_order(category),
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
            key=lambda item: (agent_model_order(item[0][:2]), mode_order(item[0][2])),
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
        key=lambda item: (agent_model_order(item[0][:2]), mode_order(item[0][2])),
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
