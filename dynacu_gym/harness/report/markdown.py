"""The report as Markdown: one function per section."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
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
    MODES,
)

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover - Python 3.10
    pass
from dynacu_gym.harness.report.cost import Prices, cost_rows
from dynacu_gym.harness.report.tables import (
    DECOMPOSITION_MODES,
    AblationRow,
    ablation_rows,
    agent_model_order,
    audio_output_rows,
    completion_rows,
    component_ablation_rows,
    control_rows,
    decomposition_rows,
    mode_order,
    overhead_rows,
    runs_its_preset,
    summary_rows,
)


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
        {ep["mode"] for ep in episodes if not runs_its_preset(ep) and ep["mode"] in MODES},
        key=mode_order,
    )
    if older:
        n = sum(1 for ep in episodes if ep["mode"] in older and not runs_its_preset(ep))
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
        per_agent.items(), key=lambda item: agent_model_order(item[0])
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
