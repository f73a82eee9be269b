"""Spoken answers: what the agent said, judged as the page judges it, against what a listening
page heard and decided (the episode line's ``said`` and ``spoken_answers``)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import dynacu_gym  # noqa: F401 - registers the envs
from dynacu_agents import NearMissAgent, OracleAgent
from dynacu_gym.episode import Said, answered_aloud, run_episode, spoken_answers
from dynacu_gym.tasks import AnswerSpec, find_task
from dynacu_gym.tasks.answers import spoken_verdict

CAPITAL = AnswerSpec("text", ("Canberra", "the city of Canberra"), ("Sydney", "Melbourne"))
REVENUE = AnswerSpec("number", ("2.6 million",), ("2.4 million",))
RENEWAL = AnswerSpec("date", ("September 22",), ("September 2", "September 20"))


def _heard(field: str, text: str, verdict: str | None, at: float) -> dict:
    return {"field": field, "text": text, "verdict": verdict, "at": at}


@pytest.mark.parametrize(
    ("spec", "text", "verdict"),
    [
        (CAPITAL, "The capital of Australia is Canberra.", "accepted"),
        (CAPITAL, "It is Sydney.", "rejected"),
        (CAPITAL, "Sydney, or maybe Canberra.", "rejected"),  # hedging counts as wrong
        (CAPITAL, "Let me think about that.", None),
        (REVENUE, "It came in at two point six million dollars.", "accepted"),
        (REVENUE, "Two point four million.", "rejected"),
        # The recogniser's "20 second" is the 22nd; "second of September" inside it is no 2nd.
        (RENEWAL, "It renews on the 20 second of September.", "accepted"),
        (RENEWAL, "The second of September, I think.", "rejected"),
    ],
)
def test_said_text_is_judged_as_the_page_judges_it(spec, text, verdict):
    assert spoken_verdict(spec.kind, spec.accept, spec.reject, text) == verdict


def test_an_answer_the_page_heard_right_is_received():
    said = [Said("The capital of Australia is Canberra.", 14.2)]
    heard = [_heard("capital", "The capital of Australia is Canberra.", "accepted", 16.0)]
    assert spoken_answers({"capital": CAPITAL}, said, heard) == [
        {
            "field": "capital",
            "said": "The capital of Australia is Canberra.",
            "said_verdict": "accepted",
            "heard": "The capital of Australia is Canberra.",
            "heard_verdict": "accepted",
            "received": True,
        }
    ]


def test_a_near_miss_heard_as_said_is_received_and_a_misheard_answer_is_not():
    near = spoken_answers(
        {"capital": CAPITAL},
        [Said("It is Sydney.", 13.0)],
        [_heard("capital", "It is Sydney.", "rejected", 15.0)],
    )
    assert [(e["said_verdict"], e["heard_verdict"], e["received"]) for e in near] == [
        ("rejected", "rejected", True)
    ]
    misheard = spoken_answers(
        {"capital": CAPITAL},
        [Said("Canberra.", 13.0)],
        [_heard("capital", "Can bear a.", None, 15.0)],
    )
    assert [(e["said_verdict"], e["heard_verdict"], e["received"]) for e in misheard] == [
        ("accepted", None, False)
    ]


def test_words_without_a_verdict_are_no_spoken_answer():
    said = [Said("Let me think about that.", 13.0)]
    heard = [_heard("capital", "Let me think about that.", None, 15.0)]
    assert spoken_answers({"capital": CAPITAL}, said, heard, aloud={"capital"}) == []


def test_the_said_text_that_counts_is_the_last_to_end_before_the_pages_verdict():
    said = [
        Said("Hmm.", 9.0),
        Said("It is Sydney.", 11.0),
        Said("No wait, Canberra.", 16.0),  # after the page had decided
    ]
    heard = [_heard("capital", "It is Sydney.", "rejected", 13.0)]
    (entry,) = spoken_answers({"capital": CAPITAL}, said, heard)
    assert (entry["said"], entry["said_verdict"], entry["received"]) == (
        "It is Sydney.",
        "rejected",
        True,
    )
    # Never judged by the page: the agent's last word for the field counts, and was not heard.
    (entry,) = spoken_answers({"capital": CAPITAL}, said, [], aloud={"capital"})
    assert (entry["said"], entry["heard"], entry["heard_verdict"], entry["received"]) == (
        "No wait, Canberra.",
        None,
        None,
        False,
    )


def test_only_fields_judged_by_ear_count():
    answers = {"capital": CAPITAL, "revenue": REVENUE}
    said = [Said("Canberra, and revenue was 2.6 million.", 12.0)]
    # The page heard nothing; only the field the task answers aloud is a spoken answer.
    assert [e["field"] for e in spoken_answers(answers, said, [], aloud={"capital"})] == ["capital"]
    # What the page logged a verdict of heard speech for counts too.
    heard = [_heard("revenue", "Revenue was 2.6 million.", "accepted", 14.0)]
    assert [e["field"] for e in spoken_answers(answers, said, heard, aloud={"capital"})] == [
        "capital",
        "revenue",
    ]
    assert spoken_answers(answers, said, []) == []


def test_fields_answered_aloud_are_the_ones_a_listening_solution_speaks():
    assert answered_aloud(find_task("H1")) == {"capital"}
    # I9 answers the launch date aloud and the rejected suggestion in the document.
    assert answered_aloud(find_task("I9")) == {"launch"}
    assert answered_aloud(find_task("A1")) == set()


def _episode(agent_class):
    env = gym.make("DynaCU-H1-v0", mode="aoi_interactive")
    try:
        outcome = run_episode(env, agent_class(env), seed=0)
        base = env.unwrapped
        # Judging from outside (a test's DynaCU.mentions) is not a spoken answer; the log the
        # page exposes is a copy.
        logged = base.evaluate_in_page(
            """async () => {
              await DynaCU.mentions("capital", "Canberra");
              DynaCU.verdicts.push({field: "capital"});
              return DynaCU.verdicts.length;
            }"""
        )
        channels = list(getattr(base, "channels", ()))
    finally:
        env.close()
    return outcome, logged, channels


@pytest.mark.browser
@pytest.mark.audio
@pytest.mark.speaks
@pytest.mark.parametrize(
    ("agent_class", "said", "verdict", "result"),
    [
        (OracleAgent, "The capital of Australia is Canberra.", "accepted", "success"),
        (NearMissAgent, "The capital of Australia is Sydney.", "rejected", "wrong_answer"),
    ],
)
def test_an_episode_line_says_whether_the_page_received_the_spoken_answer(
    agent_class, said, verdict, result
):
    outcome, logged, channels = _episode(agent_class)
    assert outcome.result == result, outcome
    assert outcome.said == [said]
    (entry,) = outcome.spoken_answers
    assert entry["field"] == "capital" and entry["said"] == said
    assert (entry["said_verdict"], entry["heard_verdict"], entry["received"]) == (
        verdict,
        verdict,
        True,
    )
    assert entry["heard"] in outcome.heard
    assert said.rstrip(".").split()[-1].lower() in entry["heard"].lower()
    assert logged == 1
    assert outcome.channels == channels
    line = outcome.to_dict()
    assert line["said"] == [said] and line["spoken_answers"] == [entry]
