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

Layout: :mod:`.tables` (each table's rows and their statistics), :mod:`.cost` (tokens and
dollars), :mod:`.markdown` (one function per section) and :mod:`.files` (the CSVs and charts);
the episode line itself is :mod:`dynacu_gym.harness.lines`.
"""

from __future__ import annotations

from dynacu_gym.harness.lines import (
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
from dynacu_gym.harness.report.cost import (
    COST_COLUMNS,
    CostRow,
    Prices,
    cost_rows,
    load_prices,
)
from dynacu_gym.harness.report.files import (
    write_report,
)
from dynacu_gym.harness.report.markdown import (
    render_markdown,
)
from dynacu_gym.harness.report.tables import (
    ABLATION_COLUMNS,
    ABLATIONS,
    AUDIO_OUTPUT_COLUMNS,
    COMPONENT_ABLATION_COLUMNS,
    CONTROL_CATEGORY,
    DECOMPOSITION,
    DECOMPOSITION_COLUMNS,
    DECOMPOSITION_MODES,
    PRESETS_BEFORE_CHANNELS,
    SUMMARY_COLUMNS,
    AblationRow,
    AudioOutputRow,
    CompletionRow,
    ComponentAblationRow,
    ControlRow,
    Decomposition,
    OverheadRow,
    SummaryRow,
    ablation_rows,
    audio_output_rows,
    completion_rows,
    component_ablation_rows,
    control_rows,
    decomposition_rows,
    episode_channels,
    is_control,
    mcnemar_p,
    mode_order,
    overhead_rows,
    perception_seconds,
    summary_rows,
    wilson_interval,
)

__all__ = [
    "ABLATIONS",
    "ABLATION_COLUMNS",
    "AUDIO_OUTPUT_COLUMNS",
    "AblationRow",
    "AudioOutputRow",
    "BENCHMARK_SETTING",
    "COMPONENT_ABLATION_COLUMNS",
    "CONTROL_CATEGORY",
    "COST_COLUMNS",
    "CompletionRow",
    "ComponentAblationRow",
    "ControlRow",
    "CostRow",
    "DECOMPOSITION",
    "DECOMPOSITION_COLUMNS",
    "DECOMPOSITION_MODES",
    "Decomposition",
    "OverheadRow",
    "PRESETS_BEFORE_CHANNELS",
    "Prices",
    "REQUIRED_KEYS",
    "SUMMARY_COLUMNS",
    "SummaryRow",
    "VERDICTS",
    "ablation_rows",
    "audio_output_rows",
    "completion_rows",
    "component_ablation_rows",
    "control_rows",
    "cost_rows",
    "decomposition_rows",
    "episode_channels",
    "episode_key",
    "is_control",
    "is_infra_failure",
    "is_number",
    "load_episodes",
    "load_prices",
    "mcnemar_p",
    "mode_order",
    "off_benchmark",
    "overhead_rows",
    "perception_seconds",
    "render_markdown",
    "setting_of",
    "summary_rows",
    "wilson_interval",
    "write_report",
]
