"""Answer normalisation: Python and the page runtime agree on every shared case."""

from __future__ import annotations

import json

import pytest

from dynacu_gym.paths import tasks_root
from dynacu_gym.tasks.answers import KINDS, answer_hash, normalize, readings

CASES = json.loads((tasks_root() / "_shared" / "normalize-cases.json").read_text())
# What a sentence says, by kind: a run inside a longer reading of another value is not its own.
READINGS = json.loads((tasks_root() / "_shared" / "reading-cases.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['kind']}:{c['input']}")
def test_python_normalisation(case):
    assert normalize(case["kind"], case["input"]) == case["expected"]


def test_cases_cover_every_kind():
    assert {c["kind"] for c in CASES} == set(KINDS)


def test_unknown_kind_is_an_error():
    with pytest.raises(ValueError, match="expected an answer kind"):
        normalize("colour", "red")


def test_hash_depends_on_salt_and_field():
    assert answer_hash("s1", "a", "12") != answer_hash("s2", "a", "12")
    assert answer_hash("s1", "a", "12") != answer_hash("s1", "b", "12")


@pytest.mark.parametrize("case", READINGS, ids=lambda c: f"{c['kind']}:{c['text']}")
def test_python_readings(case):
    assert sorted(readings(case["kind"], case["text"])) == case["readings"]


@pytest.mark.browser
def test_page_normalisation_matches_python(probe_env):
    """The same cases through dynacu-task.js in the real browser."""
    probe_env.reset(seed=0)
    got = probe_env.evaluate_in_page(
        "cases => cases.map(c => window.DynaCU.normalize(c.kind, c.input))", CASES
    )
    mismatches = [
        (c["kind"], c["input"], c["expected"], g)
        for c, g in zip(CASES, got, strict=True)
        if g != c["expected"]
    ]
    assert not mismatches
    got = probe_env.evaluate_in_page(
        "cases => cases.map(c => window.DynaCU.readings(c.kind, c.text))", READINGS
    )
    assert [c["readings"] for c in READINGS] == got
