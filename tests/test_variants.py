"""Seeded variety: a task's [[variants]] give other answers, rendered (audio too) per seed."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import gymnasium as gym
import pytest

import dynacu_gym  # noqa: F401 - registers the envs
from dynacu_agents.oracle import OracleAgent
from dynacu_gym import parse_action
from dynacu_gym.env import make_env
from dynacu_gym.episode import run_episode
from dynacu_gym.tasks import (
    TaskFormatError,
    catalogue_order,
    find_task,
    load_task,
    task_folders,
)
from dynacu_gym.tasks.answers import mentions, normalize
from dynacu_gym.tasks.audio_assets import audio_clips, audio_dir, spoken_lines
from dynacu_gym.tasks.loader import _substitute

PROBE = Path(__file__).parent / "fixtures" / "tasks" / "F" / "90-input-probe"
VARIED = sorted((t for t in task_folders() if find_task(t).variants > 1), key=catalogue_order)


def test_some_tasks_vary():
    assert {"A5", "D6"} <= set(VARIED)


@pytest.mark.parametrize("task_id", VARIED)
def test_every_variant_loads_with_its_own_answers(task_id):
    task = find_task(task_id)
    assert task.variant == 0
    variants = [load_task(task.root, k) for k in range(task.variants)]
    for name in task.answers:
        values = [normalize(v.answers[name].kind, v.answers[name].accept[0]) for v in variants]
        assert len(set(values)) == len(values), f"{name}: variants share an answer: {values}"
    for v in variants:
        for name, spec in v.answers.items():
            # No near miss reads as an accepted form ("Error E-4173" may be accepted beside
            # "E-4173": the page hashes each form).
            accepted = {normalize(spec.kind, form) for form in spec.accept}
            assert None not in accepted, (v.variant, name, spec.accept)
            rejected = {normalize(spec.kind, form) for form in spec.reject}
            assert not accepted & rejected, (v.variant, name, spec.reject)
    with pytest.raises(ValueError, match=f"expected a variant in 0..{task.variants - 1}"):
        load_task(task.root, task.variants)


def _variants_played(ids: list[str]) -> list:
    """pytest params (task, variant) for each variant but the benchmark's; a solution that
    speaks marks its variants `speaks`, as in tests/tasks_sample.py: `make test-all` runs those
    one at a time, and the others beside each other."""
    return [
        pytest.param(t, k, marks=[pytest.mark.speaks] if find_task(t).solution_speaks else [])
        for t in ids
        for k in range(1, find_task(t).variants)
    ]


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize(("task_id", "variant"), _variants_played(VARIED))
def test_each_variant_is_solved_by_its_scripted_solution(task_id, variant):
    """In paused time: the solution, filled in with the variant's answers, succeeds."""
    task = load_task(find_task(task_id).root, variant)
    env = make_env(task, mode=task.solution_mode, clock="paused")
    try:
        outcome = run_episode(env, OracleAgent(env), seed=0)
    finally:
        env.close()
    assert outcome.success, outcome


def _overruns(task) -> dict[tuple[float, float], float]:
    """How far each spoken line runs past the start of the next one the page plays after it
    (lines with the same trigger; lines at the same time are alternatives), in seconds."""
    lanes: dict[str, list[tuple[float, float]]] = {}
    for (_, line), clip in zip(spoken_lines(task), audio_clips(task), strict=True):
        trigger = repr(sorted((k, v) for k, v in line.extra.items() if k in ("on", "if")))
        lanes.setdefault(trigger, []).append((line.t, clip["duration"]))
    out = {}
    for lane in lanes.values():
        lane.sort()
        for (t, duration), (t_next, _) in itertools.pairwise(lane):
            if t_next > t:
                out[(t, t_next)] = round(max(0.0, t + duration - t_next), 2)
    return out


SPOKEN_VARIANTS = [
    (t, k) for t in VARIED if spoken_lines(find_task(t)) for k in range(1, find_task(t).variants)
]


@pytest.mark.slow
@pytest.mark.parametrize(("task_id", "variant"), SPOKEN_VARIANTS)
def test_a_variants_voice_keeps_to_the_timeline(task_id, variant):
    """A variant's words take their own time to say (rendered with piper): none may run into
    the next line further than the benchmark's variant does (0.3 s of slack)."""
    base = _overruns(find_task(task_id))
    varied = _overruns(load_task(find_task(task_id).root, variant))
    late = {pair: (varied[pair], base[pair]) for pair in base if varied[pair] > base[pair] + 0.3}
    assert not late, f"(line, next line): (overrun, the benchmark's): {late}"


def _write(tmp_path, body: str):
    folder = tmp_path / "F" / "91-variant"
    shutil.copytree(PROBE, folder)
    text = (folder / "task.toml").read_text().replace('id = "F90"', 'id = "F91"')
    (folder / "task.toml").write_text(text.replace('title = "', 'title = "${word} ', 1) + body)
    return folder


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("", "\\$\\{word\\} names no variable \\(known: none"),
        ('\n[[variants]]\nword = "a"\n', "two or more \\[\\[variants\\]\\]"),
        ('\n[[variants]]\nword = "a"\n[[variants]]\nwrd = "b"\n', "the names of the first variant"),
        ('\n[[variants]]\nword = "a"\n[[variants]]\nword = "a"\n', "variants that differ"),
        ('\n[[variants]]\nword = "a"\nother = "x"\n[[variants]]\nword = "b"\nother = "y"\n',
         "'other', which no \\$\\{...\\} uses"),
        ('\n[[variants]]\nword = true\n[[variants]]\nword = "b"\n', "a string or a number"),
    ],
)  # fmt: skip
def test_a_bad_variant_table_is_named(tmp_path, body, message):
    with pytest.raises(TaskFormatError, match=message):
        load_task(_write(tmp_path, body))


def test_a_whole_number_reference_is_a_number():
    path = Path("task.toml")
    config = {"price": "${price:number}", "lines": ["Now ${price} dollars"], "keep": 3}
    assert _substitute(path, config, {"price": 96}, set()) == {
        "price": 96,
        "lines": ["Now 96 dollars"],
        "keep": 3,
    }
    with pytest.raises(TaskFormatError, match="must be a whole string"):
        _substitute(path, "Now ${price:number}", {"price": 96}, set())
    with pytest.raises(TaskFormatError, match="needs a number in every variant"):
        _substitute(path, "${price:number}", {"price": "cheap"}, set())


def test_a_good_variant_table_fills_every_string(tmp_path):
    folder = _write(tmp_path, '\n[[variants]]\nword = "Red"\n[[variants]]\nword = 7\n')
    assert load_task(folder).title.startswith("Red ")
    assert load_task(folder, 1).title.startswith("7 ")


@pytest.mark.browser
def test_seeds_draw_variants_and_the_page_grades_each_ones_answer():
    env = gym.make("DynaCU-D6-v0", variety=True, clock="paused")
    base = env.unwrapped
    try:
        drawn = {}
        for seed in range(12):
            _, info = env.reset(seed=seed)
            drawn.setdefault(info["variant"], seed)
            size = base.task.answers["size"].accept[0]
            others = {load_task(base.task.root, k).answers["size"].accept[0] for k in range(3)}
            matches = "([f, t]) => DynaCU.matches(f, t)"
            assert base.evaluate_in_page(matches, ["size", size])
            assert not any(base.evaluate_in_page(matches, ["size", o]) for o in others - {size})
            # The page shows this variant's review (reviews turn every 7 s: Dan's is 7-14 s).
            env.step(parse_action("wait 9"))
            text = base.evaluate_in_page("() => document.body.innerText")
            assert f"the {size} fits perfectly" in text
        assert sorted(drawn) == [0, 1, 2]  # every variant comes up
        _, again = env.reset(seed=drawn[1])
        assert again["variant"] == 1  # the same seed, the same variant
    finally:
        env.close()
    plain = gym.make("DynaCU-D6-v0", clock="paused")
    try:
        assert {plain.reset(seed=s)[1]["variant"] for s in drawn.values()} == {0}
    finally:
        plain.close()


@pytest.mark.browser
@pytest.mark.audio
@pytest.mark.slow
def test_a_variant_says_its_own_words(tmp_path, monkeypatch):
    """A5's variants say other discounts: their audio is rendered into the cache and played."""
    monkeypatch.setenv("DYNACU_CACHE", str(tmp_path))
    env = gym.make("DynaCU-A5-v0", mode="aoi_audio", variety=True, clock="paused")
    try:
        seed = next(s for s in range(20) if env.reset(seed=s)[1]["variant"] == 2)
        task = env.unwrapped.task
        assert (
            audio_dir(task).is_relative_to(tmp_path) and (audio_dir(task) / "line-00.ogg").is_file()
        )
        env.reset(seed=seed)
        discount = task.answers["discount"]
        # Its line ends near 20 s and is committed a second or two later (more on a busy machine:
        # three episodes beside it once left the step at 20 s half way through the line).
        obs, *_ = env.step(parse_action("wait 20"))
        for _ in range(6):
            if mentions(discount.kind, discount.accept, obs["audio_context"]):
                break
            obs, *_ = env.step(parse_action("wait 1"))
        assert mentions(discount.kind, discount.accept, obs["audio_context"]), obs["audio_context"]
    finally:
        env.close()
