"""The validity audit: how evidence is looked for, and a whole audit of a real task."""

from __future__ import annotations

import json
import shutil

import pytest

from dynacu_gym import audit
from dynacu_gym.audit import (
    AuditError,
    Observed,
    evidence_keys,
    expected_seen,
    key_found,
    read_trace,
    render_summary,
    run_audit,
    seen,
)
from dynacu_gym.tasks import Evidence


def test_keys_come_from_the_item_or_from_the_numbers_and_quotes_of_its_fact():
    given = Evidence("Raj gives the APAC figure", "audio", (9.0, 14.0), keys=("2.6", "Asia"))
    assert evidence_keys(given) == ("2.6", "Asia")
    derived = Evidence(
        'the slide says "pending close" and lists $4,800, 3:30 and 15%', "visual", (0, 5)
    )
    assert evidence_keys(derived) == ("$4,800", "3:30", "15%", "pending close")
    assert evidence_keys(Evidence("Marco says how many bugs", "audio", (0, 5))) == ()


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
    ],
)
def test_a_key_is_found_in_words_and_digits_alike(key, text, found):
    assert key_found(key, text) is found


def test_an_item_is_seen_when_half_its_keys_are_found():
    assert seen(["4.2", "3.1", "1.4", "2.0"], "North America 4.2 Europe 3.1 (unreadable)")
    assert not seen(["4.2", "3.1", "1.4"], "North America 4.2")
    assert not seen([], "anything")


def test_the_premise_per_channel_and_mode():
    spoken = Evidence("x", "audio", (0, 1))
    assert [expected_seen(spoken, m) for m in audit.MODES] == [False, False, True, True, True]
    flash = Evidence("x", "visual", (0, 1), transient=True)
    assert [expected_seen(flash, m) for m in audit.MODES] == [False, True, None, True, True]
    lasting = Evidence("x", "visual", (0, 1))
    assert all(expected_seen(lasting, m) for m in audit.MODES)


def test_observed_text_is_what_was_heard_and_read_inside_the_window(tmp_path, monkeypatch):
    monkeypatch.setattr(audit, "ocr", lambda path: path.stem)
    obs = Observed(
        heard=((2.0, 4.0, "early words"), (10.0, 12.0, "late words")),
        frames=((3.0, tmp_path / "frame-a.png"), (11.0, tmp_path / "frame-b.png")),
    )
    assert obs.text(0.0, 5.0) == "early words\nframe-a"
    assert obs.text(10.5, 20.0) == "late words\nframe-b"


def test_a_trace_is_read_back_with_its_times(tmp_path):
    for sub in ("records", "screens", "keyframes"):
        (tmp_path / sub).mkdir()
    steps = [
        {"step": 0, "elapsed": 0.2, "keyframe_times": []},
        {"step": 1, "elapsed": 5.3, "keyframe_times": [2.5, 4.0]},
    ]
    (tmp_path / "trace.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    heard = '[RECENT AUDIO — last 5.0 seconds]\n(1.0s–3.5s) "The launch moves to May 12."\n'
    (tmp_path / "records" / "0000.txt").write_text("Observation Record\n")
    (tmp_path / "records" / "0001.txt").write_text(heard)
    obs = read_trace(tmp_path)
    assert obs.heard == ((1.0, 3.5, "The launch moves to May 12."),)
    assert [t for t, _ in obs.frames] == [0.2, 2.5, 4.0, 5.3]
    assert obs.frames[1][1] == tmp_path / "keyframes" / "0001-1.png"


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
    text = render_summary(rows, ["A1", "A2"])
    assert "Solvable (every seed of the scripted solution succeeds): 1/2" in text
    assert "Guessable (the null, random or near-miss agent succeeds): 1/2" in text
    assert "| A2 | FAIL | - | FAIL | - | - |" in text
    assert "- A2 random (aoi_interactive): the random agent solved it" in text


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
    assert [evidence[2, m] for m in audit.MODES] == [False, False, True, True, True]
    assert all(evidence[1, m] for m in audit.KEYFRAME_MODES)
    assert "| B4 | pass | pass | pass | pass |" in (tmp_path / "audit.md").read_text()
