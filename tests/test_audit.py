"""The validity audit: how evidence is looked for, and a whole audit of a real task."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import time
import types
from pathlib import Path

import pytest

from dynacu_agents.oracle import WatcherAgent
from dynacu_gym import audit
from dynacu_gym.audit import (
    AuditError,
    Observed,
    element_list_text,
    fingerprint,
    forget_changed,
    judge_evidence,
    key_found,
    merge_audits,
    read_trace,
    render_summary,
    run_audit,
    seen,
    task_hash,
    write_audit,
)
from dynacu_gym.harness.audit import fingerprints as audit_fingerprints
from dynacu_gym.harness.audit import observed as audit_observed
from dynacu_gym.harness.audit import reading as audit_reading
from dynacu_gym.harness.audit import run as audit_run
from dynacu_gym.modes import MODES
from dynacu_gym.paths import tasks_root
from dynacu_gym.record import RecordParts, render_record
from dynacu_gym.runtime.elements import PageElement
from dynacu_gym.tasks import Evidence, SolutionStep, find_task
from dynacu_gym.wrappers.elements import HEADING, format_elements

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(
    ("key", "text", "found"),
    [
        ("2.6", "Asia-Pacific came in at two point six million", True),
        ("60", "bring the notice period down to sixty days", True),
        ("$4,800", "Fee  $4800 per month", True),
        ("4800", "Fee $4,900 per month", False),
        ("3:30", "it now starts at 3.30 pm", True),
        ("Cedar Hall", "Venue shortlist\nCedar   Hall  60", True),
        ("Cedar Hall", "Cedar Halls", False),
        ("INC-4471", "INC 4471 Checkout API", True),
        ("14", "140 people", False),
        ("95", "it was $95, not $120.", True),
        ("$21,000", "quarter: $21,000, split", True),
        ("28", "moves to April 28th", True),
        ("1250", "about twelve hundred and fifty visits", True),
        ("582039", "Your confirmation number is 5-8-2-0-3-9.", True),
        ("582039", "it is five, eight, two, zero, three, nine", True),
        ("582039", "it is 5-8-2-0-3-8", False),
        # Keys that spell a number find it in digits, as Whisper often writes it.
        ("press four", "For billing, press 4.", True),
        ("press four", "For billing, press 5.", False),
        ("twenty-eighth", "It moves to April 28th.", True),
        ("twelve hundred and fifty", "The real number is 1,250.", True),
        ("under twenty", "anything under 20 minutes", True),
        ("under twenty", "under 200 pounds", False),
        ("temple garden", "a foggy temple garden", True),
        # OCR of a narrow card wrapped beside a form: the column's lines come in between.
        ("last booking 9:30 pm", "Friday: 5 pm (last booking 9:30\n\nDate *\n\npm)", True),
        ("last booking 9:30 pm", "Friday: 5 pm (last booking 9:30\nDate *\n10:00 pm)", False),
        ("last booking 9:30 pm", "last booking 9:30\n" + "line\n" * 8 + "pm)", False),
        ("in stock", "not in\nDate *\nstock", False),  # two words meet over lines too easily
        # A capital I alone, as OCR reads it in a checkbox's label.
        ("I would recommend it", "{_] | would recommend it", True),
    ],
)
def test_a_key_is_found_in_words_and_digits_alike(key, text, found):
    assert key_found(key, text) is found


def test_an_item_is_seen_when_half_its_keys_are_found():
    assert seen(["4.2", "3.1", "1.4", "2.0"], "North America 4.2 Europe 3.1 (unreadable)")
    assert not seen(["4.2", "3.1", "1.4"], "North America 4.2")
    assert not seen([], "anything")
    # An item whose every piece is needed (five prices, to find the cheapest) wants them all.
    assert not seen(["4.2", "3.1", "1.4", "2.0"], "4.2 3.1 1.4", every=True)
    assert seen(["4.2", "3.1", "1.4"], "4.2 then 3.1, and 1.4", every=True)


def test_observed_text_is_what_was_heard_and_read_inside_the_window(tmp_path, monkeypatch):
    monkeypatch.setattr(audit_observed, "ocr", lambda path: path.stem)
    obs = Observed(
        heard=((2.0, 4.0, "early words"), (10.0, 12.0, "late words")),
        frames=((3.0, tmp_path / "frame-a.png"), (11.0, tmp_path / "frame-b.png")),
    )
    assert (obs.heard_text(0.0, 5.0), obs.screen_text(0.0, 5.0)) == ("early words", "frame-a")
    assert (obs.heard_text(10.5, 20.0), obs.screen_text(10.5, 20.0)) == ("late words", "frame-b")


def test_a_trace_is_read_back_with_its_times(tmp_path):
    for sub in ("records", "screens", "keyframes"):
        (tmp_path / sub).mkdir()
    steps = [
        {"step": 0, "elapsed": 0.2, "keyframe_times": []},
        {"step": 1, "elapsed": 5.3, "keyframe_times": [2.5, 4.0], "action": {"type": "wait"}},
        {
            "step": 2,
            "elapsed": 6.1,
            "action": {"type": "type", "text": "May 12"},
            "agent": {"solution_step": 3},
        },
    ]
    (tmp_path / "trace.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    heard = '[RECENT AUDIO — last 5.0 seconds]\n(1.0s–3.5s) "The launch moves to May 12."\n'
    (tmp_path / "records" / "0000.txt").write_text("Observation Record\n")
    (tmp_path / "records" / "0001.txt").write_text(heard)
    (tmp_path / "records" / "0002.txt").write_text("Observation Record\n")
    (tmp_path / "episode.json").write_text(json.dumps({"result": "wrong_date", "steps": 3}))
    obs = read_trace(tmp_path)
    assert (obs.ended, obs.result) == (6.1, "wrong_date")  # its last step came back at 6.1 s
    assert obs.heard == ((1.0, 3.5, "The launch moves to May 12."),)
    assert [t for t, _ in obs.frames] == [0.2, 2.5, 4.0, 5.3, 6.1]
    assert obs.typed == ((5.3, "May 12"),)  # from when the typing began
    assert obs.acted == ((3, 6.1),)  # the solution's third step came back at 6.1 s
    assert obs.frames[1][1] == tmp_path / "keyframes" / "0001-1.png"


def test_the_element_list_is_read_from_its_section_of_the_record():
    record = (FIXTURES / "audit" / "elements-record.txt").read_text(encoding="utf-8")
    # The quoted strings, unescaped, one a line; not the roles, boxes, the "more" line, nor the
    # quotes of the sections around it (the transcript's, the task's).
    assert element_list_text(record) == "\n".join(
        [
            "Podcasts",
            "Pause",
            "Share",
            'Episode "Fair Shares" — part 2 \\ 3',
            "Type your answer",
            "4.50",
        ]
    )
    assert element_list_text('Observation Record\n[TASK] Say "hi"\n') is None
    nothing = f"{HEADING}\n{format_elements([])}\n[TASK] x"
    assert element_list_text(nothing) == ""  # the list was there, empty


def test_the_element_list_reads_back_what_the_channel_writes():
    # Round trip through the elements channel's own formatter and the record's renderer.
    box = (10, 10, 100, 20)
    elements = [
        PageElement(1, "text", 'He said "go" \\ left', "", "", (), box, (60, 20)),
        PageElement(2, "textbox", "", "Your answer", 'a "b"', ("focused",), box, (60, 40)),
        PageElement(3, "button", "", "", "", (), box, (60, 60)),
    ]
    body = f"{HEADING}\n{format_elements(elements, more=2)}"
    parts = RecordParts(3, 12.5, 'Type the "code"', ("wait 3s",)).with_section("elements", body)
    assert element_list_text(render_record(parts)) == 'He said "go" \\ left\nYour answer\na "b"'


def test_a_trace_keeps_each_steps_element_list_at_its_screenshots_time(tmp_path):
    for sub in ("records", "screens", "keyframes"):
        (tmp_path / sub).mkdir()
    steps = [
        {"step": 0, "elapsed": 0.2, "keyframe_times": []},
        {"step": 1, "elapsed": 10.4, "keyframe_times": [3.0]},
    ]
    (tmp_path / "trace.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    first = f"Observation Record\n{HEADING}\n{format_elements([])}\n[TASK] x\n"
    record = (FIXTURES / "audit" / "elements-record.txt").read_text(encoding="utf-8")
    (tmp_path / "records" / "0000.txt").write_text(first, encoding="utf-8")
    (tmp_path / "records" / "0001.txt").write_text(record, encoding="utf-8")
    obs = read_trace(tmp_path)
    assert [t for t, _ in obs.listed] == [0.2, 10.4]  # the screenshots' times, not keyframes'
    assert obs.listed[0][1] == "" and obs.listed[1][1].startswith("Podcasts\nPause\n")
    # A mode without the channel has no section, so no lists.
    (tmp_path / "records" / "0000.txt").write_text("Observation Record\n[TASK] x\n")
    (tmp_path / "records" / "0001.txt").write_text("Observation Record\n[TASK] x\n")
    assert read_trace(tmp_path).listed == ()


def _fake_ocr(monkeypatch, texts):
    """OCR that reads each frame's text from ``texts`` by the frame's file name."""
    monkeypatch.setattr(audit_observed, "ocr", lambda path: texts[path.name])


def _frames(tmp_path, *shown):
    return tuple((t, tmp_path / name) for t, name in shown)


def test_the_chance_is_the_share_of_step_phases_that_look_while_it_is_shown(tmp_path, monkeypatch):
    _fake_ocr(monkeypatch, {"a": "intro", "b": "flash 42", "c": "intro"})
    timeline = Observed((), _frames(tmp_path, (0.0, "a"), (12.0, "b"), (16.0, "c")))
    # Agents look at 0 and at phase + 10 k: those whose phase is in [2, 6) look at 12-16 s.
    assert timeline.chance(["42"], 11.0, 19.0, 10.0) == pytest.approx(0.4)
    assert timeline.chance(["42"], 11.0, 19.0, 2.0) == 1.0
    assert timeline.chance(["intro"], 0.0, 60.0, 10.0) == 1.0
    assert timeline.chance(["99"], 0.0, 60.0, 10.0) == 0.0


def test_every_agent_sees_the_screen_reset_returned(tmp_path, monkeypatch):
    # The first frame comes a few milliseconds after the start; an agent's look at 0 is it.
    _fake_ocr(monkeypatch, {"a": "card (971) 555-0286", "b": "form"})
    timeline = Observed((), _frames(tmp_path, (0.014, "a"), (2.0, "b")))
    assert timeline.chance(["555-0286"], -1.0, 28.0, 10.0) == 1.0


def test_what_follows_the_agents_action_is_looked_at_from_that_action(tmp_path, monkeypatch):
    # F4's banner: the agent's click (the solution's first step) comes back at 1.9 s; 1.2 s
    # later a notice shows, for 8 s. The agent looks at the screen its click returned (too
    # early) and then a step later: only those stepping 8 or 9 s (of 8 to 12) see it. At any
    # phase of the page's clock, most would.
    _fake_ocr(monkeypatch, {"a": "form", "b": "cookie notice", "c": "form"})
    frames = _frames(tmp_path, (0.0, "a"), (3.1, "b"), (11.1, "c"), (14.0, "c"))
    timeline = Observed((), frames, acted=((1, 1.9), (2, 3.1)))
    assert timeline.chance(["notice"], 1.7, 13.7, 10.0) > 0.8
    assert timeline.chance(["notice"], 1.7, 13.7, 10.0, follows=1) == pytest.approx(0.4)
    assert timeline.chance(["notice"], 1.7, 13.7, 6.0, follows=1) == 1.0
    # The episode ends as the notice closes (unanswered, the task is decided): its last frame
    # still shows it, and no agent looks after the end.
    ended = Observed((), frames[:2] + ((11.0, tmp_path / "b"),), acted=((1, 1.9),))
    assert ended.chance(["notice"], 1.7, 13.7, 10.0, follows=1) == pytest.approx(0.4)
    # What the click brings up at once is in the screen the click returned.
    at_once = Observed((), _frames(tmp_path, (0.0, "a"), (1.6, "b"), (3.0, "c")), acted=((1, 1.6),))
    assert at_once.chance(["notice"], 0.5, 6.0, 10.0, follows=1) == 1.0


def test_what_the_watcher_typed_is_not_the_pages_text(tmp_path, monkeypatch):
    # A flash of the code at 4-8 s; from 20 s the watcher types the code into the answer box.
    _fake_ocr(monkeypatch, {"a": "intro", "b": "code ROASTRIDE", "c": "intro", "d": "ROASTRIDE"})
    frames = _frames(tmp_path, (0.0, "a"), (4.0, "b"), (8.0, "c"), (21.0, "d"), (40.0, "d"))
    typed = Observed((), frames, typed=((20.0, "ROASTRIDE"),))
    assert typed.typed_at("roastride") == 20.0 and typed.typed_at("other") == math.inf
    assert Observed((), (), typed=((3.0, "tangerine7"),)).typed_at("tangerine") == 3.0
    assert typed.shows(["ROASTRIDE"], 0.0, 10.0)
    assert not typed.shows(["ROASTRIDE"], 10.0, math.inf)  # gone from the page after 8 s
    assert Observed((), frames).shows(["ROASTRIDE"], 10.0, math.inf)
    assert typed.chance(["ROASTRIDE"], 15.0, 30.0, 2.0) == 0.0
    assert Observed((), frames).chance(["ROASTRIDE"], 15.0, 30.0, 2.0) == 1.0


def test_a_looping_carousel_is_gathered_whole_only_by_some_agents(tmp_path, monkeypatch):
    # Five deals, 4 s each, in a 20 s loop. An agent stepping every 10 s exactly would see the
    # same two slides each loop; agents step every 8 to 12 s, so a patient one gathers them.
    prices = ["$39", "$27", "$25", "$24", "$26"]
    _fake_ocr(monkeypatch, {f"d{i}": p for i, p in enumerate(prices)})
    shown = [(4.0 * n, f"d{n % 5}") for n in range(15)]
    timeline = Observed((), _frames(tmp_path, *shown))
    assert timeline.chance(prices, 0.0, 60.0, 10.0) > 0.9  # three of the five: easy
    in_40_s = timeline.chance(prices, 0.0, 40.0, 10.0, every=True)
    assert 0.0 < in_40_s < 0.5
    assert timeline.chance(prices, 0.0, 60.0, 10.0, every=True) > in_40_s
    assert timeline.chance(prices, 0.0, 40.0, 4.0, every=True) == 1.0


def _b4_with(*evidence):
    return dataclasses.replace(find_task("B4"), evidence=evidence)


SPOKEN = Evidence("APAC came in at 2.6", "audio", (9.0, 14.0), keys=("2.6",))
FLASH = Evidence("a flash shows 42", "visual", (12.0, 16.0), transient=True, keys=("42",))
TITLE = Evidence("the title", "visual", (0.0, 30.0), keys=("Revenue",))


def test_the_premise_holds_when_each_mode_perceives_what_it_should(tmp_path, monkeypatch):
    _fake_ocr(
        monkeypatch,
        {"a": "Revenue intro", "b": "Revenue flash 42", "c": "Revenue intro", "s": "Revenue"},
    )
    timeline = Observed((), _frames(tmp_path, (0.0, "a"), (12.0, "b"), (16.0, "c")))
    screens = _frames(tmp_path, (0.0, "s"), (10.0, "s"), (20.0, "s"))
    heard = ((10.0, 13.0, "it came in at two point six million"),)
    keyframes = tuple(sorted(screens + _frames(tmp_path, (12.1, "b"))))
    observed = {
        "standard": Observed((), screens),
        "aoi_visual": Observed((), keyframes),
        "aoi_audio": Observed(heard, screens),
        "aoi_full": Observed(heard, keyframes),
    }
    rows = judge_evidence(_b4_with(SPOKEN, FLASH, TITLE), observed, timeline, step_s=10.0)
    assert all(r["ok"] for r in rows), [r for r in rows if not r["ok"]]
    got = {(r["evidence"], r["mode"]): r["seen"] for r in rows}
    assert [got[1, m] for m in ("standard", "aoi_visual", "aoi_audio", "aoi_full")] == [
        False,
        False,
        True,
        True,
    ]
    assert [got[2, m] for m in ("standard", "aoi_visual", "aoi_audio", "aoi_full")] == [
        False,
        True,
        False,
        True,
    ]
    assert all(got[3, m] for m in observed)
    chance = {r["evidence"]: r["chance"] for r in rows if r["mode"] == "standard" and "chance" in r}
    assert chance == {2: pytest.approx(0.4), 3: 1.0}


def test_a_line_said_after_a_spoken_answer_is_wanted_only_where_the_agent_speaks(tmp_path):
    # H5: the second question is asked once the first answer was heard. A watcher that cannot
    # speak never answers, so the page never asks it: only aoi_interactive must hear it.
    task = find_task("H5")
    second = next(e for e in task.evidence if e.follows is not None)
    assert task.solution[second.follows - 1].speaks
    first = dataclasses.replace(second, follows=None)
    asked = ((second.window[0] + 1.0, second.window[0] + 5.0, " ".join(second.keys)),)
    observed = {
        "aoi_audio": Observed((), ()),
        "aoi_full": Observed((), ()),
        "aoi_interactive": Observed(asked, ()),
    }
    rows = judge_evidence(dataclasses.replace(task, evidence=(second,)), observed, None)
    verdicts = {r["mode"]: (r["seen"], r["ok"]) for r in rows if r["mode"] != "timeline"}
    assert verdicts == {
        "aoi_audio": (False, True),
        "aoi_full": (False, True),
        "aoi_interactive": (True, True),
    }
    # Unheard where it speaks, it fails there; a line said on the page's clock fails anywhere.
    observed["aoi_interactive"] = Observed((), ())
    rows = judge_evidence(dataclasses.replace(task, evidence=(second,)), observed, None)
    assert [r["mode"] for r in rows if not r["ok"]] == ["timeline", "aoi_interactive"]
    rows = judge_evidence(dataclasses.replace(task, evidence=(first,)), observed, None)
    failed = [r["mode"] for r in rows if not r["ok"]]
    assert failed == ["timeline", "aoi_audio", "aoi_full", "aoi_interactive"]


def test_an_item_missed_because_the_episode_ended_before_it_says_so(tmp_path, monkeypatch):
    # A watcher that lost a game at 8 s never heard what the page says from 9 s (J10's calls).
    _fake_ocr(monkeypatch, {"a": "Revenue intro"})
    screens = _frames(tmp_path, (0.0, "a"), (8.0, "a"))
    lost = Observed((), screens, ended=8.0, result="too_many_misses")
    rows = judge_evidence(_b4_with(SPOKEN, TITLE), {"aoi_audio": lost}, None)
    assert {r["evidence"]: r["reason"] for r in rows if r["mode"] == "aoi_audio"} == {
        1: "audio evidence not heard in its window; the episode ended (too_many_misses) at "
        "8.0 s, before the item's window opened",
        2: "",  # the title was on screen from the start: seen before the episode ended
    }
    # An episode that ran past the window's opening missed it for another reason.
    ran_on = Observed((), screens, ended=20.0, result="success")
    rows = judge_evidence(_b4_with(SPOKEN), {"aoi_full": ran_on}, None)
    assert [r["reason"] for r in rows if r["mode"] == "aoi_full"] == [
        "audio evidence not heard in its window"
    ]


def test_only_the_frames_the_judges_read_are_read_ahead(tmp_path, monkeypatch):
    shown = [(float(t), f"f{t}") for t in (0, 5, 10, 12, 16, 20, 30)]
    texts = {name: "intro" for _, name in shown}
    read: list[str] = []
    monkeypatch.setattr(
        audit_observed, "ocr", lambda path: read.append(path.name) or texts[path.name]
    )
    timeline = Observed((), _frames(tmp_path, *shown))
    observed = {"standard": Observed((), _frames(tmp_path, *shown))}
    # A flash judged in 11-19 s (its window and the slack); a mole has no keys to read.
    mole = Evidence("a mole pops up", "visual", (1.0, 2.0), transient=True)
    ahead = audit.frames_to_read(_b4_with(FLASH, mole), observed, timeline)
    names = [p.name for p in ahead]
    # The standard screens in the window; in the timeline, also the frame on screen when the
    # window opens (10 s) and everything after it (a transient item must be gone).
    assert names == ["f12", "f16", "f10", "f12", "f16", "f20", "f30"]
    judge_evidence(_b4_with(FLASH, mole), observed, timeline, step_s=10.0)
    assert set(read) <= set(names)
    # Spoken keys must be off the page all the time: the whole timeline is read.
    ahead = audit.frames_to_read(_b4_with(SPOKEN), observed, timeline)
    assert [p.name for p in ahead] == [name for _, name in shown]


def test_the_premise_fails_for_leaks_long_flashes_and_missing_keys(tmp_path, monkeypatch):
    _fake_ocr(monkeypatch, {"a": "intro", "b": "flash 42 and 2.6", "c": "intro"})
    # The flash stays 8 s: most screenshot-only agents stepping every 10 s catch it.
    timeline = Observed((), _frames(tmp_path, (0.0, "a"), (12.0, "b"), (20.0, "c")))
    long_flash = dataclasses.replace(FLASH, window=(12.0, 20.0))
    unkeyed = Evidence("someone says something", "audio", (1.0, 2.0))
    observed = {"standard": Observed((), _frames(tmp_path, (0.0, "a"), (13.0, "b")))}
    mole = Evidence("a mole pops up", "visual", (1.0, 2.0), transient=True)
    rows = judge_evidence(_b4_with(SPOKEN, long_flash, unkeyed, mole), observed, timeline, 10.0)
    assert [r["evidence"] for r in rows if r["check"] == "unread"] == [4]
    assert "- B4 #4: a mole pops up" in render_summary(rows, ["B4"])
    reasons = {(r["evidence"], r["mode"]): r["reason"] for r in rows if not r["ok"]}
    assert reasons == {
        (1, "timeline"): "spoken evidence is readable on the page",
        (2, "standard"): "a screenshot-only agent stepping about every 10 s sees it 80% of "
        "the time: show it for less time, or call it lasting",
        (3, "timeline"): "no keys to listen for: give the audio evidence item keys",
        (3, "standard"): "no keys to listen for: give the audio evidence item keys",
    }


def test_spoken_evidence_in_an_element_list_is_a_leak_in_every_mode_with_lists(
    tmp_path, monkeypatch
):
    _fake_ocr(monkeypatch, {"a": "Revenue intro"})
    screens = _frames(tmp_path, (0.0, "a"), (40.0, "a"))
    heard = ((10.0, 13.0, "it came in at two point six million"),)
    # Long after the line was said, a caption element lists the figure (OCR missed it).
    leaky = (0.0, "Revenue"), (40.0, "Revenue\nAPAC 2.6")
    clean = (0.0, "Revenue"), (40.0, "Revenue")
    observed = {
        "standard": Observed((), screens),  # no lists: not judged on them
        "standard_structured": Observed((), screens, listed=leaky),
        "aoi_audio": Observed(heard, screens, listed=leaky),
        "aoi_full": Observed(heard, screens, listed=clean),
    }
    timeline = Observed((), screens, listed=clean)
    rows = judge_evidence(_b4_with(SPOKEN), observed, timeline, step_s=10.0)
    by_mode = {r["mode"]: r for r in rows}
    assert {m: r.get("listed") for m, r in by_mode.items()} == {
        "timeline": False,
        "standard": None,
        "standard_structured": True,
        "aoi_audio": True,
        "aoi_full": False,
    }
    assert {m: r["reason"] for m, r in by_mode.items() if not r["ok"]} == {
        "standard_structured": "spoken evidence is listed in the page elements",
        "aoi_audio": "spoken evidence is listed in the page elements",
    }
    assert by_mode["aoi_audio"]["seen"]  # heard all the same
    # Half the keys is already a leak, whatever the item needs; and the timeline's lists count.
    pair = dataclasses.replace(SPOKEN, keys=("2.6", "Asia-Pacific"), all_keys=True)
    timeline = Observed((), screens, listed=leaky)
    rows = judge_evidence(_b4_with(pair), {}, timeline)
    assert rows[0]["reason"] == "spoken evidence is listed in the page elements"
    # What the watcher typed itself (its answer, in a textbox) is not the page's.
    typed = Observed(heard, screens, typed=((30.0, "2.6"),), listed=leaky)
    rows = judge_evidence(_b4_with(SPOKEN), {"aoi_audio": typed}, None)
    assert [r["listed"] for r in rows if r["mode"] == "aoi_audio"] == [False]


def test_being_listed_is_judged_by_chance_as_the_screenshots_are(tmp_path, monkeypatch):
    # The flash's "42" is too small for OCR, but the element list read at the 12 s step holds
    # it, and the screen does not change until 20 s: most agents reading the list catch it.
    _fake_ocr(monkeypatch, {"a": "Revenue intro", "c": "Revenue"})
    steps = _frames(tmp_path, (0.0, "a"), (10.0, "a"), (12.0, "a"), (20.0, "c"), (30.0, "c"))
    lists = ((0.0, "Revenue"), (10.0, "Revenue"), (12.0, "Revenue\nflash 42"), (20.0, "Revenue"))
    timeline = Observed((), steps, listed=(*lists, (30.0, "Revenue")))
    assert timeline.chance(["42"], 11.0, 19.0, 10.0) == 0.0  # the screenshots: never
    assert timeline.chance(["42"], 11.0, 19.0, 10.0, lists=True) > 0.5
    watcher = _frames(tmp_path, (0.0, "a"), (10.0, "a"), (20.0, "c"))
    observed = {
        "standard": Observed((), watcher),
        "standard_structured": Observed((), watcher, listed=((0.0, "x"), (10.0, "x"))),
    }
    rows = judge_evidence(_b4_with(FLASH), observed, timeline, step_s=10.0)
    by_mode = {r["mode"]: r for r in rows}
    assert by_mode["standard"]["ok"] and by_mode["standard"]["chance"] == 0.0
    assert "listed" not in by_mode["standard"]
    structured = by_mode["standard_structured"]
    assert not structured["ok"] and structured["chance"] > 0.5
    assert structured["reason"].startswith(
        "a screenshot-only agent with the element list stepping about every 10 s sees it "
    )
    line = by_mode["timeline"]
    assert (line["seen"], line["listed"], line["ok"]) == (True, True, True)
    # Shown for a moment (a keyframe follows at once), the list agents catch it no more often
    # than the screenshot-only ones: the watcher that listed it is one of the lucky few.
    brief = Observed((), (*steps, *_frames(tmp_path, (12.5, "c"))), listed=lists)
    assert brief.chance(["42"], 11.0, 19.0, 10.0, lists=True) < 0.1
    lucky = {"standard_structured": Observed((), watcher, listed=((12.0, "flash 42"),))}
    rows = judge_evidence(_b4_with(FLASH), lucky, brief, step_s=10.0)
    row = next(r for r in rows if r["mode"] == "standard_structured")
    assert (row["seen"], row["listed"], row["ok"]) == (True, True, True)


def test_an_item_is_seen_in_the_screenshots_and_the_lists_together(tmp_path, monkeypatch):
    # Of four prices, OCR reads two at first and the list the other two: all four, together.
    prices = Evidence("four prices", "visual", (0.0, 30.0), keys=("$39", "$27", "$25", "$24"))
    _fake_ocr(monkeypatch, {"a": "$39 $24"})
    screens = _frames(tmp_path, (0.0, "a"), (10.0, "a"))
    listed = ((0.0, "$27\n$25"), (10.0, "$39\n$27\n$25\n$24"))
    obs = Observed((), screens, listed=listed)
    assert obs.shows(prices.keys, 0.0, 5.0, every=False)
    assert not obs.shows(prices.keys, 0.0, 5.0, every=True)
    assert obs.shows(prices.keys, 0.0, 5.0, every=True, lists=True)  # OCR and the list
    assert not obs.shows(prices.keys, 0.0, 5.0, every=True, screens=False, lists=True)
    assert obs.shows(prices.keys, 0.0, 10.0, every=True, screens=False, lists=True)
    every = dataclasses.replace(prices, all_keys=True)
    rows = judge_evidence(_b4_with(every), {"aoi_visual": obs, "standard": obs}, None)
    assert {r["mode"]: r["seen"] for r in rows} == {
        "timeline": False,
        "aoi_visual": True,
        "standard": False,  # no lists in standard, whatever the Observed holds
    }


def test_a_transient_item_still_listed_after_its_window_is_not_transient(tmp_path, monkeypatch):
    _fake_ocr(monkeypatch, {"a": "intro", "b": "flash 42", "c": "intro"})
    frames = _frames(tmp_path, (0.0, "a"), (12.0, "b"), (16.0, "c"), (30.0, "c"))
    lingering = Observed((), frames, listed=((0.0, "intro"), (30.0, "intro\n42")))
    rows = judge_evidence(_b4_with(FLASH), {}, lingering, step_s=10.0)
    assert [r["reason"] for r in rows] == [
        "still listed in the page elements after its window: it is not transient"
    ]
    gone = dataclasses.replace(lingering, listed=((0.0, "intro"), (30.0, "intro")))
    assert all(r["ok"] for r in judge_evidence(_b4_with(FLASH), {}, gone, step_s=10.0))


def test_the_watcher_plays_the_solution_and_otherwise_looks_every_step(monkeypatch):
    ready = {"now": False}
    solution = (
        SolutionStep("click 10 20", at=25.0),
        SolutionStep('type "{answer.q3_total}"', when="window.ready"),
    )
    task = dataclasses.replace(find_task("B4"), solution=solution)
    page = types.SimpleNamespace(task=task, evaluate_in_page=lambda script: ready["now"])
    watcher = WatcherAgent(types.SimpleNamespace(unwrapped=page), look_s=0.5)
    watcher.reset("")
    assert watcher.act({"elapsed": 0.0})[0] == {"type": "wait", "seconds": 0.5}
    assert watcher.act({"elapsed": 24.8})[0] == {"type": "wait", "seconds": pytest.approx(0.2)}
    assert watcher.act({"elapsed": 25.0})[0]["type"] == "click"
    # Not ready: it waits for the page between looks, then looks again (a step) a look later.
    started = time.monotonic()
    assert watcher.act({"elapsed": 25.1})[0]["type"] == "wait"
    assert 0.35 <= time.monotonic() - started <= 1.0
    ready["now"] = True
    assert watcher.act({"elapsed": 25.7})[0] == {"type": "type", "text": "11.3"}
    assert watcher.act({"elapsed": 25.8})[0] == {"type": "wait", "seconds": 0.5}
    with pytest.raises(ValueError, match="look_s in"):
        WatcherAgent(types.SimpleNamespace(unwrapped=page), look_s=0)


def test_the_timeline_watcher_does_everything_but_answer():
    solution = (SolutionStep("click 10 20", at=1.0), SolutionStep('type "{answer.q3_total}"'))
    task = dataclasses.replace(find_task("B4"), solution=solution)
    page = types.SimpleNamespace(task=task, evaluate_in_page=lambda script: True)
    watcher = WatcherAgent(types.SimpleNamespace(unwrapped=page), look_s=5.0, finish=False)
    watcher.reset("")
    assert watcher.act({"elapsed": 1.0})[0]["type"] == "click"
    for elapsed in (1.5, 6.5, 60.0):  # it looks on, every look_s, to the end
        assert watcher.act({"elapsed": elapsed})[0] == {"type": "wait", "seconds": 5.0}


def test_a_task_fingerprint_ignores_its_evidence_but_not_its_page(tmp_path, monkeypatch):
    task = find_task("B4")
    assert fingerprint(task) == fingerprint(dataclasses.replace(task, evidence=(SPOKEN,)))
    assert fingerprint(task) != fingerprint(dataclasses.replace(task, duration_s=99.0))
    # Its app and the page runtime count; the other apps do not.
    before = fingerprint(task)
    shutil.copytree(tasks_root() / "_shared", tmp_path / "_shared")
    monkeypatch.setattr(audit_fingerprints, "tasks_root", lambda: tmp_path)
    assert fingerprint(task) == before  # a copy of the same files
    for changed, counts in (
        ("apps/podcast/app.js", False),
        ("apps/meeting/config-keys.toml", False),  # read by the loader, never by the page
        ("apps/meeting/app.js", True),
        ("dynacu-task.js", True),
        ("normalize-cases.json", False),  # read by tests, never by a page
    ):
        with (tmp_path / "_shared" / changed).open("a") as f:
            f.write("\n// changed\n")
        after = fingerprint(task)
        assert (after != before) == counts, changed
        before = after


def test_a_task_fingerprint_changes_with_the_modes_channels(monkeypatch):
    # Episodes watched before a mode gained the element list lack it: they must run again.
    task = find_task("B4")
    before = fingerprint(task), task_hash(task)
    older = {
        m: tuple(c for c in cs if c != "elements")
        for m, cs in audit_fingerprints.MODE_CHANNELS.items()
    }
    monkeypatch.setattr(audit_fingerprints, "MODE_CHANNELS", older)
    assert fingerprint(task) != before[0] and task_hash(task) != before[1]
    monkeypatch.undo()
    assert (fingerprint(task), task_hash(task)) == before
    monkeypatch.setattr(audit_fingerprints, "MODES", audit_fingerprints.MODES[:-1])
    assert fingerprint(task) != before[0]


def test_a_resumed_audit_runs_again_the_tasks_whose_files_changed(tmp_path):
    run = tmp_path / "null"
    (run / "traces" / "B4-standard-null-0").mkdir(parents=True)
    (run / "traces" / "B5-standard-null-0").mkdir(parents=True)
    lines = [{"task": "B4", "mode": "standard"}, {"task": "B5", "mode": "standard"}]
    (run / "episodes.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert forget_changed(tmp_path, ["B4", "B5"]) == []  # first run: nothing to compare with
    known = json.loads((tmp_path / "fingerprints.json").read_text())
    (tmp_path / "fingerprints.json").write_text(json.dumps({**known, "B4": "an older one"}))
    assert forget_changed(tmp_path, ["B4", "B5"]) == ["B4"]
    assert [json.loads(x)["task"] for x in (run / "episodes.jsonl").read_text().splitlines()] == [
        "B5"
    ]
    assert sorted(p.name for p in (run / "traces").iterdir()) == ["B5-standard-null-0"]
    assert forget_changed(tmp_path, ["B4", "B5"]) == []


def test_the_summary_counts_tasks_and_lists_failures():
    rows = [
        {"task": "A1", "check": "solvable", "mode": "aoi_interactive", "ok": True, "reason": ""},
        {"task": "A1", "check": "null", "mode": "standard", "ok": True, "reason": ""},
        {
            "task": "A2",
            "check": "solvable",
            "mode": "aoi_interactive",
            "ok": False,
            "reason": "the scripted solution ended 'timeout'",
        },  # fmt: skip
        {
            "task": "A2",
            "check": "random",
            "mode": "aoi_interactive",
            "ok": False,
            "reason": "the random agent solved it",
        },  # fmt: skip
    ]
    item = {"task": "A1", "check": "evidence", "evidence": 1, "channel": "visual"}
    rows += [
        {**item, "transient": True, "mode": "aoi_full", "seen": True, "ok": True, "reason": ""},
        {
            **item,
            "transient": True,
            "mode": "standard",
            "seen": True,
            "chance": 0.8,
            "ok": False,
            "reason": "a screenshot-only agent stepping about every 10 s sees it 80% of the time",
        },
    ]
    text = render_summary(rows, ["A1", "A2"])
    assert "| visual (transient) | 1/1 | - | - | - | 1/1 | - | - | 80% |" in text
    assert "| A1 | 1/1! | - | - | - | 1/1 | - | - |" in text
    assert "- A1 evidence (standard, evidence #1): a screenshot-only agent" in text
    assert "Solvable (every seed of the scripted solution succeeds): 1/2" in text
    assert "Guessable (the null, random or near-miss agent succeeds): 1/2" in text
    assert "| A2 | FAIL | - | FAIL | - | - |" in text
    assert "- A2 random (aoi_interactive): the random agent solved it" in text


def _evidence_row(task, number, channel, mode, transient=False, **fields):
    row = {"task": task, "check": "evidence", "evidence": number, "channel": channel}
    return {**row, "transient": transient, "mode": mode, "ok": True, "reason": "", **fields}


def test_the_summary_counts_what_the_element_lists_held():
    rows = []
    # A1's spoken item is listed in aoi_audio's lists (a leak); A2's in none.
    for task, leak in (("A1", True), ("A2", False)):
        rows += [
            _evidence_row(task, 1, "audio", "standard", seen=False),
            _evidence_row(task, 1, "audio", "standard_structured", seen=False, listed=False),
            _evidence_row(task, 1, "audio", "aoi_audio", seen=True, listed=leak),
            _evidence_row(task, 1, "audio", "timeline", seen=False, listed=False),
        ]
    # A transient flash: standard's screenshots miss it, standard_structured's lists have it.
    flash = {"transient": True}
    rows += [
        _evidence_row("A1", 2, "visual", "standard", seen=False, chance=0.2, **flash),
        _evidence_row(
            "A1", 2, "visual", "standard_structured", seen=True, listed=True, chance=0.4, **flash
        ),
        _evidence_row("A1", 2, "visual", "aoi_visual", seen=True, listed=False, **flash),
        _evidence_row("A1", 2, "visual", "timeline", seen=True, listed=True, **flash),
    ]
    text = render_summary(rows, ["A1", "A2"])
    assert "- Audio evidence listed in page elements: 1/2 (in any mode" in text
    assert "| audio | 0/2 | 0/2 | - | 2/2 | - | - | 0/2 | - |" in text
    assert "| audio, listed | - | 0/2 | - | 1/2 | - | - | 0/2 | - |" in text
    assert "| visual (transient) | 0/1 | 1/1 | 1/1 | - | - | - | 1/1 | 20% |" in text
    # Beside standard's 0/1 screenshots: the lists' count, and the list agents' chance.
    assert "| visual (transient), listed | - | 1/1 | 0/1 | - | - | - | 1/1 | 40% |" in text
    assert "lasting), listed" not in text  # no lasting item
    assert "Judged before the element list" not in text


def test_rows_judged_before_the_element_list_load_and_are_named(tmp_path):
    # An audit of the five modes before the channel: its rows have no "listed".
    old = [
        _evidence_row("A1", 1, "audio", m, seen=m != "standard")
        for m in ("standard", "aoi_audio", "timeline")
    ]
    new = [_evidence_row("A2", 1, "audio", "aoi_audio", seen=True, listed=False)]
    new += [_evidence_row("A2", 1, "audio", "standard", seen=False)]
    write_audit(tmp_path / "old", old, ["A1"])
    write_audit(tmp_path / "new", new, ["A2"])
    assert "listed in page elements" not in (tmp_path / "old" / "audit.md").read_text()
    merged, tasks, stale = merge_audits([tmp_path / "old", tmp_path / "new"])
    assert stale == ["A1", "A2"]  # hashes missing here; a real old row's hash has changed too
    text = render_summary(merged, tasks, stale=stale)
    assert "- Audio evidence listed in page elements: 0/1 (in any mode" in text  # A2's only
    assert "- Judged before the element list (no element checks, listed below): 1/2" in text
    assert "## Judged before the element list (1)" in text
    assert "chance with the list): audit them again.\n\nA1\n" in text


def test_audits_run_in_parts_merge_and_flag_the_tasks_changed_since(tmp_path):
    def rows(task, ok, hash_of=None):
        hashed = task_hash(hash_of or find_task(task))
        return [
            {"task": task, "check": c, "mode": "standard", "ok": ok, "reason": "", "task_hash": h}
            for c, h in (("solvable", hashed), ("null", hashed))
        ]

    b4 = find_task("B4")
    relabelled = dataclasses.replace(b4, evidence=b4.evidence[:1])  # evidence changed since
    write_audit(tmp_path / "B", rows("B4", False) + rows("B5", True, relabelled), ["B4", "B5"])
    write_audit(tmp_path / "B-again", rows("B4", True), ["B4"])
    write_audit(tmp_path / "A", rows("A1", True), ["A1"])
    merged, tasks, stale = merge_audits([tmp_path / "B", tmp_path / "B-again", tmp_path / "A"])
    assert tasks == ["A1", "B4", "B5"]  # catalogue order
    assert [(r["task"], r["ok"]) for r in merged if r["check"] == "null"] == [
        ("A1", True),
        ("B4", True),  # the later audit of B4 stands
        ("B5", True),
    ]
    assert stale == ["B5"]  # judged on B4's evidence, not B5's
    write_audit(tmp_path / "all", merged, tasks, stale=stale)
    assert (
        "Changed since they were audited (listed below): 1/3"
        in (tmp_path / "all" / "audit.md").read_text()
    )
    with pytest.raises(AuditError, match="no audit.jsonl"):
        merge_audits([tmp_path / "nowhere"])


def test_a_partial_audit_replaces_only_the_checks_and_modes_it_judged(tmp_path):
    hashed = task_hash(find_task("A1"))
    whole = [
        {"task": "A1", "check": "solvable", "mode": "aoi_interactive", "repeat": k, "ok": True}
        for k in range(3)
    ]
    whole += [
        _evidence_row("A1", n, "visual", m, seen=True)
        for n in (1, 2)
        for m in ("timeline", "standard", "aoi_visual")
    ]
    # Judged again: standard_structured (new) and the timeline (its mode gained the lists).
    again = [
        _evidence_row("A1", n, "visual", m, seen=True, listed=n == 1)
        for n in (1, 2)
        for m in ("timeline", "standard_structured")
    ]
    write_audit(tmp_path / "whole", whole, ["A1"])
    write_audit(tmp_path / "lists", [{**r, "task_hash": hashed} for r in again], ["A1"])
    merged, tasks, stale = merge_audits([tmp_path / "whole", tmp_path / "lists"])
    assert tasks == ["A1"] and stale == ["A1"]  # the whole audit's rows carry no hash here
    assert [r["repeat"] for r in merged if r["check"] == "solvable"] == [0, 1, 2]
    evidence = [(r["evidence"], r["mode"], r.get("listed")) for r in merged[3:]]
    assert evidence == [
        (n, m, (n == 1) if m in ("timeline", "standard_structured") else None)
        for n in (1, 2)
        for m in ("timeline", "standard", "standard_structured", "aoi_visual")
    ]


def test_the_audit_scope_names_what_it_expected():
    assert audit.check_audit_scope(["silent", "evidence"], ["aoi_full", "standard"]) == (
        ["evidence", "silent"],
        ["standard", "aoi_full"],
    )
    assert audit.check_audit_scope(["null"], []) == (["null"], [])
    # A channel set that is a preset is known by its name.
    assert audit.check_audit_scope(["evidence"], ["elements"])[1] == ["standard_structured"]
    with pytest.raises(ValueError, match="unknown audit check 'evidense'; expected some of"):
        audit.check_audit_scope(["evidense"], ["standard"])
    with pytest.raises(ValueError, match="watches the preset modes, not 'elements\\+narration'"):
        audit.check_audit_scope(["evidence"], ["narration+elements"])
    with pytest.raises(ValueError, match="watch in modes: expected at least one"):
        audit.check_audit_scope(["silent"], [])
    with pytest.raises(ValueError, match="expected at least one audit check"):
        audit.check_audit_scope([], ["standard"])


def test_ocr_reads_a_small_caption_light_on_dark(tmp_path):
    # A9's artwork caption (14 px, white on dark over the art), from a real screenshot: read at
    # screen size, tesseract gave "Priya’: oint 3 Fairer for low income:".
    screen = tmp_path / "screen.png"
    shutil.copy(Path(__file__).parent / "fixtures" / "screens" / "podcast-caption.png", screen)
    text = audit.ocr(screen)
    assert seen(["Priya's point 3", "Fairer for low incomes"], text, every=True), text
    assert audit.ocr(screen) == text
    assert (tmp_path / "screen.txt").is_file() and (tmp_path / "screen.ocr2.txt").is_file()


def test_ocr_reads_a_chart_label_that_enlarging_loses(tmp_path):
    # C2's lecture chart labels the healthy adults' bar 5.7; enlarged, tesseract reads "57".
    screen = tmp_path / "screen.png"
    shutil.copy(Path(__file__).parent / "fixtures" / "screens" / "lecture-chart.png", screen)
    assert key_found("5.7", audit.ocr(screen))
    assert not key_found("5.7", (tmp_path / "screen.ocr2.txt").read_text())


def test_identical_frames_are_read_once(tmp_path, monkeypatch):
    fixture = Path(__file__).parent / "fixtures" / "screens"
    frames = [tmp_path / f"{k}.png" for k in range(4)]
    for frame, name in zip(frames, ["podcast-caption", "lecture-chart"] * 2, strict=True):
        shutil.copy(fixture / f"{name}.png", frame)
    runs = []
    real = audit_reading.tesseract
    monkeypatch.setattr(audit_reading, "tesseract", lambda: runs.append(1) or real())
    audit.ocr_all(frames[:1], workers=2)  # one read before: its copy is not read again
    assert len(runs) == len(audit.OCR_SCALES)
    audit.ocr_all(frames, workers=2)
    assert len(runs) == 2 * len(audit.OCR_SCALES)  # the chart, once
    assert [audit.ocr(f) for f in frames[2:]] == [audit.ocr(f) for f in frames[:2]]
    assert len(runs) == 2 * len(audit.OCR_SCALES)  # every copy has its text cached


def test_without_tesseract_the_audit_stops_before_any_episode(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(AuditError, match="tesseract-ocr"):
        run_audit(["A1"], tmp_path)
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.audio
def test_audit_of_a_real_task(tmp_path):
    """B4, end to end: its solution solves it, no baseline guesses it, Raj's spoken figure is
    heard only in the audio modes, and OCR reads the revenue slide in the keyframe modes."""
    if shutil.which("tesseract") is None:
        pytest.fail("tesseract is not installed: run make setup")
    rows = run_audit(["B4"], tmp_path, seeds=1, workers=2)
    episodes = [r for r in rows if r["check"] != "evidence"]
    assert {r["check"] for r in episodes} == {"solvable", "null", "random", "nearmiss"}
    assert all(r["ok"] for r in episodes), episodes
    evidence = {(r["evidence"], r["mode"]): r["seen"] for r in rows if r["check"] == "evidence"}
    assert [evidence[2, m] for m in MODES] == [False, False, False, True, True, True]
    assert not any(r.get("listed") for r in rows if r["check"] == "evidence" and r["evidence"] == 2)
    assert not evidence[2, audit.TIMELINE]  # Raj's figure is never on the page
    assert all(evidence[1, m] for m in (*audit.KEYFRAME_MODES, audit.TIMELINE))
    assert "| B4 | pass | pass | pass | pass |" in (tmp_path / "audit.md").read_text()


def test_a_static_control_is_judged_silent_only_without_keyframes_or_whisper(tmp_path):
    task = find_task("S1")
    quiet = Observed((), ((0.0, tmp_path / "0000.png"),))
    moving = dataclasses.replace(quiet, keyframes=2)
    heard = dataclasses.replace(quiet, heard=((1.0, 2.0, "Thank you."),), asr_calls=3)
    rows = audit.judge_silent(task, {"standard": quiet, "aoi_visual": moving, "aoi_audio": heard})
    assert [(r["mode"], r["ok"]) for r in rows] == [
        ("standard", True),
        ("aoi_visual", False),
        ("aoi_audio", False),
    ]
    assert rows[1]["reason"] == "2 keyframes on a static page"
    assert "3 Whisper calls" in rows[2]["reason"] and "'Thank you.'" in rows[2]["reason"]
    summary = render_summary(rows, ["S1"])
    assert "stay silent (no keyframe, no Whisper call, in every mode): 0/1" in summary


def test_a_static_page_is_waited_for_until_its_duration_not_its_time_limit():
    specs = [find_task(t) for t in ("S1", "A1", "S2", "J3")]
    groups = audit_run._waiting_groups(specs)
    assert groups == [
        (["A1", "J3"], {}),
        (["S1"], {"time_limit_s": 20.0}),  # each static page ends at its own duration
        (["S2"], {"time_limit_s": 30.0}),
    ]
    assert all(find_task(t).time_limit_s > 30.0 for t in ("S1", "S2"))
    assert audit_run._waiting_groups([find_task("A1")]) == [(["A1"], {})]


def test_a_trace_counts_its_keyframes_and_whisper_calls(tmp_path):
    for sub in ("records", "screens", "keyframes"):
        (tmp_path / sub).mkdir()
    steps = [
        {"step": 0, "elapsed": 0.1, "keyframe_times": []},
        {"step": 1, "elapsed": 5.0, "keyframe_times": [2.0, 3.0], "asr_calls": 2},
        {"step": 2, "elapsed": 9.0, "keyframe_times": [], "asr_calls": 1},
    ]
    (tmp_path / "trace.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    for n in range(3):
        (tmp_path / "records" / f"{n:04d}.txt").write_text("Observation Record\n")
    obs = read_trace(tmp_path)
    assert (obs.keyframes, obs.asr_calls) == (2, 3)


def test_a_partial_audit_says_which_checks_it_did_not_judge():
    rows = [_evidence_row("A1", 1, "audio", "standard_structured", seen=False, listed=False)]
    text = render_summary(rows, ["A1"])
    assert (
        "- Solvable (every seed of the scripted solution succeeds): not judged in this audit"
        in text
    )
    assert (
        "- Guessable (the null, random or near-miss agent succeeds): not judged in this audit"
        in text
    )
    assert "it should not): 1/1" in text
