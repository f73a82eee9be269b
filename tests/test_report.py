"""The report on hand-made episode lines whose every number is worked out below.

tests/fixtures/episodes/ (two files, read in name order):

llm / gpt-x, repeat 0 unless said:

| task | tier   | standard                | aoi_full                               |
|------|--------|-------------------------|----------------------------------------|
| A1   | easy   | success, 10 steps, 20 s | success, 8 steps, 16 s                 |
| A4   | medium | success, 14 steps, 30 s | fail                                   |
| B1   | easy   | fail                    | success, 12 steps, 24 s                |
| B8   | hard   | fail                    | success, 20 steps, 41 s                |
| C2   | easy   | fail                    | success, 6 steps, 12 s                 |
| C5   | medium | fail                    | success, 9 steps, 18 s                 |
| D9   | hard   | fail                    | infra (run-1), then success, 15 steps, |
|      |        |                         | 30 s (run-2: the last line wins)       |
| E3   | easy   | fail                    | success, 11 steps, 22 s                |
| F1   | easy   | success, 7 steps, 11 s  | infra ("audio daemon died")            |
| A1#1 | easy   | -                       | fail                                   |

Every llm episode perceives 50 ms per step. oracle (no model), all successes:
aoi_visual A1 (5 steps, 10 s, agent 1 s, perception 0.25 s) and B1 (7 steps, 14 s, agent 2 s,
perception 0.7 s); aoi_audio A1 (4 steps, 9 s, agent 1 s, perception 0.4 s) and, in run-2,
B1 (6 steps, 13 s, agent 1.5 s, perception 0.6 s).

tests/fixtures/episodes/channels/run.jsonl (its own run: modes beyond the presets, lines from
before ``channels``, spoken answers). S success, F fail, I infra, - not run; every episode
10 steps, 20 s.

llm / model-b (lines carry ``channels``), repeat 0 unless said:

| task | standard | standard_structured | aoi_full | elements+keyframes |
|------|----------|---------------------|----------|--------------------|
| A1   | S        | S                   | S        | S                  |
| A4   | F        | S                   | S        | F                  |
| B1   | F        | F                   | S        | S                  |
| B8   | F        | F                   | S        | -                  |
| C2   | S        | F                   | S        | -                  |
| C5   | F        | S                   | F        | -                  |
| D9   | F        | F                   | S        | -                  |
| E3   | F        | S                   | S        | -                  |
| F1   | S        | I                   | S        | -                  |
| S1   | S        | S                   | F        | -                  |
| A1#1 | -        | -                   | S        | -                  |

and aoi_interactive: A1 S (nothing spoken), H1 F, H2 F, H3 S, G1 F, H4 I, with spoken answers
(field: said verdict / heard verdict):

| task | answers                                                          |
|------|------------------------------------------------------------------|
| H1   | name accepted/accepted, date accepted/rejected, phone accepted/null |
| H2   | name rejected/rejected, city accepted/accepted                   |
| H3   | email accepted/accepted                                          |
| G1   | plate accepted/rejected                                          |
| H4   | name accepted/accepted (infra: not counted)                      |

scripted (no model, with ``channels``): standard_structured A1 F, B1 S; aoi_full A1 S, B1 S.
old / gpt-x (no ``channels``: the presets before the element list): standard A1 F, B1 F;
aoi_audio A1 S, B1 F; aoi_full A1 S, B1 S.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import shutil
import sys
from pathlib import Path

import pytest

from dynacu_gym.report import (
    ABLATION_COLUMNS,
    AUDIO_OUTPUT_COLUMNS,
    COMPONENT_ABLATION_COLUMNS,
    COST_COLUMNS,
    DECOMPOSITION_COLUMNS,
    SUMMARY_COLUMNS,
    ablation_rows,
    audio_output_rows,
    completion_rows,
    component_ablation_rows,
    control_rows,
    cost_rows,
    decomposition_rows,
    episode_channels,
    load_episodes,
    load_prices,
    mcnemar_p,
    mode_order,
    overhead_rows,
    render_markdown,
    summary_rows,
    wilson_interval,
    write_report,
)

EPISODES = Path(__file__).parent / "fixtures" / "episodes"
CHANNEL_RUN = EPISODES / "channels"
LLM = ("llm", "gpt-x")
ORACLE = ("oracle", None)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def episodes() -> list[dict]:
    return load_episodes(EPISODES)


@pytest.fixture(scope="module")
def channel_run() -> list[dict]:
    return load_episodes(CHANNEL_RUN)


def _line(**changes) -> dict:
    first = (EPISODES / "run-1.jsonl").read_text().splitlines()[0]
    return {**json.loads(first), **changes}


# --- loading ---------------------------------------------------------------------------------


def test_load_dedupes_on_key_with_the_last_line_winning(episodes):
    lines = sum(
        1 for f in EPISODES.glob("*.jsonl") for line in f.read_text().splitlines() if line.strip()
    )
    assert lines == 24
    assert len(episodes) == 23
    d9 = [e for e in episodes if e["task"] == "D9" and e["mode"] == "aoi_full"]
    assert len(d9) == 1
    assert d9[0]["success"] is True and d9[0]["infra_error"] == ""
    assert d9[0]["steps"] == 15


def test_load_keeps_episodes_that_differ_only_in_repeat_or_agent(episodes):
    a1_full = sorted(e["repeat"] for e in episodes if e["task"] == "A1" and e["mode"] == "aoi_full")
    assert a1_full == [0, 1]
    assert {(e["agent"], e["model"]) for e in episodes} == {LLM, ORACLE}


def test_load_a_single_file(tmp_path):
    eps = load_episodes(EPISODES / "run-2.jsonl")
    assert [(e["task"], e["mode"]) for e in eps] == [("D9", "aoi_full"), ("B1", "aoi_audio")]


def test_later_file_wins_even_when_its_line_is_first(tmp_path):
    shutil.copy(EPISODES / "run-1.jsonl", tmp_path / "b.jsonl")
    (tmp_path / "a.jsonl").write_text(json.dumps(_line(steps=99)) + "\n")
    (tmp_path / "notes.txt").write_text("not episodes\n")
    eps = load_episodes(tmp_path)
    a1 = [e for e in eps if e["task"] == "A1" and e["mode"] == "standard"]
    assert [e["steps"] for e in a1] == [10]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json\n", r"run\.jsonl:2: not valid JSON"),
        ("[1, 2]\n", r"run\.jsonl:2: expected a JSON object, got list"),
        ("MISSING\n", r"run\.jsonl:2: missing key\(s\) 'steps'; expected every key"),
        ("STEPS\n", r"run\.jsonl:2: 'steps': expected an integer >= 0, got 'ten'"),
        ("MODE\n", r"run\.jsonl:2: 'mode': expected a mode in \('standard', 'standard_structured'"),
        (
            "NOT_CANONICAL\n",
            r"'mode': expected a mode in .* or channels joined with '\+' in the order "
            r"elements\+keyframes\+narration\+transcript\+speech, got 'keyframes\+elements'; "
            r"that channel set is called 'elements\+keyframes'",
        ),
        (
            "PRESET_BY_CHANNELS\n",
            r"got 'elements'; that channel set is called 'standard_structured'",
        ),
        ("SPEECH_ALONE\n", r"got 'speech'; the speech channel needs the transcript channel"),
        (
            "CHANNELS\n",
            r"'channels': expected the channels of mode 'aoi_full' \(\['elements', 'keyframes', "
            r"'narration', 'transcript'\]\), got \['keyframes', 'narration', 'transcript'\]",
        ),
        ("CHANNEL_NAME\n", r"'channels': unknown channel 'elemnts'; did you mean 'elements'\?"),
        ("CHANNELS_STRING\n", r"'channels': expected a list of channel names from \('elements'"),
        ("SAID\n", r"'said': expected a list of strings, got 'hello'"),
        ("SPOKEN_LIST\n", r"'spoken_answers': expected a list of objects, got \{"),
        (
            "SPOKEN_MISSING\n",
            r"'spoken_answers'\[1\]: missing key\(s\) 'heard_verdict', 'received'; expected every "
            r"key of \('field', 'said', 'said_verdict', 'heard', 'heard_verdict', 'received'\)",
        ),
        (
            "SPOKEN_VERDICT\n",
            r"'spoken_answers'\[0\]: 'said_verdict': expected 'accepted' or 'rejected', got 'yes'",
        ),
        (
            "SPOKEN_HEARD\n",
            r"'spoken_answers'\[0\]: 'heard_verdict': expected 'accepted', 'rejected' or null "
            r"\(never judged\), got 'maybe'",
        ),
        (
            "SPOKEN_RECEIVED\n",
            r"'spoken_answers'\[0\]: 'received': expected False \(whether heard_verdict None is "
            r"said_verdict 'accepted'\), got True",
        ),
        ("SUCCESS\n", r"run\.jsonl:2: 'success': expected true or false, got 1"),
        ("CLOCK\n", r"run\.jsonl:2: 'clock': expected one of \('realtime', 'paused'\)"),
        ("VARIANT\n", r"run\.jsonl:2: 'variant': expected an integer >= 0 or null, got -1"),
    ],
)
def test_a_malformed_line_names_file_line_and_what_was_expected(tmp_path, text, expected):
    missing = _line()
    del missing["steps"]
    bad = {
        "MISSING": json.dumps(missing),
        "STEPS": json.dumps(_line(steps="ten")),
        "MODE": json.dumps(_line(mode="aoi_smell")),
        "NOT_CANONICAL": json.dumps(_line(mode="keyframes+elements")),
        "PRESET_BY_CHANNELS": json.dumps(_line(mode="elements")),
        "SPEECH_ALONE": json.dumps(_line(mode="speech")),  # speech needs the transcript
        "CHANNELS": json.dumps(_line(mode="aoi_full", channels=OLD_AOI_FULL)),
        "CHANNEL_NAME": json.dumps(_line(mode="standard_structured", channels=["elemnts"])),
        "CHANNELS_STRING": json.dumps(_line(mode="standard_structured", channels="elements")),
        "SAID": json.dumps(_line(said="hello")),
        "SPOKEN_LIST": json.dumps(_line(spoken_answers=_answer())),
        "SPOKEN_MISSING": json.dumps(
            _line(
                spoken_answers=[
                    _answer(),
                    {"field": "x", "said": "y", "said_verdict": "accepted", "heard": None},
                ]
            )
        ),
        "SPOKEN_VERDICT": json.dumps(_line(spoken_answers=[_answer(said_verdict="yes")])),
        "SPOKEN_HEARD": json.dumps(_line(spoken_answers=[_answer(heard_verdict="maybe")])),
        "SPOKEN_RECEIVED": json.dumps(
            _line(spoken_answers=[_answer(heard=None, heard_verdict=None, received=True)])
        ),
        "SUCCESS": json.dumps(_line(success=1)),
        "CLOCK": json.dumps(_line(clock="fast")),
        "VARIANT": json.dumps(_line(variant=-1)),
    }
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(_line()) + "\n" + bad.get(text.strip(), text.strip()) + "\n")
    with pytest.raises(ValueError, match=expected) as info:
        load_episodes(tmp_path)
    assert str(path) in str(info.value)


OLD_AOI_FULL = ["keyframes", "narration", "transcript"]


def _answer(**changes) -> dict:
    answer = {
        "field": "name",
        "said": "Maria",
        "said_verdict": "accepted",
        "heard": "Maria",
        "heard_verdict": "accepted",
        "received": True,
    }
    return {**answer, **changes}


def test_lines_off_the_benchmarks_setting_are_named_apart(tmp_path):
    # Lines from before the clock and variety existed ran the benchmark's setting.
    (old,) = load_episodes_of(tmp_path, _line())
    assert (old["clock"], old["variety"], old["variant"]) == ("realtime", False, 0)
    assert "Not the benchmark's setting" not in render_markdown([old])
    paused = _line(task="A4", clock="paused", variety=True, variant=2)
    text = render_markdown(load_episodes_of(tmp_path, _line(), paused))
    assert (
        "Not the benchmark's setting: 1 episodes ran with clock=paused, variety=True "
        "(the benchmark runs in real time, on variant 0, to each task's own step limit)." in text
    )
    assert old["max_episode_steps"] is None
    short = _line(task="A5", max_episode_steps=3)
    text = render_markdown(load_episodes_of(tmp_path, _line(), short))
    assert "1 episodes ran with clock=realtime, variety=False, max_episode_steps=3 (" in text
    with pytest.raises(ValueError, match="'max_episode_steps': expected an integer >= 1 or null"):
        load_episodes_of(tmp_path, _line(max_episode_steps=0))


def load_episodes_of(folder: Path, *lines: dict) -> list[dict]:
    path = folder / "lines.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return load_episodes(path)


def test_a_directory_without_episode_files_is_an_error(tmp_path):
    with pytest.raises(ValueError, match=r"expected \*\.jsonl"):
        load_episodes(tmp_path)
    with pytest.raises(FileNotFoundError):
        load_episodes(tmp_path / "absent")


# --- success tables --------------------------------------------------------------------------


def _table(episodes, kind):
    return {
        (r.agent, r.mode, r.group): (r.n, r.successes, r.infra_failures)
        for r in summary_rows(episodes)
        if r.group_kind == kind
    }


def test_success_by_mode(episodes):
    assert _table(episodes, "mode") == {
        ("llm", "standard", "standard"): (9, 3, 0),
        ("llm", "aoi_full", "aoi_full"): (9, 7, 1),
        ("oracle", "aoi_visual", "aoi_visual"): (2, 2, 0),
        ("oracle", "aoi_audio", "aoi_audio"): (2, 2, 0),
    }


def test_success_by_tier(episodes):
    assert _table(episodes, "tier") == {
        ("llm", "standard", "easy"): (5, 2, 0),
        ("llm", "standard", "medium"): (2, 1, 0),
        ("llm", "standard", "hard"): (2, 0, 0),
        ("llm", "aoi_full", "easy"): (5, 4, 1),
        ("llm", "aoi_full", "medium"): (2, 1, 0),
        ("llm", "aoi_full", "hard"): (2, 2, 0),
        ("oracle", "aoi_visual", "easy"): (2, 2, 0),
        ("oracle", "aoi_audio", "easy"): (2, 2, 0),
    }


def test_success_by_category(episodes):
    assert _table(episodes, "category") == {
        ("llm", "standard", "A"): (2, 2, 0),
        ("llm", "standard", "B"): (2, 0, 0),
        ("llm", "standard", "C"): (2, 0, 0),
        ("llm", "standard", "D"): (1, 0, 0),
        ("llm", "standard", "E"): (1, 0, 0),
        ("llm", "standard", "F"): (1, 1, 0),
        ("llm", "aoi_full", "A"): (3, 1, 0),
        ("llm", "aoi_full", "B"): (2, 2, 0),
        ("llm", "aoi_full", "C"): (2, 2, 0),
        ("llm", "aoi_full", "D"): (1, 1, 0),
        ("llm", "aoi_full", "E"): (1, 1, 0),
        ("llm", "aoi_full", "F"): (0, 0, 1),
        ("oracle", "aoi_visual", "A"): (1, 1, 0),
        ("oracle", "aoi_visual", "B"): (1, 1, 0),
        ("oracle", "aoi_audio", "A"): (1, 1, 0),
        ("oracle", "aoi_audio", "B"): (1, 1, 0),
    }


def test_rates_leave_infra_failures_out_of_the_denominator(episodes):
    rows = {(r.agent, r.group_kind, r.group, r.mode): r for r in summary_rows(episodes)}
    assert rows["llm", "mode", "aoi_full", "aoi_full"].rate == pytest.approx(700 / 9)
    assert rows["llm", "mode", "standard", "standard"].rate == pytest.approx(100 / 3)
    assert rows["llm", "tier", "easy", "aoi_full"].rate == pytest.approx(80.0)
    assert rows["llm", "category", "F", "aoi_full"].rate is None
    assert rows["llm", "category", "F", "aoi_full"].interval is None


def test_credit_is_the_mean_share_of_checklists_met(tmp_path):
    lines = [
        _line(task="C10", category="C", success=True, credit=1.0, result="success"),
        _line(task="C7", category="C", success=False, credit=0.5, result="wrong_answer"),
        _line(task="C8", category="C", success=False, credit=0.25, result="timeout"),
        _line(task="C9", category="C", success=False, result="timeout"),  # no credit: 0
    ]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    rows = {(r.group_kind, r.group): r for r in summary_rows(load_episodes(path))}
    assert rows["category", "C"].rate == 25.0
    assert rows["category", "C"].credit == pytest.approx(100 * 1.75 / 4)
    path.write_text(json.dumps(_line(credit=1.5)) + "\n")
    with pytest.raises(ValueError, match="'credit': expected a number from 0 to 1, got 1.5"):
        load_episodes(path)


def test_static_controls_sit_beside_the_dynamic_tasks_not_in_their_rates(episodes, tmp_path):
    static = [
        _line(task="S1", category="S", tier="easy", mode=mode, success=ok, result="x", repeat=r)
        for mode, ok, r in (("standard", True, 0), ("standard", False, 1), ("aoi_full", True, 0))
    ]
    both = [*episodes, *static]
    rows = {(r.agent, r.group_kind, r.group, r.mode): r for r in summary_rows(both)}
    assert rows["llm", "mode", "standard", "standard"].n == 9  # as without the controls
    assert rows["llm", "tier", "easy", "standard"].n == 5
    assert rows["llm", "category", "S", "standard"].rate == 50.0
    assert ablation_rows(both) == ablation_rows(episodes)
    controls = {(c.agent, c.mode): c for c in control_rows(both)}
    assert set(controls) == {("llm", "standard"), ("llm", "aoi_full")}  # the oracle ran none
    assert (controls["llm", "standard"].static_rate, controls["llm", "aoi_full"].static_rate) == (
        50.0,
        100.0,
    )
    assert controls["llm", "aoi_full"].dynamic_rate == pytest.approx(700 / 9)
    md = render_markdown(both)
    assert "## Static controls beside the dynamic tasks" in md
    assert "| llm | gpt-x | standard | 9 | 33.3 | 2 | 50.0 |" in md.splitlines()
    assert "## Static controls" not in render_markdown(episodes)


def test_rows_are_ordered_by_kind_agent_mode_and_group(episodes):
    keys = [(r.group_kind, r.agent, r.mode, r.group) for r in summary_rows(episodes)]
    assert keys[:4] == [
        ("mode", "llm", "standard", "standard"),
        ("mode", "llm", "aoi_full", "aoi_full"),
        ("mode", "oracle", "aoi_visual", "aoi_visual"),
        ("mode", "oracle", "aoi_audio", "aoi_audio"),
    ]
    tiers = [k[3] for k in keys if k[0] == "tier" and k[1:3] == ("llm", "standard")]
    assert tiers == ["easy", "medium", "hard"]


def test_wilson_interval():
    low, high = wilson_interval(0, 10)
    z2 = 1.959963984540054**2
    assert low == 0.0
    assert high == pytest.approx(100 * z2 / (10 + z2))
    low, high = wilson_interval(5, 10)
    assert 50 - low == pytest.approx(high - 50)
    assert (low, high) == pytest.approx((23.659309, 76.340691), abs=1e-5)
    assert wilson_interval(0, 0) is None


# --- ablations -------------------------------------------------------------------------------


def test_mcnemar_exact_p():
    assert mcnemar_p(6, 1) == 0.125  # 2 * (1 + 7) / 128
    assert mcnemar_p(1, 6) == 0.125
    assert mcnemar_p(0, 10) == 2 / 1024
    assert mcnemar_p(0, 0) == 1.0
    assert mcnemar_p(5, 5) == 1.0  # 2 * 638 / 1024 > 1
    assert mcnemar_p(3, 9) == pytest.approx(2 * (1 + 12 + 66 + 220) / 4096)
    assert mcnemar_p(400, 600) == pytest.approx(2.5e-10, rel=0.5)  # no overflow at large n


def test_ablations_pair_on_task_and_repeat_without_infra_failures(episodes):
    rows = ablation_rows(episodes)
    assert [(r.agent, r.model, r.first, r.second) for r in rows] == [
        ("llm", "gpt-x", "standard", "aoi_full"),
        ("oracle", None, "aoi_visual", "aoi_audio"),
    ]
    llm, oracle = rows
    # 8 pairs: A1#0 A4 B1 B8 C2 C5 D9 E3 (F1 is infra in aoi_full; A1#1 has no standard).
    assert (llm.pairs, llm.first_successes, llm.second_successes) == (8, 2, 7)
    assert (llm.b, llm.c) == (1, 6)
    assert llm.first_rate == 25.0 and llm.second_rate == 87.5
    assert llm.difference_pp == 62.5
    assert llm.p_value == 0.125
    assert (oracle.pairs, oracle.b, oracle.c, oracle.difference_pp) == (2, 0, 0, 0.0)
    assert oracle.p_value == 1.0


# --- completion and overhead -----------------------------------------------------------------


def test_median_steps_and_time_of_successes(episodes):
    rows = {(r.agent, r.mode): r for r in completion_rows(episodes)}
    assert set(rows) == {
        ("llm", "standard"),
        ("llm", "aoi_full"),
        ("oracle", "aoi_visual"),
        ("oracle", "aoi_audio"),
    }
    got = {k: (r.successes, r.median_steps, r.median_wall_s) for k, r in rows.items()}
    assert got["llm", "standard"] == (3, 10, 20.0)  # 7 10 14 steps; 11 20 30 s
    assert got["llm", "aoi_full"] == (7, 11, 22.0)  # 6 8 9 11 12 15 20; 12 16 18 22 24 30 41
    assert got["oracle", "aoi_visual"] == (2, 6.0, 12.0)
    assert got["oracle", "aoi_audio"] == (2, 5.0, 11.0)


def test_observation_overhead(episodes):
    rows = {(r.agent, r.mode): r for r in overhead_rows(episodes)}
    visual = rows["oracle", "aoi_visual"]
    assert visual.episodes == 2
    assert visual.perception_ms_per_step == pytest.approx(75.0)  # median of 50 and 100
    assert visual.perception_share_pct == pytest.approx(100 * 0.95 / 24)
    assert visual.agent_share_pct == pytest.approx(12.5)
    audio = rows["oracle", "aoi_audio"]
    assert audio.perception_ms_per_step == pytest.approx(100.0)
    assert audio.agent_share_pct == pytest.approx(100 * 2.5 / 22)
    standard = rows["llm", "standard"]
    assert standard.episodes == 9
    assert standard.perception_ms_per_step == pytest.approx(50.0)
    assert standard.perception_share_pct == pytest.approx(100 * 13.55 / 601)
    assert standard.agent_share_pct == pytest.approx(100 * 135 / 601)
    full = rows["llm", "aoi_full"]
    assert full.episodes == 9  # F1 (infra) left out
    # wall: 16 90 24 41 12 18 30 22 60; agent: 4 20 6 10 3 4.5 7.5 5.5 15
    assert full.perception_share_pct == pytest.approx(100 * 7.55 / 313)
    assert full.agent_share_pct == pytest.approx(100 * 75.5 / 313)


# --- Markdown --------------------------------------------------------------------------------


def test_markdown_has_every_section_and_the_expected_rows(episodes):
    md = render_markdown(episodes)
    for heading in (
        "# DynaCU benchmark report",
        "## Success by mode",
        "## Success by tier",
        "## Success by category",
        "## Ablations",
        "## Steps and time to completion",
        "## Observation overhead",
        "## Infrastructure failures",
    ):
        assert f"\n{heading}\n" in f"\n{md}"
    lines = md.splitlines()
    assert "Episodes: 23 (infra failures: 1)" in lines
    assert "- llm (gpt-x): 19 episodes, infra failures: 1" in lines
    assert "- oracle (-): 4 episodes, infra failures: 0" in lines
    # These lines have no checklist credit: a success is full credit, so credit = rate.
    assert "| llm | gpt-x | aoi_full | 9 | 7 | 77.8 | 45.3-93.7 | 77.8 | 1 |" in lines
    assert "| llm | gpt-x | standard | medium | 2 | 1 | 50.0 | 9.5-90.5 | 50.0 | 0 |" in lines
    assert "| llm | gpt-x | aoi_full | F | 0 | 0 | - | - | - | 1 |" in lines
    row = "| llm | gpt-x | standard | aoi_full | 8 | 25.0 | 87.5 | +62.5 | 1 | 6 | 0.125 |"
    assert row in lines
    assert "| oracle | - | aoi_visual | aoi_audio | 2 | 100.0 | 100.0 | +0.0 | 0 | 0 | 1 |" in lines
    assert "| llm | gpt-x | aoi_full | 7 | 11.0 | 22.0 |" in lines
    assert "| oracle | - | aoi_visual | 2 | 75.0 | 4.0 | 12.5 |" in lines
    assert "| aoi_full | audio daemon died | 1 |" in lines
    assert "browser closed" not in md  # D9's infra line was replaced


def test_markdown_of_nothing():
    assert "No episodes." in render_markdown([])


# --- files -----------------------------------------------------------------------------------


def test_write_report_files(episodes, tmp_path):
    paths = write_report(episodes, tmp_path / "out")
    assert set(paths) == {
        "report",
        "summary",
        "ablations",
        "decomposition",
        "component_ablations",
        "audio_output",
        "cost",
        "success_by_mode",
        "success_by_category",
    }
    assert paths["report"].read_text() == render_markdown(episodes)
    for name in ("success_by_mode", "success_by_category"):
        assert paths[name].name == f"{name}.png"
        assert paths[name].read_bytes()[:8] == PNG_SIGNATURE
        assert paths[name].stat().st_size > 5000

    with paths["summary"].open(newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == SUMMARY_COLUMNS
        summary = list(reader)
    assert len(summary) == len(summary_rows(episodes)) == 4 + 8 + 16
    by_key = {(r["agent"], r["group_kind"], r["group"], r["mode"]): r for r in summary}
    full = by_key["llm", "mode", "aoi_full", "aoi_full"]
    assert full["model"] == "gpt-x"
    assert (int(full["n"]), int(full["successes"]), int(full["infra_failures"])) == (9, 7, 1)
    assert float(full["rate"]) == round(700 / 9, 4)
    assert float(by_key["llm", "tier", "easy", "standard"]["rate"]) == 40.0
    assert by_key["llm", "category", "F", "aoi_full"]["rate"] == ""
    assert by_key["oracle", "mode", "aoi_audio", "aoi_audio"]["model"] == ""

    with paths["ablations"].open(newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == ABLATION_COLUMNS
        ablations = list(reader)
    assert [(r["agent"], r["model"], r["first"], r["second"]) for r in ablations] == [
        ("llm", "gpt-x", "standard", "aoi_full"),
        ("oracle", "", "aoi_visual", "aoi_audio"),
    ]
    llm, oracle = ablations
    assert int(llm["pairs"]) == 8
    assert (float(llm["first_rate"]), float(llm["second_rate"])) == (25.0, 87.5)
    assert float(llm["difference_pp"]) == 62.5
    assert (int(llm["b"]), int(llm["c"])) == (1, 6)
    assert float(llm["p_value"]) == 0.125
    assert float(oracle["p_value"]) == 1.0
    assert math.isclose(float(oracle["difference_pp"]), 0.0)


def test_write_report_without_matplotlib_says_what_to_install(episodes, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r'pip install "dynacu-gym\[report\]"'):
        write_report(episodes, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_interval_holds_the_rate_even_where_rounding_would_leave_it_out():
    # At 10 of 10 the upper bound came out 99.99999999999999 and the chart's error bar negative.
    for n in range(1, 61):
        for successes in range(n + 1):
            low, high = wilson_interval(successes, n)
            assert 0.0 <= low <= 100 * successes / n <= high <= 100.0, (successes, n)


def test_write_report_of_a_run_that_always_succeeds_draws_its_charts(tmp_path):
    lines = [_line(task=f"A{k}", repeat=0, success=True, reward=1.0) for k in range(1, 11)]
    paths = write_report(lines, tmp_path)
    assert paths["success_by_mode"].read_bytes()[:8] == PNG_SIGNATURE


def test_write_report_of_nothing_still_writes_every_file(tmp_path):
    paths = write_report([], tmp_path)
    assert "No episodes." in paths["report"].read_text()
    assert paths["summary"].read_text().strip() == ",".join(SUMMARY_COLUMNS)
    assert paths["ablations"].read_text().strip() == ",".join(ABLATION_COLUMNS)
    assert paths["decomposition"].read_text().strip() == ",".join(DECOMPOSITION_COLUMNS)
    assert paths["component_ablations"].read_text().strip() == ",".join(COMPONENT_ABLATION_COLUMNS)
    assert paths["audio_output"].read_text().strip() == ",".join(AUDIO_OUTPUT_COLUMNS)
    assert paths["success_by_category"].read_bytes()[:8] == PNG_SIGNATURE


# --- modes beyond the presets, and lines from before ``channels`` ----------------------------


def test_modes_are_presets_then_other_channel_sets_by_size_and_name():
    modes = ["elements+keyframes+transcript", "aoi_full", "keyframes", "elements+keyframes"]
    assert sorted([*modes, "standard", "standard_structured"], key=mode_order) == [
        "standard",
        "standard_structured",
        "aoi_full",
        "keyframes",
        "elements+keyframes",
        "elements+keyframes+transcript",
    ]


def test_a_channel_set_that_is_no_preset_is_a_mode_of_its_own(channel_run):
    modes = [r.mode for r in summary_rows(channel_run) if r.group_kind == "mode"]
    assert modes[:5] == [
        "standard",
        "standard_structured",
        "aoi_full",
        "aoi_interactive",
        "elements+keyframes",
    ]
    rows = {(r.agent, r.mode): r for r in summary_rows(channel_run) if r.group_kind == "mode"}
    assert (rows["llm", "elements+keyframes"].n, rows["llm", "elements+keyframes"].successes) == (
        3,
        2,
    )


def test_lines_without_channels_ran_the_presets_of_then(channel_run):
    old = {ep["mode"]: episode_channels(ep) for ep in channel_run if ep["agent"] == "old"}
    assert old == {
        "standard": (),
        "aoi_audio": ("transcript",),
        "aoi_full": ("keyframes", "narration", "transcript"),
    }
    new = next(ep for ep in channel_run if ep["agent"] == "llm" and ep["mode"] == "aoi_full")
    assert episode_channels(new) == ("elements", "keyframes", "narration", "transcript")
    # They keep their mode's name in the tables and the fixed ablations...
    assert [
        (a.first, a.second, a.pairs, a.c) for a in ablation_rows(channel_run) if a.agent == "old"
    ] == [
        ("standard", "aoi_full", 2, 2),
        ("aoi_audio", "aoi_full", 2, 1),
    ]
    # ... and are named apart, once, where channels matter.
    md = render_markdown(channel_run)
    assert (
        "Older lines: 4 episodes of aoi_audio, aoi_full predate the `channels` key and ran the "
        "presets of then, without the element list;" in md
    )
    # An old standard line ran what standard runs now; a new aoi_full line says what it ran.
    new_full = _line(task="A4", mode="aoi_full", channels=["elements", *OLD_AOI_FULL])
    assert "Older lines" not in render_markdown([_line(), new_full])


# --- format and perception -------------------------------------------------------------------


def test_the_gain_splits_into_format_and_perception(channel_run):
    rows = {(d.agent, d.model): d for d in decomposition_rows(channel_run)}
    # old has standard only: its aoi_full lines ran without the element list.
    assert set(rows) == {("llm", "model-b"), ("scripted", None)}
    llm = rows["llm", "model-b"]
    # A1 A4 B1 B8 C2 C5 D9 E3: F1 is infra in standard_structured, S1 a control, A1#1 in
    # aoi_full alone.
    assert llm.pairs == 8
    assert llm.successes == {"standard": 2, "standard_structured": 4, "aoi_full": 7}
    assert (llm.rate("standard"), llm.rate("standard_structured"), llm.rate("aoi_full")) == (
        25.0,
        50.0,
        87.5,
    )
    got = {
        step: (a.first, a.second, a.pairs, a.b, a.c, a.difference_pp, a.p_value)
        for step, a in llm.steps
    }
    assert got == {
        "format": ("standard", "standard_structured", 8, 1, 3, 25.0, 0.625),  # b C2; c A4 C5 E3
        "perception": ("standard_structured", "aoi_full", 8, 1, 4, 37.5, 0.375),  # b C5
        "total": ("standard", "aoi_full", 8, 0, 5, 62.5, 0.0625),
    }
    assert [step for step, _ in llm.steps] == ["format", "perception", "total"]


def test_with_two_of_the_three_modes_only_their_step_shows(channel_run):
    (scripted,) = [d for d in decomposition_rows(channel_run) if d.agent == "scripted"]
    assert [step for step, _ in scripted.steps] == ["perception"]
    assert scripted.step("format") is None and scripted.rate("standard") is None
    perception = scripted.step("perception")
    assert perception is not None
    assert (perception.pairs, perception.b, perception.c, perception.p_value) == (2, 0, 1, 1.0)
    assert (scripted.rate("standard_structured"), scripted.rate("aoi_full")) == (50.0, 100.0)


def test_the_split_needs_the_presets_as_they_are_now(tmp_path):
    # An aoi_full line from before channels has no element list: not the perception step.
    lines = [
        _line(task="A1", mode="standard_structured", channels=["elements"], success=False),
        _line(task="A1", mode="aoi_full", success=True),
    ]
    assert decomposition_rows(load_episodes_of(tmp_path, *lines)) == []
    lines[1]["channels"] = ["elements", "keyframes", "narration", "transcript"]
    (row,) = decomposition_rows(load_episodes_of(tmp_path, *lines))
    assert [(step, a.c) for step, a in row.steps] == [("perception", 1)]


# --- component ablations ---------------------------------------------------------------------


def test_modes_one_channel_apart_are_paired(channel_run):
    rows = component_ablation_rows(channel_run)
    got = [
        (r.agent, r.label, r.first, r.second, r.pairs, r.first_successes, r.second_successes)
        + (r.b, r.c, r.p_value)
        for r in rows
    ]
    assert got == [
        ("llm", "+elements", "standard", "standard_structured", 8, 2, 4, 1, 3, 0.625),
        ("llm", "+keyframes", "standard_structured", "elements+keyframes", 3, 2, 2, 1, 1, 1.0),
        # Old presets: standard and aoi_audio were one channel apart (now two: elements too).
        ("old", "+transcript", "standard", "aoi_audio", 2, 0, 1, 0, 1, 1.0),
    ]
    pairs = {(r.agent, r.first, r.second) for r in rows}
    # Two channels apart (narration, transcript) and present on A1 A4 B1: no row.
    assert ("llm", "elements+keyframes", "aoi_full") not in pairs
    assert ("llm", "standard", "elements+keyframes") not in pairs
    # One channel apart but a fixed ablation: its row is in ablation_rows alone.
    assert ("llm", "aoi_full", "aoi_interactive") not in pairs
    fixed = [(a.agent, a.first, a.second) for a in ablation_rows(channel_run)]
    assert ("llm", "aoi_full", "aoi_interactive") in fixed


def test_an_infra_failure_may_say_it_ran_no_channels(tmp_path):
    # The runner writes channels [] when the fault came before the channels were wrapped.
    line = _line(mode="aoi_full", channels=[], infra_error="browser closed", success=False)
    (ep,) = load_episodes_of(tmp_path, line)
    assert episode_channels(ep) == ("elements", "keyframes", "narration", "transcript")
    assert "Older lines" not in render_markdown([ep])
    with pytest.raises(ValueError, match=r"'channels': expected the channels of mode 'aoi_full'"):
        load_episodes_of(tmp_path, {**line, "infra_error": ""})


def test_a_mode_whose_lines_ran_two_channel_sets_is_left_out(tmp_path):
    lines = [
        _line(task="A1", mode="standard", success=False),
        _line(task="A4", mode="standard", success=False),
        _line(task="A1", mode="aoi_audio", success=True),  # old: transcript alone
        _line(task="A4", mode="aoi_audio", channels=["elements", "transcript"], success=True),
    ]
    assert component_ablation_rows(load_episodes_of(tmp_path, *lines)) == []
    (row,) = component_ablation_rows(load_episodes_of(tmp_path, *lines[:3]))
    assert (row.channel, row.pairs, row.c) == ("transcript", 1, 1)


# --- audio output ----------------------------------------------------------------------------


def test_how_often_the_page_received_the_spoken_answers(channel_run):
    rows = {(r.agent, r.mode, r.category): r for r in audio_output_rows(channel_run)}
    assert list(rows) == [
        ("llm", "aoi_interactive", "all"),
        ("llm", "aoi_interactive", "G"),
        ("llm", "aoi_interactive", "H"),
    ]

    def counts(r):
        return (r.episodes, r.successes, r.answers, r.received)

    def verdicts(r):
        return (r.said_accepted, r.heard_accepted, r.unjudged)

    # H4 is infra and A1 spoke nothing: neither counts. received: H1 name, H2 name (rejected
    # and heard as rejected), H2 city, H3 email.
    everything = rows["llm", "aoi_interactive", "all"]
    assert counts(everything) == (4, 1, 7, 4)
    assert verdicts(everything) == (6, 3, 1)  # accepted said: H1 x3, H2 city, H3, G1
    assert everything.received_pct == pytest.approx(400 / 7)
    assert everything.heard_accepted_pct == 50.0
    assert everything.success_rate == 25.0
    interviews = rows["llm", "aoi_interactive", "H"]
    assert counts(interviews) == (3, 1, 6, 4)
    assert verdicts(interviews) == (5, 3, 1)  # H1's phone was never judged
    assert interviews.received_pct == pytest.approx(200 / 3)
    assert interviews.heard_accepted_pct == 60.0
    call = rows["llm", "aoi_interactive", "G"]
    assert (counts(call), verdicts(call), call.received_pct) == ((1, 0, 1, 0), (1, 0, 0), 0.0)


def test_no_spoken_answers_no_audio_output(episodes):
    assert audio_output_rows(episodes) == []
    assert decomposition_rows(episodes) == []
    assert component_ablation_rows(episodes) == []
    md = render_markdown(episodes)
    for heading in ("## Format and perception", "## Component ablations", "## Audio output"):
        assert heading not in md


def test_markdown_of_the_new_sections(channel_run):
    lines = render_markdown(channel_run).splitlines()
    assert "| llm | model-b | 8 | 25.0 | 50.0 | 87.5 |" in lines
    assert "| scripted | - | 2 | - | 50.0 | 100.0 |" in lines
    assert (
        "| llm | model-b | perception | standard_structured | aoi_full | 8 | 50.0 | 87.5 | +37.5 "
        "| 1 | 4 | 0.375 |" in lines
    )
    assert (
        "| llm | model-b | +keyframes | standard_structured | elements+keyframes | 3 | 66.7 "
        "| 66.7 | +0.0 | 1 | 1 | 1 |" in lines
    )
    assert (
        "| llm | model-b | aoi_interactive | H | 3 | 33.3 | 6 | 4 | 66.7 | 5 | 3 | 60.0 | 1 |"
        in lines
    )
    assert (
        "- Voice interviews (H), llm (model-b), aoi_interactive: the page received 4 of 6 "
        "spoken answers (66.7%)." in lines
    )
    order = [line for line in lines if line.startswith("## ")]
    assert order.index("## Ablations") < order.index("## Format and perception")
    assert order.index("## Component ablations") < order.index("## Audio output")
    assert order.index("## Audio output") < order.index("## Steps and time to completion")


def test_write_report_csvs_of_the_new_tables(channel_run, tmp_path):
    paths = write_report(channel_run, tmp_path)

    def read(name, columns):
        with paths[name].open(newline="") as f:
            reader = csv.DictReader(f)
            assert tuple(reader.fieldnames or ()) == columns
            return list(reader)

    decomposition = read("decomposition", DECOMPOSITION_COLUMNS)
    assert [(r["agent"], r["model"], r["step"]) for r in decomposition] == [
        ("llm", "model-b", "format"),
        ("llm", "model-b", "perception"),
        ("llm", "model-b", "total"),
        ("scripted", "", "perception"),
    ]
    total = decomposition[2]
    assert (total["first"], total["second"], total["pairs"]) == ("standard", "aoi_full", "8")
    assert (float(total["first_rate"]), float(total["second_rate"])) == (25.0, 87.5)
    assert (total["b"], total["c"], float(total["p_value"])) == ("0", "5", 0.0625)

    components = read("component_ablations", COMPONENT_ABLATION_COLUMNS)
    assert [(r["agent"], r["channel"], r["first"], r["second"]) for r in components] == [
        ("llm", "elements", "standard", "standard_structured"),
        ("llm", "keyframes", "standard_structured", "elements+keyframes"),
        ("old", "transcript", "standard", "aoi_audio"),
    ]
    assert float(components[1]["first_rate"]) == round(200 / 3, 4)

    audio = read("audio_output", AUDIO_OUTPUT_COLUMNS)
    assert [(r["mode"], r["category"]) for r in audio] == [
        ("aoi_interactive", "all"),
        ("aoi_interactive", "G"),
        ("aoi_interactive", "H"),
    ]
    h = audio[2]
    assert [h[k] for k in ("episodes", "successes", "answers", "received")] == ["3", "1", "6", "4"]
    assert [h[k] for k in ("said_accepted", "heard_accepted", "unjudged")] == ["5", "3", "1"]
    assert (float(h["received_pct"]), float(h["heard_accepted_pct"])) == (66.6667, 60.0)
    assert float(h["success_rate"]) == 33.3333


def test_heard_as_accepted_counts_only_answers_the_check_accepted(tmp_path):
    answers = [
        _answer(field="colour", said="blue", said_verdict="rejected", received=False),
        _answer(),  # accepted, heard as accepted
        _answer(field="age", said_verdict="rejected", heard_verdict=None, received=False),
    ]
    line = _line(task="H5", category="H", mode="aoi_interactive", spoken_answers=answers)
    (everything, interviews) = audio_output_rows(load_episodes_of(tmp_path, line))
    assert (interviews.category, interviews.answers, interviews.received) == ("H", 3, 1)
    assert (interviews.said_accepted, interviews.heard_accepted, interviews.unjudged) == (1, 1, 1)
    assert everything == dataclasses.replace(interviews, category="all")
    control = _line(task="S1", category="S", mode="aoi_interactive", spoken_answers=answers)
    assert audio_output_rows(load_episodes_of(tmp_path, control)) == []


# --- cost ------------------------------------------------------------------------------------
#
# llm / gpt-x: A1 10 calls, 10 steps, 1000 in / 100 out (no reasoning key, as in older lines);
# A4 6 calls, 5 steps, 3000 / 500 of which 200 reasoning, then the server refused (an agent
# failure); B1 an infrastructure failure (nothing spent). llm / model-b: A1 8 calls, 4 steps,
# 2000 / 900 (600 reasoning); B1 2 calls, 2 steps, 500 / 100 (0 reasoning). scripted (no model):
# A1, no calls. Prices in USD per million input / output tokens: gpt-x 2.5 / 10, model-b 2 / 4.
# gpt-x: 4000 * 2.5 + 600 * 10 = 16000 -> 0.016 USD, over its 2 episodes without a fault 0.008;
# billing the 200 reasoning tokens a second time would make it 0.018.
# model-b: 2500 * 2 + 1000 * 4 = 9000 -> 0.009 USD, 0.0045 per episode.

REFUSED = "HTTP 400: the request is longer than the model's context"
PRICES = {"gpt-x": (2.5, 10.0), "model-b": (2.0, 4.0)}
COST_HEADER = (
    "| Agent | Model | Episodes | Infra failures | Model calls | Calls per step | Input tokens "
    "| Output tokens | Reasoning tokens | Input per episode | Output per episode "
    "| Agent failures |"
)
GPT_X_ROW = "| llm | gpt-x | 2 | 1 | 16 | 1.07 | 4000 | 600 | 200 | 2000.0 | 300.0 | 1 |"
MODEL_B_ROW = "| llm | model-b | 2 | 0 | 10 | 1.67 | 2500 | 1000 | 600 | 1250.0 | 500.0 | 0 |"


def _cost_run(folder: Path) -> list[dict]:
    return load_episodes_of(
        folder,
        _line(),
        _line(
            task="A4",
            tier="medium",
            success=False,
            reward=0.0,
            result="agent_failure",
            steps=5,
            llm_calls=6,
            tokens={"input": 3000, "output": 500, "reasoning": 200},
            agent_failure=REFUSED,
        ),
        _line(
            task="B1",
            category="B",
            success=False,
            reward=0.0,
            result="infra_error",
            steps=0,
            wall_s=0.0,
            agent_s=0.0,
            perception_s={},
            tokens={"input": 0, "output": 0},
            llm_calls=0,
            infra_error="BrowserError: the page crashed",
            agent_failure="",
        ),
        _line(
            model="model-b",
            steps=4,
            llm_calls=8,
            tokens={"input": 2000, "output": 900, "reasoning": 600},
        ),
        _line(
            task="B1",
            category="B",
            model="model-b",
            steps=2,
            llm_calls=2,
            tokens={"input": 500, "output": 100, "reasoning": 0},
        ),
        _line(agent="scripted", model=None, llm_calls=0, tokens={}),
    )


def test_cost_rows_count_calls_tokens_failures_and_dollars(tmp_path):
    gpt_x, model_b = cost_rows(_cost_run(tmp_path), PRICES)  # scripted made no call: no row
    assert dataclasses.asdict(gpt_x) == {
        "agent": "llm",
        "model": "gpt-x",
        "episodes": 2,
        "infra_failures": 1,
        "llm_calls": 16,
        "steps": 15,
        "input_tokens": 4000,
        "output_tokens": 600,
        "reasoning_tokens": 200,
        "agent_failures": 1,
        "input_tokens_per_episode": 2000.0,
        "output_tokens_per_episode": 300.0,
        "calls_per_step": 16 / 15,
        "price": (2.5, 10.0),
        "usd": 0.016,
        "usd_per_episode": 0.008,
    }
    assert dataclasses.asdict(model_b) == {
        "agent": "llm",
        "model": "model-b",
        "episodes": 2,
        "infra_failures": 0,
        "llm_calls": 10,
        "steps": 6,
        "input_tokens": 2500,
        "output_tokens": 1000,
        "reasoning_tokens": 600,
        "agent_failures": 0,
        "input_tokens_per_episode": 1250.0,
        "output_tokens_per_episode": 500.0,
        "calls_per_step": 10 / 6,
        "price": (2.0, 4.0),
        "usd": 0.009,
        "usd_per_episode": 0.0045,
    }


def test_cost_without_prices_has_tokens_and_no_dollars(tmp_path):
    episodes = _cost_run(tmp_path)
    rows = cost_rows(episodes)
    assert [(r.model, r.price, r.usd, r.usd_per_episode) for r in rows] == [
        ("gpt-x", None, None, None),
        ("model-b", None, None, None),
    ]
    lines = render_markdown(episodes).splitlines()
    section = lines[lines.index("## Cost") :]
    assert COST_HEADER in section
    assert GPT_X_ROW in section
    assert MODEL_B_ROW in section
    assert not any("USD" in line or "price file" in line for line in section)


def test_cost_section_with_prices(tmp_path):
    lines = render_markdown(_cost_run(tmp_path), PRICES).splitlines()
    section = lines[lines.index("## Cost") : lines.index("## Infrastructure failures")]
    assert lines.index("## Observation overhead") < lines.index("## Cost")
    assert COST_HEADER[:-1] + "| Cost (USD) | USD per episode |" in section
    assert GPT_X_ROW + " 0.0160 | 0.0080 |" in section
    assert MODEL_B_ROW + " 0.0090 | 0.0045 |" in section
    assert "Total cost: 0.0250 USD, for 5 episodes and 26 model calls." in section
    assert "scripted" not in "\n".join(section)
    assert not any("Not in the price file" in line for line in section)


def test_a_model_missing_from_the_prices_is_named(tmp_path):
    lines = render_markdown(_cost_run(tmp_path), {"gpt-x": (2.5, 10.0)}).splitlines()
    assert GPT_X_ROW + " 0.0160 | 0.0080 |" in lines
    assert MODEL_B_ROW + " - | - |" in lines
    assert "Not in the price file (no cost shown): model-b." in lines
    assert (
        "Total cost: 0.0160 USD, for 3 episodes and 16 model calls, leaving out the models "
        "not in the price file." in lines
    )


def test_older_lines_report_no_reasoning(episodes):
    rows = cost_rows(episodes)
    assert [(r.agent, r.model, r.reasoning_tokens) for r in rows] == [
        ("llm", "gpt-x", None),
        ("oracle", None, None),
    ]
    assert all(ep["agent_failure"] == "" for ep in episodes)  # absent in older lines
    assert "| oracle | - | 4 | 0 | 22 | 1.00 | 2200 | 220 | - | 550.0 | 55.0 | 0 |" in (
        render_markdown(episodes).splitlines()
    )


def test_agent_failure_must_be_a_string(tmp_path):
    with pytest.raises(
        ValueError,
        match=r"lines\.jsonl:1: 'agent_failure': expected a string \(why the agent could not go "
        r"on; empty when it could\), got 400",
    ):
        load_episodes_of(tmp_path, _line(agent_failure=400))


def test_write_report_cost_csv(tmp_path):
    episodes = _cost_run(tmp_path)
    paths = write_report(episodes, tmp_path / "priced", PRICES)
    assert paths["cost"] == tmp_path / "priced" / "cost.csv"
    assert paths["report"].read_text() == render_markdown(episodes, PRICES)
    with paths["cost"].open(newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == COST_COLUMNS
        gpt_x, model_b = reader
    assert gpt_x == {
        "agent": "llm",
        "model": "gpt-x",
        "episodes": "2",
        "infra_failures": "1",
        "llm_calls": "16",
        "steps": "15",
        "input_tokens": "4000",
        "output_tokens": "600",
        "reasoning_tokens": "200",
        "input_tokens_per_episode": "2000.0",
        "output_tokens_per_episode": "300.0",
        "calls_per_step": "1.0667",
        "agent_failures": "1",
        "usd_per_million_input": "2.5",
        "usd_per_million_output": "10.0",
        "usd": "0.016",
        "usd_per_episode": "0.008",
    }
    assert [model_b[k] for k in ("calls_per_step", "usd", "usd_per_episode")] == [
        "1.6667",
        "0.009",
        "0.0045",
    ]

    paths = write_report(episodes, tmp_path / "unpriced")
    with paths["cost"].open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["model"] for r in rows] == ["gpt-x", "model-b"]
    assert {r[k] for r in rows for k in COST_COLUMNS[-4:]} == {""}
    assert rows[0]["reasoning_tokens"] == "200"


def test_a_run_without_model_calls_has_no_cost(tmp_path):
    scripted = load_episodes_of(tmp_path, _line(agent="scripted", model=None, llm_calls=0))
    assert cost_rows(scripted, PRICES) == []
    paths = write_report(scripted, tmp_path / "out", PRICES)
    assert "## Cost" not in paths["report"].read_text()
    assert paths["cost"].read_text().strip() == ",".join(COST_COLUMNS)
    assert write_report([], tmp_path / "none")["cost"].read_text().strip() == ",".join(COST_COLUMNS)


def test_load_prices_from_json_and_toml(tmp_path):
    json_file = tmp_path / "prices.json"
    json_file.write_text(
        '{"gpt-x": {"input": 2.5, "output": 10}, "model-b": {"input": 2, "output": 4}}'
    )
    assert load_prices(json_file) == PRICES
    toml_file = tmp_path / "prices.TOML"
    toml_file.write_text(
        '[gpt-x]\ninput = 2.5\noutput = 10\n\n["model-1.5"]\ninput = 0\noutput = 0.6\n'
    )
    assert load_prices(str(toml_file)) == {"gpt-x": (2.5, 10.0), "model-1.5": (0.0, 0.6)}
    assert all(type(p) is float for price in load_prices(toml_file).values() for p in price)


_IN_USD = r"'input' and 'output', in USD per million tokens"


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "prices.yaml",
            "gpt-x: {input: 1, output: 2}",
            r"prices\.yaml: expected a price file ending in \.json or \.toml, got '\.yaml'$",
        ),
        ("prices", "{}", r"prices: expected a price file ending in \.json or \.toml, got ''$"),
        (
            "absent.json",
            None,
            r"absent\.json: cannot read the price file \(No such file or directory\)$",
        ),
        ("folder.toml", "DIR", r"folder\.toml: cannot read the price file \(Is a directory\)$"),
        ("latin.json", b'{"caf\xe9": {}}', r"latin\.json: expected UTF-8 text in the price file"),
        ("prices.json", "{gpt-x: 1}", r"prices\.json: not valid JSON \(Expecting property name"),
        ("prices.toml", "[gpt-x\ninput = 1\n", r"prices\.toml: not valid TOML \("),
        (
            "prices.json",
            "[2.5, 10]",
            rf"prices\.json: expected an object of models, each with {_IN_USD}, got list$",
        ),
        (
            "prices.json",
            '{"gpt-x": 2.5}',
            rf"prices\.json: model 'gpt-x': expected an object with {_IN_USD}, got 2\.5$",
        ),
        (
            "prices.json",
            '{"gpt-x": {"input": 2.5}}',
            rf"prices\.json: model 'gpt-x': missing 'output'; expected {_IN_USD}$",
        ),
        (
            "prices.toml",
            "[gpt-x]\noutput = 10\n",
            rf"prices\.toml: model 'gpt-x': missing 'input'; expected {_IN_USD}$",
        ),
        (
            "prices.toml",
            "[gpt-4.1]\ninput = 2\noutput = 8\n",
            rf"prices\.toml: model 'gpt-4': missing 'input' and 'output'; expected {_IN_USD}; "
            r"in TOML a model name with a dot is quoted: \[\"gpt-4\.1\"\]$",
        ),
        (
            "prices.json",
            '{"gpt-x": {"input": 2.5, "output": 10, "reasoning": 10}}',
            rf"prices\.json: model 'gpt-x': unexpected key\(s\) 'reasoning'; expected only "
            rf"{_IN_USD} \(reasoning tokens are a part of output and billed at its price\)$",
        ),
        (
            "prices.json",
            '{"gpt-x": {"input": -2.5, "output": 10}}',
            r"prices\.json: model 'gpt-x': 'input': expected a finite number >= 0 \(USD per "
            r"million tokens\), got -2\.5$",
        ),
        (
            "prices.toml",
            '[gpt-x]\ninput = 2.5\noutput = "10"\n',
            r"prices\.toml: model 'gpt-x': 'output': expected a finite number >= 0 \(USD per "
            r"million tokens\), got '10'$",
        ),
        ("prices.json", '{"m": {"input": true, "output": 1}}', r"'input': .*, got True$"),
        ("prices.json", '{"m": {"input": NaN, "output": 1}}', r"'input': .*, got nan$"),
        ("prices.toml", "[m]\ninput = 1\noutput = inf\n", r"'output': .*, got inf$"),
    ],
)
def test_a_bad_price_file_says_what_was_expected(tmp_path, name, text, expected):
    path = tmp_path / name
    if text == "DIR":
        path.mkdir()
    elif isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text)
    with pytest.raises(ValueError, match=expected) as info:
        load_prices(path)
    assert str(info.value).startswith(f"{path}: ")
