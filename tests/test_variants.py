"""Seeded variety: a task's [[variants]] give other answers, rendered (audio too) per seed."""

from __future__ import annotations

import shutil

import gymnasium as gym
import pytest

import dynacu_gym  # noqa: F401 - registers the envs
from dynacu_gym import parse_action
from dynacu_gym.answers import mentions
from dynacu_gym.audio_assets import audio_dir
from dynacu_gym.tasks import TaskFormatError, find_task, load_task

VARIED = ["A5", "D6"]


@pytest.mark.parametrize("task_id", VARIED)
def test_every_variant_loads_with_its_own_answers(task_id):
    task = find_task(task_id)
    assert task.variant == 0 and task.variants >= 3
    variants = [load_task(task.root, k) for k in range(task.variants)]
    answers = [{n: spec.accept for n, spec in v.answers.items()} for v in variants]
    for name in answers[0]:
        assert len({a[name][0] for a in answers}) == len(variants), name  # each its own answer
    for v in variants:  # an answer is never another's near miss within one variant
        for spec in v.answers.values():
            assert not set(spec.accept) & set(spec.reject)
    with pytest.raises(ValueError, match="expected a variant in 0..2"):
        load_task(task.root, 3)


def _write(tmp_path, body: str):
    folder = tmp_path / "F" / "91-variant"
    folder.mkdir(parents=True)
    shutil.copy(find_task("F1").root / "task.toml", folder / "task.toml")
    text = (folder / "task.toml").read_text().replace('id = "F1"', 'id = "F91"')
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
        obs, *_ = env.step(parse_action("wait 20"))
        discount = task.answers["discount"]
        assert mentions(discount.kind, discount.accept, obs["audio_context"]), obs["audio_context"]
    finally:
        env.close()
