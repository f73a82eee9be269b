"""The report's files: report.md, one CSV per table, and the charts."""

from __future__ import annotations

import csv
import math
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
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
from dynacu_gym.harness.report.cost import COST_COLUMNS, Prices, cost_rows
from dynacu_gym.harness.report.markdown import render_markdown
from dynacu_gym.harness.report.tables import (
    ABLATION_COLUMNS,
    AUDIO_OUTPUT_COLUMNS,
    COMPONENT_ABLATION_COLUMNS,
    DECOMPOSITION_COLUMNS,
    SUMMARY_COLUMNS,
    AblationRow,
    SummaryRow,
    ablation_rows,
    agent_model_order,
    audio_output_rows,
    category_order,
    component_ablation_rows,
    decomposition_rows,
    mode_order,
    summary_rows,
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
    agents = sorted({(r.agent, r.model) for r in rows}, key=agent_model_order)
    index = {agent_model: g for g, agent_model in enumerate(agents)}
    values = {(index[r.agent, r.model], r.mode): r for r in rows}

    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(agents) + 2.5), 4.5))
    labels = [_agent_label(a, m) for a, m in agents]
    _grouped_bars(ax, labels, values, errors=True, colours=_mode_colours(rows))
    # Two lines: on one, a chart of one agent (6 in wide, its legend beside) cut the title off.
    ax.set_title("Success by mode\n(95% Wilson interval; infra failures excluded)")
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
    plt.close(fig)


def _chart_by_category(plt: Any, summary: Sequence[SummaryRow], path: Path) -> None:
    rows = [r for r in summary if r.group_kind == "category"]
    agents = sorted({(r.agent, r.model) for r in rows}, key=agent_model_order) or [("", None)]
    categories = sorted({r.group for r in rows}, key=category_order)
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
