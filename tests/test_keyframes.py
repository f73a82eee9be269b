"""The visual-temporal channel: keyframes between steps, the gates, and persistent narration.

Browser tests run real task apps (tests/fixtures/tasks: the webform with a toast timed between
two steps, the carousel with five slides) and learn when the page really changed from the page
itself (a MutationObserver on the element that changes), not from the code under test.
"""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from dynacu_agents import OracleAgent
from dynacu_gym.env import DynaCUEnv
from dynacu_gym.episode import run_episode
from dynacu_gym.modes import apply_mode
from dynacu_gym.perception.keyframes import (
    Keyframe,
    KeyframeCapture,
    changed_fraction,
    gate_view,
    passing,
    select_keyframes,
    unseen,
)
from dynacu_gym.runtime.process import InfraError
from dynacu_gym.tasks import find_task, load_task
from dynacu_gym.wrappers.narration import NarrationLog, Note

FIXTURES = Path(__file__).parent / "fixtures" / "tasks"
TOAST_TASK = FIXTURES / "F" / "91-toast-between-steps"
SLIDES_TASK = FIXTURES / "D" / "91-five-slides"
INTERVAL = 1 / 3  # the default capture interval

# Records, in page time, when the children of an element change (a slide or a toast comes or
# goes), with a label of what is there now.
WATCH = """(selector) => {
  window.__changes = [];
  const target = document.querySelector(selector);
  const label = () => (target.textContent || "").trim().slice(0, 40);
  new MutationObserver(() => {
    const now = performance.now() / 1000, last = window.__changes.at(-1);
    if (last && now - last.t < 0.05) { last.label = label(); return; }
    window.__changes.push({t: now, label: label()});
  }).observe(target, {childList: true, subtree: true});
}"""


def _page_clock_offset(env: DynaCUEnv) -> float:
    """Seconds to add to the page's performance.now()/1000 to get the episode's time."""
    before = time.monotonic()
    page_now = env.evaluate_in_page("() => performance.now() / 1000")
    after = time.monotonic()
    return (before + after) / 2 - page_now - env.episode_start


def _changes(env: DynaCUEnv, offset: float) -> list[dict]:
    return [
        {"t": c["t"] + offset, "label": c["label"]}
        for c in env.evaluate_in_page("() => window.__changes")
    ]


def _region_changed(a: np.ndarray, b: np.ndarray, box: tuple[int, int, int, int]) -> float:
    x0, y0, x1, y1 = box
    return changed_fraction(gate_view(a[y0:y1, x0:x1]), gate_view(b[y0:y1, x0:x1]))


def _visual_env(task_path: Path, mode: str = "aoi_visual", **channels):
    return apply_mode(DynaCUEnv(load_task(task_path)), mode, **channels)


# ---- pure logic ------------------------------------------------------------------------------


def _frame(value: int, box: tuple[int, int, int, int] | None = None, fill: int = 255):
    frame = np.full((720, 1280, 3), value, dtype=np.uint8)
    if box:
        x0, y0, x1, y1 = box
        frame[y0:y1, x0:x1] = fill
    return frame


def _keyframe(t: float, frame: np.ndarray, change: float = 0.5) -> Keyframe:
    return Keyframe(t, frame, gate_view(frame), change)


def test_pixel_gate_counts_changed_cells_of_the_screen():
    a = _frame(40)
    small = _frame(40, (0, 0, 96, 48))  # 18 of the 3600 16x16 cells: 0.5%
    large = _frame(40, (0, 0, 320, 176))  # 20 x 11 cells: 6.1%
    assert changed_fraction(gate_view(a), gate_view(a)) == 0.0
    assert changed_fraction(gate_view(a), gate_view(small)) == pytest.approx(18 / 3600)
    assert changed_fraction(gate_view(a), gate_view(large)) == pytest.approx(220 / 3600)
    # A line of text: thin strokes (here every 3rd column of a 480x32 strip, x 100 to 577)
    # counts as the cells it covers (columns 6 to 36, two rows), above the gate, though its
    # pixels are a third of that.
    text = a.copy()
    text[400:432, 100:580:3] = 255
    assert changed_fraction(gate_view(a), gate_view(text)) == pytest.approx(62 / 3600)
    # A change of a few levels (compression noise, anti-aliasing) does not count.
    assert changed_fraction(gate_view(a), gate_view(_frame(45))) == 0.0
    # Any view size works (a crop of the screen), including ones not a multiple of a cell.
    assert changed_fraction(gate_view(a[:50, :50]), gate_view(text[:50, :50])) == 0.0


def test_selection_keeps_distinct_settled_frames_over_transitions():
    seen = gate_view(_frame(0))
    slide_a = _frame(0, (0, 0, 640, 360), 200)
    fade = _frame(0, (0, 0, 640, 360), 100)  # mid-transition, on screen one interval
    slide_b = _frame(0, (640, 360, 1280, 720), 200)
    slide_a_again = slide_a.copy()
    pool = [
        _keyframe(1.0, slide_a),
        _keyframe(3.0, fade),
        _keyframe(3.0 + INTERVAL, slide_b),
        _keyframe(6.0, slide_a_again),
    ]
    kept = select_keyframes(pool, 2, [seen], until=8.0, interval=INTERVAL)
    assert [k.time for k in kept] == [3.0 + INTERVAL, 6.0]  # both slides; newest A of the two
    # With room for all, all come, in time order.
    assert select_keyframes(pool, 5, [seen], 8.0, INTERVAL) == pool
    # What the agent already sees on screen is worth least.
    kept = select_keyframes(pool, 1, [seen, gate_view(slide_b)], 8.0, INTERVAL)
    assert kept[0].time == 6.0


def test_selection_takes_every_settled_page_before_a_fade_caught_half_way():
    # A shop page as D8's: a large hero slide and a small review card turning on their own.
    # The hero's fade, caught half-way for one interval, differs from both its neighbours
    # over the whole hero (25% of the screen), the review pages from each other only where
    # their text is (0.5%); novelty alone chose the fade and lost a review page.
    hero, card = (0, 0, 1280, 176), (0, 480, 96, 528)

    def page(hero_fill: int, review: int) -> np.ndarray:
        frame = _frame(0, hero, hero_fill)
        frame[card[1] : card[3], card[0] : card[2]] = review
        return frame

    before = page(200, 60)
    fade = page(100, 60)
    pool = [
        _keyframe(2.0, fade),
        _keyframe(2.0 + INTERVAL, page(0, 60)),  # the new slide, settled
        _keyframe(4.0, page(0, 120)),  # review page 2
        _keyframe(7.0, page(0, 180)),  # review page 3
    ]
    now = gate_view(page(0, 240))  # the step's screenshot: review page 4
    kept = select_keyframes(pool, 3, [gate_view(before), now], until=9.0, interval=INTERVAL)
    assert [k.time for k in kept] == [2.0 + INTERVAL, 4.0, 7.0]
    # With room to spare the fade comes too.
    assert len(select_keyframes(pool, 4, [gate_view(before), now], 9.0, INTERVAL)) == 4
    # Passing: the fade, between the page before it and the settled slide. A flash shown for
    # one frame is not: what it showed is gone in the frame after it, outside any change.
    views = [gate_view(before), gate_view(fade), gate_view(page(0, 60))]
    assert passing(*views, dwell=INTERVAL, interval=INTERVAL)
    assert not passing(*views, dwell=3 * INTERVAL, interval=INTERVAL)  # it stayed: settled
    flash = [gate_view(before), gate_view(page(200, 250)), gate_view(before)]
    assert not passing(*flash, dwell=INTERVAL, interval=INTERVAL)

    # A card that slides in as it fades (24 px, D8's review cards) moves its edges, which the
    # pages before and after show alike: still passing, as they lie beside the text that changed.
    def card_page(x: int, text: int) -> np.ndarray:
        frame = _frame(0, (x, 400, x + 320, 640), 230)
        for y in range(424, 624, 40):  # five lines of text, 20 px in from the card's sides
            frame[y : y + 16, x + 20 : x + 300 : 3] = text
        return frame

    slide = [card_page(64, 20), card_page(88, 150), card_page(64, 120)]
    assert passing(*map(gate_view, slide), dwell=INTERVAL, interval=INTERVAL)


def test_pool_overflow_drops_a_fade_caught_half_way_first():
    from dynacu_gym.perception.keyframes import _least_informative

    hero = (0, 0, 1280, 176)
    pool = [
        _keyframe(1.0, _frame(0, hero, 200)),
        _keyframe(2.0, _frame(0, hero, 100)),  # half-way to the next slide
        _keyframe(2.0 + INTERVAL, _frame(0, hero, 0)),
        _keyframe(4.0, _frame(0, (0, 480, 96, 528), 90)),  # a small change that stayed
        _keyframe(6.0, _frame(0, (0, 480, 96, 528), 30)),
    ]
    assert _least_informative(pool, INTERVAL, 10) == 1


def test_unseen_leaves_out_what_the_agent_saw_and_its_own_input():
    before = _frame(0, (0, 0, 320, 48))  # the previous step's screenshot: a field in focus
    half_typed = before.copy()
    half_typed[400:432, :640] = 255
    typed = before.copy()
    typed[400:432, :] = 255
    toast = typed.copy()
    toast[480:, 900:] = 255
    pool = [
        _keyframe(1.0, before),  # the capture caught the focus only after that screenshot
        _keyframe(2.0, half_typed),  # during this step's typing
        _keyframe(2.3, typed),
        _keyframe(4.0, toast),  # the page's own doing, after the typing
        _keyframe(5.5, typed.copy()),  # the toast gone: when it went is news, if no pixel is
    ]
    kept = unseen(pool, gate_view(before), own_input=(1.9, 2.5))
    assert [k.time for k in kept] == [4.0, 5.5]
    # Each change is against what the agent saw before it: from the screenshot, the typed line
    # (two rows of 80 cells, of 3600) and the toast (24 x 15 cells); then the toast going.
    assert [k.change for k in kept] == pytest.approx([(160 + 360) / 3600, 360 / 3600])
    # Without an input, every change from the screen before it counts.
    assert [k.time for k in unseen(pool, gate_view(before))] == [2.0, 2.3, 4.0, 5.5]
    # A frame no different from the one kept before it is no news either.
    twice = [_keyframe(1.0, toast), _keyframe(2.0, toast)]
    assert [k.time for k in unseen(twice, gate_view(before))] == [1.0]


def _product_page(card: tuple[int, int, int], name: str, rating: str, alpha: float = 1.0):
    """A shop page with one product card, as a slider shows it: a pale card, a coloured icon,
    thin dark text. ``alpha`` < 1 is the card caught fading in over the white page."""
    page = Image.new("RGB", (1280, 720), (255, 255, 255))
    draw = ImageDraw.Draw(page)
    draw.rectangle((24, 476, 446, 604), fill=card)
    draw.text((24, 612), f"{name}\n{rating}\n$149.00", fill=(30, 30, 30))
    frame = np.asarray(page).astype(np.float32)
    blank = np.full_like(frame, 255.0)
    mask = np.zeros(frame.shape[:2], dtype=bool)
    mask[476:680, 24:446] = True
    frame[mask] = blank[mask] + alpha * (frame[mask] - blank[mask])
    return frame.round().astype(np.uint8)


def test_pixel_gate_sees_another_product_at_equal_brightness():
    # Two cards of a slider: the same layout and brightness, another hue and other thin text.
    # Green alone at every 4th pixel judged these two pages 0.14% of the screen apart, below
    # the gate; the card is 6.75% of it.
    drift = _product_page((234, 238, 245), "Sonder Drift", "4.6 (1204)")
    arc = _product_page((245, 238, 234), "Sonder Arc", "4.5 (640)")
    card_cells = (446 // 16 - 24 // 16 + 1) * (604 // 16 - 476 // 16 + 1) / 3600
    assert changed_fraction(gate_view(drift), gate_view(arc)) >= card_cells
    # Strokes one pixel wide, all between the pixels a view sampling every 4th would take,
    # count as the cells they cross (columns 6 to 36, two rows).
    plain = _frame(40)
    strokes = plain.copy()
    strokes[400:432, 101:580:4] = 255
    assert changed_fraction(gate_view(plain), gate_view(strokes)) == pytest.approx(62 / 3600)
    # Selection: the settled card beats the fade towards it, though the fade is farther from
    # the page before (it is half blank).
    fade = _product_page((245, 238, 234), "Sonder Arc", "4.5 (640)", alpha=0.2)
    pool = [_keyframe(3.0, fade), _keyframe(3.0 + INTERVAL, arc)]
    kept = select_keyframes(pool, 1, [gate_view(drift)], until=6.0, interval=INTERVAL)
    assert kept[0].time == 3.0 + INTERVAL


class _Screen:
    """A screen whose content is set by the test; grabbing it counts calls."""

    def __init__(self, frame: np.ndarray):
        self.frame = frame
        self.grabs = 0
        self.fail = False

    def grab(self) -> np.ndarray:
        if self.fail:
            raise InfraError("the display went away")
        self.grabs += 1
        return self.frame.copy()


def test_capture_thread_gates_pools_and_reports_failure():
    screen = _Screen(_frame(0))
    capture = KeyframeCapture(screen.grab, fps=20, pool_size=3)
    capture.start(screen.frame, time.monotonic())
    try:
        time.sleep(0.3)
        assert capture.collect(time.monotonic()) == []  # nothing changed: all skipped
        changed_at = []
        for i in range(6):
            screen.frame = _frame(0, (0, 0, 200 * (i + 1), 200))
            changed_at.append(time.monotonic())
            time.sleep(0.15)
        until = time.monotonic()
        taken = capture.collect(until)
        assert len(taken) == 3  # the pool is bounded; the newest always stays
        assert taken[-1].time >= changed_at[-1]
        assert [k.time for k in taken] == sorted(k.time for k in taken)
        assert capture.stats.pool_dropped == 3
        assert capture.stats.skipped > 0
        screen.fail = True
        time.sleep(0.2)
        with pytest.raises(InfraError, match="display went away"):
            capture.collect(time.monotonic())
    finally:
        capture.stop()
    assert not capture.alive()
    # Counted once the thread is gone: while it runs, a grab is made before it is counted.
    assert capture.stats.grabbed == screen.grabs


def test_collect_waits_for_a_frame_grabbed_before_it_to_be_gated():
    # A step's screenshot is taken while the capture thread has a frame in hand: that frame,
    # grabbed first, belongs to this step (its own input's window), not to the next.
    screen = _Screen(_frame(0))
    started = threading.Event()

    def slow_grab() -> np.ndarray:
        started.set()
        time.sleep(0.1)  # a grab that takes long under load: its time is its middle
        return screen.grab()

    capture = KeyframeCapture(slow_grab, fps=2)
    capture.start(screen.frame, time.monotonic())
    try:
        screen.frame = _frame(0, (0, 0, 640, 360))
        assert started.wait(2.0)
        until = time.monotonic() + 0.06  # past the grab's middle, while it is still in hand
        taken = capture.collect(until)
        assert len(taken) == 1 and taken[0].time <= until
    finally:
        capture.stop()


def test_capture_rejects_bad_settings():
    with pytest.raises(ValueError, match="fps"):
        KeyframeCapture(lambda: _frame(0), fps=0)
    with pytest.raises(ValueError, match="change_threshold"):
        KeyframeCapture(lambda: _frame(0), change_threshold=1.5)


def test_narration_log_is_bounded_oldest_first():
    log = NarrationLog(max_chars=200)
    for i in range(10):
        log.add(Note(i + 1, float(i), f"note {i}: " + "x" * 30))
    assert len(log.text()) <= 200
    assert log.dropped > 0
    assert log.notes[-1].text.startswith("note 9")
    assert log.notes[0].step == log.dropped + 1  # the oldest went first
    assert f"{log.dropped} oldest notes dropped" in log.section()
    log.add(Note(11, 11.0, "y" * 500))  # one note longer than the bound is cut, not lost
    assert log.notes[-1].text.endswith("\u2026") and len(log.text()) <= 200


# ---- real pages -----------------------------------------------------------------------------


@pytest.mark.browser
def test_toast_between_two_steps_is_in_the_keyframes_not_the_screenshots():
    env = _visual_env(TOAST_TASK)
    try:
        base = env.unwrapped
        obs0, _ = env.reset(seed=0)
        base.evaluate_in_page(WATCH, "#toasts")
        offset = _page_clock_offset(base)
        obs1, *_, info1 = env.step({"type": "wait", "seconds": 2.0 - float(obs0["elapsed"])})
        obs2, _, _, truncated, info2 = env.step({"type": "wait", "seconds": 5.0})
        assert not truncated, info2.get("infra_error")
        changes = _changes(base, offset)
    finally:
        env.close()
    assert 1.8 < float(obs1["elapsed"]) < 2.5 and float(obs2["elapsed"]) > 6.8
    assert int(obs1["keyframe_count"]) == 0  # nothing had happened yet
    # The page showed the toast at 4.0 s and took it away at 5.5 s, both between the steps.
    shown, gone = changes[0]["t"], changes[-1]["t"]
    assert "E-2291" in changes[0]["label"] and 3.9 < shown < 4.3 and 5.4 < gone < 5.9
    toast_box = (900, 480, 1280, 720)  # the toasts' corner, bottom right
    # Neither screenshot shows it ...
    assert _region_changed(obs1["screenshot"], obs2["screenshot"], toast_box) < 0.005
    # ... but a keyframe of the second step does, grabbed within one interval of it appearing.
    count = int(obs2["keyframe_count"])
    times = obs2["keyframe_times"][:count]
    with_toast = [
        i
        for i in range(count)
        if _region_changed(obs2["keyframes"][i], obs1["screenshot"], toast_box) > 0.1
    ]
    assert with_toast, (times, info2["keyframes"])
    first = float(times[with_toast[0]])
    assert shown <= first <= shown + INTERVAL + 0.1, (shown, times)
    # Its leaving is a keyframe too, and all are in the record with their times.
    assert any(gone <= t <= gone + 0.18 + INTERVAL + 0.1 for t in times), (gone, times)
    assert f"keyframe 1 at {times[0]:.1f}s" in obs2["record"]
    assert not obs2["keyframes"][count:].any() and not obs2["keyframe_times"][count:].any()


@pytest.mark.browser
def test_episodes_leave_no_descriptor_behind(probe_task):
    # Each episode's capture thread opens its own connection to the display; it must close it
    # as it ends (a soak of 300 episodes showed one more descriptor per episode).
    env = apply_mode(DynaCUEnv(probe_task), "aoi_visual")
    try:
        env.reset(seed=0)
        env.step({"type": "wait", "seconds": 0.5})
        before = len(os.listdir("/proc/self/fd"))
        for seed in range(1, 9):
            env.reset(seed=seed)
            env.step({"type": "wait", "seconds": 0.5})
        assert len(os.listdir("/proc/self/fd")) - before <= 1
    finally:
        env.close()


@pytest.mark.browser
def test_static_page_produces_no_keyframes(probe_task):
    env = apply_mode(DynaCUEnv(probe_task), "aoi_visual")
    try:
        env.reset(seed=0)
        for _ in range(2):
            obs, _, _, _, info = env.step({"type": "wait", "seconds": 2.0})
            assert int(obs["keyframe_count"]) == 0, info["keyframes"]
            assert "(no change on screen)" in obs["record"]
        # The capture did run all along: it grabbed and skipped every frame.
        since = info["keyframes"]["since_last_step"]
        assert since["grabbed"] >= 5 and since["skipped"] == since["grabbed"]
    finally:
        env.close()


class _Pausing:
    """The scripted solution with a second's wait after each input, as an agent thinking."""

    def __init__(self, env):
        self.oracle = OracleAgent(env)
        self.paused = True

    def reset(self, instruction: str) -> None:
        self.oracle.reset(instruction)
        self.paused = True

    def act(self, obs):
        if not self.paused:
            self.paused = True
            return {"type": "wait", "seconds": 1.0}, {}
        action, info = self.oracle.act(obs)
        self.paused = action["type"] not in ("click", "type", "key")
        return action, info


@pytest.mark.browser
def test_the_agents_own_input_brings_no_keyframe():
    # A static contact form (S22): the solution clicks into four fields and types into each,
    # with a wait after each input. Capturing at 10 frames a second, the gate lets through
    # frames of the fields changing, during the input and after its screenshot. The step's
    # screenshot shows what the input did, so the channel stays empty.
    env = apply_mode(DynaCUEnv(find_task("S22")), "aoi_visual", keyframes={"fps": 10.0})
    steps = []

    def on_step(step, action, agent_info, obs, info):
        if step:
            steps.append((action, int(obs["keyframe_count"]), info["keyframes"]))

    try:
        outcome = run_episode(env, _Pausing(env), seed=0, on_step=on_step)
    finally:
        env.close()
    assert outcome.success, outcome
    assert all(count == 0 for _, count, _ in steps), steps
    # The capture did see the screen change, and the gate let those frames through.
    passed = sum(info["since_last_step"].get("keyframes", 0) for *_, info in steps)
    assert passed >= 4, steps


class _Recorder:
    """Grabs the screen every 0.1 s beside the env: when each slide settled, and how it looked."""

    def __init__(self, env: DynaCUEnv):
        self.env = env
        self.frames: list[tuple[float, np.ndarray]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self):
        display = self.env.sandbox.display
        while not self._stop.wait(0.1):
            frame = display.grab()
            self.frames.append((time.monotonic() - self.env.episode_start, frame))

    def at(self, t: float) -> np.ndarray:
        return min(self.frames, key=lambda f: abs(f[0] - t))[1]


@pytest.mark.browser
def test_carousel_every_slide_is_in_some_keyframe_at_its_time():
    env = _visual_env(SLIDES_TASK)
    keyframes: list[tuple[float, np.ndarray]] = []
    try:
        base = env.unwrapped
        env.reset(seed=0)
        base.evaluate_in_page(WATCH, "#hero-stage")
        offset = _page_clock_offset(base)
        hero = base.evaluate_in_page(
            "() => { const r = document.getElementById('hero-stage').getBoundingClientRect();"
            " return [r.left, r.top, r.right, r.bottom].map(Math.round); }"
        )
        with _Recorder(base) as recorder:
            while base.elapsed < 13.5:
                obs, _, terminated, truncated, info = env.step({"type": "wait", "seconds": 3.0})
                assert not truncated and not terminated, info
                n = int(obs["keyframe_count"])
                keyframes += [
                    (float(obs["keyframe_times"][i]), obs["keyframes"][i]) for i in range(n)
                ]
        changes = _changes(base, offset)
    finally:
        env.close()
    # Slides differ from each other in far more than the gate's 1%, in the banner.
    looks = [recorder.at(c["t"] + 0.8) for c in changes if 0.5 < c["t"] < 12.6]
    for a, b in zip(looks[:-1], looks[1:], strict=True):
        assert _region_changed(a, b, tuple(hero)) > 0.05
    labels = [c["label"] for c in changes if c["t"] > 0.5]
    assert len(set(labels)) == 5, labels  # the page really showed five different slides
    for change in (c for c in changes if 0.5 < c["t"] < 12.6):
        # A keyframe was grabbed within one interval of the slide coming on ...
        assert any(change["t"] <= t <= change["t"] + INTERVAL + 0.1 for t, _ in keyframes), (
            change,
            [t for t, _ in keyframes],
        )
        # ... and one shows the slide as it settled (after its 0.35 s fade), to within what
        # the pixel gate calls the same screen; the banner alone differs far more between slides.
        settled = recorder.at(change["t"] + 0.8)
        diffs = [changed_fraction(gate_view(f), gate_view(settled)) for _, f in keyframes]
        assert min(diffs) < 0.01, (change["label"], sorted(diffs)[:3])


# ---- the CLIP gate --------------------------------------------------------------------------

CLIP_WEIGHTS = os.environ.get("DYNACU_CLIP_WEIGHTS", "random")


@pytest.fixture(scope="module")
def clip_gate():
    pytest.importorskip("open_clip", reason="the clip extra is not installed")
    from dynacu_gym.perception.clip_gate import load_clip_gate

    return load_clip_gate(CLIP_WEIGHTS)


@pytest.fixture(scope="module")
def slide_frames():
    """Real frames of the carousel: a light slide, the same with a typed promo code, the dark
    lighting-sale slide."""
    env = DynaCUEnv(load_task(SLIDES_TASK))
    try:
        env.reset(seed=0)
        display = env.sandbox.display
        time.sleep(1.0)
        light = display.grab()
        env.step({"type": "click", "x": 1030, "y": 458})
        env.step({"type": "type", "text": "GLO"})
        light_typed = display.grab()
        env.step({"type": "wait", "seconds": 8.3 - env.elapsed})
        dark = display.grab()
        on_screen = env.evaluate_in_page("() => document.getElementById('hero').textContent")
    finally:
        env.close()
    assert "20% off all lighting" in on_screen
    return light, light_typed, dark


@pytest.mark.browser
def test_clip_gate_suppresses_near_identical_frames_not_another_slide(clip_gate, slide_frames):
    light, light_typed, dark = slide_frames
    assert changed_fraction(gate_view(light), gate_view(light_typed)) > 0  # really differ
    a, b, c = (clip_gate.embed(f) for f in slide_frames)
    assert np.linalg.norm(a) == pytest.approx(1.0, abs=1e-4)
    assert clip_gate.distance(a, a) == pytest.approx(0.0, abs=1e-5)
    assert clip_gate.distance(a, b) < clip_gate.threshold  # suppressed
    assert clip_gate.distance(a, c) > clip_gate.threshold  # a different slide passes


@pytest.mark.browser
def test_clip_gate_in_the_env_judges_off_the_capture_path(clip_gate):
    env = _visual_env(SLIDES_TASK, keyframes={"clip_weights": CLIP_WEIGHTS, "fps": 3.0})
    try:
        env.reset(seed=0)
        kept = []
        while env.unwrapped.elapsed < 11.0:
            obs, _, _, truncated, info = env.step({"type": "wait", "seconds": 3.0})
            assert not truncated, info
            kept += [obs["keyframes"][i] for i in range(int(obs["keyframe_count"]))]
        stats = env.get_wrapper_attr("capture").stats
        fps = stats.as_dict()["fps"]
    finally:
        env.close()
    # Frames that passed the pixel gate were judged by CLIP, and capture kept its rate.
    assert stats.clip_judged > 0 and stats.clip_bypassed == 0
    assert stats.keyframes + stats.clip_suppressed == stats.clip_judged
    assert fps > 2.7, fps
    # Each kept keyframe is at least the threshold away from the one before it.
    embeddings = [clip_gate.embed(f) for f in kept]
    for before, after in zip(embeddings[:-1], embeddings[1:], strict=True):
        assert clip_gate.distance(before, after) >= clip_gate.threshold - 1e-3


def test_clip_weights_missing_give_clear_errors(tmp_path):
    pytest.importorskip("open_clip", reason="the clip extra is not installed")
    from dynacu_gym.perception.clip_gate import ClipWeightsError, load_clip_gate

    with pytest.raises(ClipWeightsError, match="no CLIP checkpoint at"):
        load_clip_gate(tmp_path / "missing.safetensors")
    with pytest.raises(ClipWeightsError, match="neither a checkpoint file nor a pretrained tag"):
        load_clip_gate("laion9000")
    with pytest.raises(ClipWeightsError, match="nothing is downloaded"):
        load_clip_gate("laion2b_s34b_b79k", cache_dir=tmp_path)
    with pytest.raises(ClipWeightsError, match="unknown open_clip model"):
        load_clip_gate("random", arch="ViT-Q-99")
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ClipWeightsError, match="could not load CLIP weights"):
        load_clip_gate(bad)


@pytest.mark.browser
def test_narration_persists_across_steps_and_is_bounded(probe_task):
    env = apply_mode(DynaCUEnv(probe_task), "aoi_visual", narration={"max_chars": 300})
    try:
        obs, _ = env.reset(seed=0)
        assert obs["narration"] == "" and "(none yet" in obs["record"]
        obs, *_ = env.step({"type": "wait", "seconds": 0.2, "narration": "the box says blue whale"})
        for _ in range(12):  # steps without narration, past the record's 10 prior actions
            obs, *_ = env.step({"type": "wait", "seconds": 0.05})
        assert "the box says blue whale" in obs["narration"]
        assert "(step 1, " in obs["record"] and "the box says blue whale" in obs["record"]
        # An invalid action's narration is kept too: it is what the agent saw.
        obs, *_ = env.step({"type": "click", "x": 99999, "y": 1, "narration": "a second note"})
        assert obs["last_action_error"] and "a second note" in obs["narration"]
        for i in range(8):
            obs, _, _, _, info = env.step(
                {"type": "wait", "seconds": 0.05, "narration": f"note {i} " + "z" * 40}
            )
        assert len(obs["narration"]) <= 300 and "blue whale" not in obs["narration"]
        assert "note 7" in obs["narration"] and info["narration_dropped"] > 0
        assert "oldest notes dropped to stay within 300 characters" in obs["record"]
        assert env.observation_space["narration"].contains(obs["narration"])
        obs, _ = env.reset(seed=1)
        assert obs["narration"] == ""
    finally:
        env.close()


@pytest.mark.browser
@pytest.mark.audio
def test_full_mode_links_keyframes_to_the_sentences_they_fall_in():
    import gymnasium as gym

    import dynacu_gym  # noqa: F401 - registers the envs

    env = gym.make("DynaCU-C1-v0", mode="aoi_full")
    links = 0
    try:
        obs, _ = env.reset(seed=0)
        # The first sentence runs from about 5 s to 9 s, and its transcript comes in the step
        # after it ends. One step over both gives the keyframes grabbed while it was spoken.
        for seconds in (12.0, 4.0):
            obs, _, _, truncated, info = env.step({"type": "wait", "seconds": seconds})
            assert not truncated, info.get("infra_error")
            times = obs["keyframe_times"][: int(obs["keyframe_count"])]
            for segment in info["audio"]["recent"]:
                # The sentence's line, and the one under it that names its keyframes, if any.
                after = obs["recent_audio"].split(f'"{segment["text"]}"', 1)[1].split("\n")
                under = after[1] if len(after) > 1 and after[1].startswith("  ↳") else ""
                named = [int(n) for n in re.findall(r"keyframe (\d+)", under)]
                # Times in info are rounded to the millisecond: a frame on an edge goes either way.
                lo, hi, edge = segment["start"], segment["end"], 0.002
                inside = [k + 1 for k, t in enumerate(times) if lo + edge <= t <= hi - edge]
                assert set(inside) <= set(named), (segment, times, under)
                assert all(lo - edge <= times[k - 1] <= hi + edge for k in named), (segment, times)
                links += bool(inside)
        record = obs["record"]
        order = ["[AUDIO CONTEXT", "[RECENT AUDIO", "[VISUAL", "[NARRATION]", "[TASK]"]
        assert [record.index(h) for h in order] == sorted(record.index(h) for h in order)
    finally:
        env.close()
    # The tutorial types commands on screen while the narrator speaks.
    assert links > 0


def test_clip_checkpoint_file_loads_through_open_clip(tmp_path, clip_gate):
    import torch

    from dynacu_gym.perception.clip_gate import ClipWeightsError, load_clip_gate

    if clip_gate.name != "ViT-B-32 (random weights)":
        pytest.skip("runs with the random-initialised gate only (it writes those weights out)")
    path = tmp_path / "vit-b-32.pt"
    torch.save(clip_gate.model.state_dict(), path)
    loaded = load_clip_gate(path)
    frame = np.random.default_rng(0).integers(0, 255, (720, 1280, 3), dtype=np.uint8)
    assert clip_gate.distance(loaded.embed(frame), clip_gate.embed(frame)) < 1e-5
    # Weights of another model are refused by name, not loaded half-way.
    torch.save({"visual.proj": torch.zeros(3, 3)}, tmp_path / "other.pt")
    with pytest.raises(ClipWeightsError, match="could not load CLIP weights"):
        load_clip_gate(tmp_path / "other.pt")
