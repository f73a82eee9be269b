"""Answer normalisation: Python and the page runtime agree on every shared case."""

from __future__ import annotations

import json

import pytest

from dynacu_gym.paths import tasks_root
from dynacu_gym.tasks.answers import KINDS, answer_hash, normalize

CASES = json.loads((tasks_root() / "_shared" / "normalize-cases.json").read_text())


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
