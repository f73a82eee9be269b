"""The page elements channel: it lists what the screen shows, and nothing the screen does not.

On a probe page that hides text every way a page can, the list is exact. On every app, at
moments of a real episode (the scripted solution playing, so dialogs open and calls connect),
every listed text is read back by OCR from its box in the screenshot of that moment, and no
audio evidence of the task is in any list. Clicks on elements land on their centre.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import FIXTURES
from PIL import Image, ImageOps

import dynacu_gym  # noqa: F401 - registers the envs
from dynacu_agents import OracleAgent
from dynacu_gym.actions import ActionType, validate_action
from dynacu_gym.audit import seen
from dynacu_gym.env import DynaCUEnv
from dynacu_gym.episode import run_episode
from dynacu_gym.modes import apply_mode
from dynacu_gym.tasks import find_task, load_task, task_folders

pytestmark = pytest.mark.browser

PROBE = FIXTURES / "tasks" / "F" / "92-elements-probe"
# The first task of every app: podcast, meeting, video, carousel, dashboard, webform,
# softphone, interview, docs, game, and the static site.
APP_TASKS = ("A1", "B1", "C1", "D1", "E1", "F1", "G1", "H1", "I1", "J1", "S1")
READ_SHARE = 0.85  # of the listed texts with words, at least this share OCR reads back (it
# misses small grey captions: the letters under a softphone keypad's digits)
WORD = re.compile(r"[A-Za-z0-9]{3,}")


# ---- reading a box back ---------------------------------------------------------------------


SCALES = (3, 5)  # each box is read enlarged three and five times


def _crop(image: np.ndarray, element: dict[str, Any], scale: int, path: Path) -> Path:
    """The element's box of ``image``, enlarged ``scale`` times, saved for tesseract.

    A text's box is its glyphs', so it gets a margin; a control's is its border's, which
    tesseract reads as noise, so it is cut 3 px inside. The crop is stretched to full
    contrast and padded with its ground, the median shade of its edge (its corner was the page
    around a rounded button, and tesseract read nothing in a frame of another shade); light
    text on a dark ground is inverted, since tesseract reads dark text on light.
    """
    x, y, w, h = element["box"]
    d = -4 if element["role"] == "text" else 3
    crop = Image.fromarray(image).crop((max(0, x + d), max(0, y + d), x + w - d, y + h - d))
    crop = crop.convert("L").resize((crop.width * scale, crop.height * scale))
    crop = ImageOps.autocontrast(crop)
    pixels = np.asarray(crop)
    ground = int(np.median(np.concatenate([pixels[0], pixels[-1], pixels[:, 0], pixels[:, -1]])))
    if ground < 128:
        crop, ground = ImageOps.invert(crop), 255 - ground
    crop = ImageOps.expand(crop, 20, fill=ground)
    crop.save(path)
    return path


def _tesseract(paths: list[Path], folder: Path) -> list[str]:
    """What tesseract reads in each image, in one process for them all.

    Given a list of images, tesseract writes each page's text followed by a form feed, a
    blank page's as nothing, so the output splits into one part per image.
    """
    listing = folder / f"list-{paths[0].stem}.txt"
    listing.write_text("".join(f"{p}\n" for p in paths))
    out = subprocess.run(
        [shutil.which("tesseract") or "tesseract", str(listing), "stdout", "--psm", "6"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_THREAD_LIMIT": "1"},  # two processes share the two cores
    )
    pages = out.stdout.split("\f")
    if len(pages) == len(paths) + 1 and not pages[-1].strip():
        pages.pop()  # a separator after the last page too, where a version writes one
    assert len(pages) == len(paths), f"tesseract read {len(pages)} pages of {len(paths)}"
    return pages


def _ocr(image: np.ndarray, elements: list[dict[str, Any]], folder: Path) -> list[str]:
    """What tesseract reads in each element's box, at each of :data:`SCALES`, one text each."""
    paths = [
        _crop(image, e, scale, folder / f"{i}-{scale}.png")
        for i, e in enumerate(elements)
        for scale in SCALES
    ]
    half = len(elements) // 2 * len(SCALES)
    chunks = [chunk for chunk in (paths[:half], paths[half:]) if chunk]
    with ThreadPoolExecutor(2) as pool:
        read = list(pool.map(lambda chunk: _tesseract(chunk, folder), chunks))
    pages = [page for part in read for page in part]
    return ["\n".join(pages[i : i + len(SCALES)]) for i in range(0, len(pages), len(SCALES))]


def _readable(text: str, ocr_text: str) -> bool:
    """Whether OCR read half the words of ``text`` (three letters or more; near misses count)."""
    words = [w.lower() for w in WORD.findall(text)]
    read = {w.lower() for w in WORD.findall(ocr_text)}
    joined = re.sub(r"\s+", "", ocr_text.lower())  # letter-spaced capitals ("A B C") read apart
    found = sum(
        w in read or w in joined or bool(difflib.get_close_matches(w, read, cutoff=0.75))
        for w in words
    )
    return 2 * found >= len(words)


def _shown(element: dict[str, Any]) -> str:
    """The rendered words of a listed element: its text and value (a label may be an icon's)."""
    return f"{element['text']} {element.get('value', '')}".strip()


def unreadable(image: np.ndarray, elements: list[dict[str, Any]]) -> tuple[int, list[str]]:
    """How many listed texts were checked, and those OCR could not read back in their box."""
    checked = [e for e in elements if WORD.search(_shown(e))]
    with tempfile.TemporaryDirectory() as tmp:
        texts = _ocr(image, checked, Path(tmp))
    return len(checked), [
        f"[{e['index']}] {e['role']} {_shown(e)!r} read as {t.strip()!r}"
        for e, t in zip(checked, texts, strict=True)
        if not _readable(_shown(e), t)
    ]


# ---- the probe page -------------------------------------------------------------------------


@pytest.fixture
def probe() -> Any:
    env = apply_mode(DynaCUEnv(load_task(PROBE)), "standard_structured")
    yield env
    env.close()


def _listed(info: dict[str, Any]) -> list[tuple]:
    return [
        (e["role"], e["text"], e["label"], e["value"], tuple(e["states"])) for e in info["elements"]
    ]


def test_the_probe_lists_what_is_seen_and_nothing_else(probe):
    obs, info = probe.reset(seed=0)
    assert _listed(info) == [
        ("button", "Confirm", "", "", ()),
        ("text", "Overlay on top", "", "", ()),
        ("text", "Shown words", "", "", ()),  # the rest of the line is clipped away
        ("text", "Visible start of a very\u2026", "", "", ()),  # as its ellipsis shows it
        ("text", "Plain words", "", "", ()),  # not its title or data attributes
        ("text", "Half bold together", "", "", ()),
        ("label", "Your name", "", "", ()),
        ("textbox", "", "", "Ada Lovelace", ()),
        ("textbox", "", "Search here", "", ()),  # the placeholder an empty input shows
        ("textbox", "", "", "\u2022" * 7, ()),  # a password shows dots
        ("combobox", "", "", "Rome", ()),  # the chosen option, not the others
        ("checkbox", "I agree", "", "", ("checked",)),  # once, as its label
        ("button", "Disabled one", "", "", ("disabled",)),
        ("link", "Next page", "", "", ()),
        ("editable", "Editable note", "", "", ()),
        ("button", "\u2715", "", "", ()),
        ("clickable", "Card you can click", "", "", ()),  # the page listens to its clicks
        ("text", "Later text", "", "", ()),
    ]
    text = obs["elements"]
    for hidden in (
        "COVERED", "NONETEXT", "HIDDENTEXT", "CLEARTEXT", "GHOSTTEXT", "OFFSCREEN", "BELOWTEXT",
        "ZEROTEXT", "CLIPPEDAWAY", "CUTOFFTAIL", "SRONLY", "TITLEATTR", "DATAATTR", "ATTRLABEL",
        "TEMPLATE", "HIDDENVALUE", "OPTIONTEXT", "HIDDENTITLE", "hunter2",
    ):  # fmt: skip
        assert hidden not in text and hidden not in obs["record"], hidden
    assert "[PAGE ELEMENTS" in obs["record"] and '[1] button "Confirm" at 200,100' in text
    # Every box lies on the screen, and its centre inside it.
    for e in info["elements"]:
        x, y, w, h = e["box"]
        assert 0 <= x and 0 <= y and x + w <= 1280 and y + h <= 720 and w >= 1 and h >= 1
        assert x <= e["center"][0] <= x + w and y <= e["center"][1] <= y + h


def test_the_ocr_check_can_fail(probe):
    obs, info = probe.reset(seed=0)
    covered = {"index": 99, "role": "text", "text": "COVEREDTEXT", "box": [120, 160, 150, 22]}
    wrong = {**info["elements"][0], "text": "Withdraw everything"}
    checked, bad = unreadable(obs["screenshot"], [*info["elements"], covered, wrong])
    assert checked == 15 + 2  # texts and values with words, and the two
    assert len(bad) == 2 and "COVEREDTEXT" in bad[0] and "Withdraw" in bad[1]


def test_a_click_on_an_element_clicks_its_centre_and_the_list_follows_the_page(probe):
    _, info = probe.reset(seed=0)
    card = next(e for e in info["elements"] if e["role"] == "clickable")
    obs, _, terminated, _, info = probe.step({"type": "click", "element": card["index"]})
    assert probe.unwrapped.evaluate_in_page("() => probe.cards") == 1 and not terminated
    assert info["last_action_error"] == ""
    assert 'Step 1: click [17] (clickable "Card you can click" at 758 558)' in obs["record"]
    obs, reward, terminated, _, info = probe.step(parse("click [1]  # the Confirm button"))
    assert probe.unwrapped.evaluate_in_page("() => probe.confirmed") == 1
    assert terminated and reward == 1.0
    assert 'click [1] (button "Confirm" at 200 100)  # the Confirm button' in obs["record"]
    # The confirm moved "Later text": this step's list shows it where this screenshot does.
    later = next(e for e in info["elements"] if e["text"] == "Later text")
    assert later["box"][0] == 700


def test_an_element_not_listed_is_an_agent_mistake(probe):
    _, info = probe.reset(seed=0)
    n = len(info["elements"])
    obs, _, terminated, truncated, info = probe.step({"type": "click", "element": n + 1})
    assert f"the last observation listed [1]..[{n}]" in info["last_action_error"]
    assert not terminated and not truncated
    assert probe.unwrapped.evaluate_in_page("() => probe.confirmed") == 0


def test_without_the_channel_an_element_click_says_which_mode_has_it(make_env):
    env = make_env(load_task(PROBE))
    obs, _ = env.reset(seed=0)
    assert "elements" not in obs and "[PAGE ELEMENTS" not in obs["record"]
    _, _, _, _, info = env.step({"type": "click", "element": 1})
    assert "needs the elements channel" in info["last_action_error"]
    assert "standard_structured" in info["last_action_error"]


def parse(text: str) -> dict[str, Any]:
    return dynacu_gym.parse_action(text)


# ---- every app --------------------------------------------------------------------------------


def _audio_keys(task_id: str) -> list[tuple[str, ...]]:
    return [item.keys for item in find_task(task_id).evidence if item.channel == "audio"]


def _watch(task_id: str, time_limit_s: float, looks: int) -> list[tuple[float, np.ndarray, list]]:
    """The scripted solution in standard_structured; (time, screenshot, elements) of each step
    before the first thing it typed (after that, its own words are on the page), and the
    screenshots of ``looks`` steps spread over them."""
    env = gym.make(f"DynaCU-{task_id}-v0", mode="standard_structured", time_limit_s=time_limit_s)
    steps: list[tuple[float, np.ndarray | None, list]] = []
    typed = [False]

    def on_step(step, action, agent_info, obs, info):
        if action is not None and validate_action(
            parse(action) if isinstance(action, str) else action
        ).type in (ActionType.TYPE, ActionType.SPEAK):
            typed[0] = True
        if not typed[0]:
            steps.append((float(obs["elapsed"]), obs["screenshot"].copy(), info["elements"]))

    try:
        run_episode(env, OracleAgent(env), seed=0, on_step=on_step)
    finally:
        env.close()
    keep = {round(i * (len(steps) - 1) / max(1, looks - 1)) for i in range(looks)}
    return [(t, shot if i in keep else None, els) for i, (t, shot, els) in enumerate(steps)]


@pytest.mark.audio
@pytest.mark.parametrize("task_id", APP_TASKS)
def test_every_app_lists_only_what_its_screen_shows(task_id):
    steps = _watch(task_id, time_limit_s=10.0, looks=2)
    assert steps, "the solution typed before its first observation"
    checked_all, bad_all = 0, []
    for t, shot, elements in steps:
        if shot is None:
            continue
        checked, bad = unreadable(shot, elements)
        checked_all += checked
        bad_all += [f"at {t:.1f}s: {b}" for b in bad]
    assert checked_all >= 5, f"only {checked_all} texts listed on {task_id}'s screens"
    assert len(bad_all) <= (1 - READ_SHARE) * checked_all, "\n".join(bad_all)
    for keys in _audio_keys(task_id):
        for t, _, elements in steps:
            listed = "\n".join(f"{e['text']}\n{e['label']}\n{e['value']}" for e in elements)
            assert not seen(keys, listed), f"audio evidence {keys} listed at {t:.1f}s"


@pytest.mark.slow
@pytest.mark.audio
@pytest.mark.parametrize("task_id", [t for t in task_folders() if _audio_keys(t)])
def test_no_audio_evidence_is_ever_listed(task_id):
    """Every task with audio evidence, its whole solution (before it types): never listed."""
    steps = _watch(task_id, time_limit_s=find_task(task_id).time_limit_s, looks=3)
    checked_all, bad_all = 0, []
    for t, shot, elements in steps:
        listed = "\n".join(f"{e['text']}\n{e['label']}\n{e['value']}" for e in elements)
        for keys in _audio_keys(task_id):
            assert not seen(keys, listed), f"audio evidence {keys} listed at {t:.1f}s"
        if shot is not None:
            checked, bad = unreadable(shot, elements)
            checked_all += checked
            bad_all += [f"at {t:.1f}s: {b}" for b in bad]
    assert len(bad_all) <= (1 - READ_SHARE) * checked_all, "\n".join(bad_all)
