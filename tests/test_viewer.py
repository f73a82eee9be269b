"""dynacu view: the run's site, built from hand-made runs and from a real one, used in Chromium."""

from __future__ import annotations

import json
import math
import urllib.request
import wave
from pathlib import Path

import numpy as np
import pytest

from dynacu_gym.harness.cli import main
from dynacu_gym.harness.runner import trace_name
from dynacu_gym.harness.trace import OUTCOME_FILE, TRACE_FILE
from dynacu_gym.harness.viewer import VIEW_DIR, build_site, gather, serve
from dynacu_gym.imaging import save_png
from dynacu_gym.runtime.chromium import find_chromium

FIXTURE_LINE = json.loads(
    (Path(__file__).parent / "fixtures" / "episodes" / "run-1.jsonl").read_text().splitlines()[0]
)
RATE = 16000
SPEAKER_S = 6.0
HAND_MADE = [("F1", "aoi_full"), ("A1", "standard"), ("J1", "aoi_full"), ("H1", "aoi_interactive")]


def _line(task: str, mode: str, **changes) -> dict:
    category = task[0]
    return {**FIXTURE_LINE, "task": task, "category": category, "mode": mode, "agent": "oracle",
            "model": None, "llm_calls": 0, "tokens": {"input": 0, "output": 0},
            **changes}  # fmt: skip


def _screen(shade: int) -> np.ndarray:
    image = np.full((720, 1280, 3), shade, dtype=np.uint8)
    image[300:420, 500:780] = (200, 40, 40)  # something to click on
    return image


def _trace(root: Path, name: str, steps: int, wav: bool = True, cut: bool = False) -> Path:
    """A trace as TraceRecorder writes it: steps 1.5 s apart, a keyframe each, a spoken line."""
    trace = root / "traces" / name
    for sub in ("records", "screens", "keyframes"):
        (trace / sub).mkdir(parents=True)
    lines = []
    for k in range(steps + 1):
        stem = f"{k:04d}"
        save_png(_screen(30 + 20 * k), trace / "screens" / f"{stem}.png")
        record = f"Observation Record - Step {k} (t = {1.5 * k:.1f}s)\n"
        record += '[PAGE ELEMENTS]\n  [1] button "Submit" at 640,360 (box 500,300 280x120)\n'
        if k == 1:
            record += "a </script> in the page's text must not end the page's data\n"
        (trace / "records" / f"{stem}.txt").write_text(record)
        times = []
        if k:
            save_png(_screen(25 + 20 * k), trace / "keyframes" / f"{stem}-1.png")
            times = [round(1.5 * k - 0.7, 3)]
        action = None
        if k:
            action = [{"type": "wait", "seconds": 1.5}, {"type": "click", "x": 640, "y": 360},
                      {"type": "click", "element": 1},
                      {"type": "speak", "text": "The code is E 4012"},
                      {"type": "type", "text": "E-4012"}][(k - 1) % 5]  # fmt: skip
        step = {"step": k, "elapsed": round(1.5 * k, 3), "action": action, "agent": {},
                "keyframe_times": times, "task_result": "pending", "timings": {"capture": 0.01},
                "asr_calls": 1,
                "transcript": [{"start": 0.5, "end": 2.0, "text": "The code is E 4012.",
                                "stable": k > 2}]}  # fmt: skip
        if action and action["type"] == "speak":
            step["speech"] = {"text": action["text"], "starts_at": 1.5 * k, "ends_at": 1.5 * k + 1}
        lines.append(json.dumps(step))
    text = "\n".join(lines) + "\n"
    if cut:
        text = text[: -len(lines[-1]) // 2 - 1]  # the last line half written
    (trace / TRACE_FILE).write_text(text)
    for file, hz in (("speaker.wav", 440), ("voice.wav", 220)) if wav else ():
        with wave.open(str(trace / file), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(RATE)
            t = np.arange(int(SPEAKER_S * RATE)) / RATE
            out.writeframes((0.2 * np.sin(2 * math.pi * hz * t) * 32767).astype("<i2").tobytes())
    return trace


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """Four episodes: whole, without a trace, with a trace cut short and no sound; and one
    trace whose episode has no line yet (a run still being written, its last line half out)."""
    run = tmp_path / "run"
    lines = [
        _line("F1", "aoi_full", steps=4, wall_s=6.0),
        _line("A1", "standard", success=False, result="wrong_answer", reward=0.0),
        _line("J1", "aoi_full", success=False, result="infra", infra_error="Chromium crashed"),
    ]
    for line in (lines[0], lines[2]):
        name = trace_name(line["task"], line["mode"], "oracle", None, line["repeat"])
        _trace(run, name, 4, wav=line is lines[0], cut=line is lines[2])
        (run / "traces" / name / OUTCOME_FILE).write_text(json.dumps({**line, "heard": []}))
    _trace(run, trace_name("H1", "aoi_interactive", "oracle", None, 0), 2)
    text = "\n".join(json.dumps(line) for line in lines) + '\n{"task": "H1", "mo'
    (run / "episodes.jsonl").write_text(text)
    return run


def _data(page: Path) -> dict:
    text = page.read_text()
    marker = '<script type="application/json" id="data">'
    start = text.index(marker) + len(marker)
    return json.loads(text[start : text.index("</script>", start)])


# ---- the site, read as data ---------------------------------------------------------------------


def test_the_index_lists_every_episode_and_says_what_is_missing(run):
    index = build_site(run)
    assert index == run / VIEW_DIR / "index.html"
    data = _data(index)
    assert [(r["task"], r["mode"]) for r in data["episodes"]] == [
        ("F1", "aoi_full"), ("A1", "standard"), ("J1", "aoi_full"), ("H1", "aoi_interactive"),
    ]  # fmt: skip
    rows = {r["task"]: r for r in data["episodes"]}
    assert rows["A1"]["trace"] is False and rows["F1"]["trace"] is True
    assert rows["H1"]["result"] == "(running)"
    assert rows["H1"]["problems"] == ["no episode line: still running, or stopped"]
    assert [p["where"] for p in data["problems"]] == [f"{run / 'episodes.jsonl'}:4"]
    assert "not valid JSON" in data["problems"][0]["what"]
    for row in data["episodes"]:
        assert (run / VIEW_DIR / row["page"]).is_file()
    for asset in ("viewer.css", "common.js", "index.js", "episode.js"):
        assert (run / VIEW_DIR / asset).is_file()


def test_an_episode_page_holds_its_steps_and_refers_to_the_trace_files(run):
    build_site(run)
    page = run / VIEW_DIR / "episodes" / "F1-aoi_full-oracle-0.html"
    data = _data(page)
    assert data["problems"] == []
    assert data["voice"].endswith("F1-aoi_full-oracle-0/voice.wav")
    assert [s["step"] for s in data["steps"]] == [0, 1, 2, 3, 4]
    for step in data["steps"]:
        assert (page.parent / step["screen"]).resolve().is_file()
        for kf in step["keyframes"]:
            assert (page.parent / kf["src"]).resolve().is_file()
    assert (page.parent / data["audio"]).resolve() == (
        run / "traces" / "F1-aoi_full-oracle-0" / "speaker.wav"
    )
    assert "</script> in the page" in data["steps"][1]["record"]  # whole, and the page still loads
    assert data["transcript"] == [
        {"start": 0.5, "end": 2.0, "text": "The code is E 4012.", "stable": True, "step": 0}
    ]
    assert [s["text"] for s in data["agent_said"]] == ["The code is E 4012"]
    assert data["task"]["title"] and data["page_said"] == []  # F1's page says nothing


def test_a_trace_cut_short_and_a_missing_sound_are_said_on_the_page(run):
    build_site(run)
    pages = run / VIEW_DIR / "episodes"
    j1 = _data(pages / "J1-aoi_full-oracle-0.html")
    assert [s["step"] for s in j1["steps"]] == [0, 1, 2, 3]
    assert any("trace.jsonl line 5 is cut short" in p for p in j1["problems"])
    assert any("no speaker capture" in p for p in j1["problems"]) and j1["audio"] is None
    assert j1["voice"] is None
    a1 = _data(pages / "A1-standard-oracle-0.html")
    assert a1["steps"] == [] and any(p.startswith("no trace") for p in a1["problems"])
    # A listening task's page declares what it says: its lines are on the axis.
    h1 = _data(pages / "H1-aoi_interactive-oracle-0.html")
    assert h1["page_said"] and all(s["end"] > s["start"] for s in h1["page_said"])


def test_a_step_file_gone_is_named_and_the_rest_is_built(run):
    (run / "traces" / "F1-aoi_full-oracle-0" / "screens" / "0002.png").unlink()
    build_site(run)
    data = _data(run / VIEW_DIR / "episodes" / "F1-aoi_full-oracle-0.html")
    assert data["problems"] == ["missing from the trace: screens/0002.png"]
    assert data["steps"][2]["screen"] is None and data["steps"][3]["screen"]


def test_a_task_the_viewer_cannot_find_is_said_on_its_page(tmp_path):
    # A suite's episode viewed from a shell whose $DYNACU_TASK_PATH does not name the suite.
    run = tmp_path / "run"
    line = _line("A1", "aoi_full") | {"task": "nolab/Z9", "category": "Z"}
    _trace(run, trace_name("nolab/Z9", "aoi_full", "oracle", None, 0), 2)
    (run / "episodes.jsonl").write_text(json.dumps(line) + "\n")
    build_site(run)
    data = _data(run / VIEW_DIR / "episodes" / "nolab_Z9-aoi_full-oracle-0.html")
    assert data["task"] == {"id": "nolab/Z9"} and data["page_said"] == []
    assert data["problems"] == [
        "task nolab/Z9 is not in the catalogue or in a suite $DYNACU_TASK_PATH names where this "
        "view was built: its title and the page's script are not shown"
    ]


def test_what_is_not_a_run_is_refused_with_what_was_expected(tmp_path):
    with pytest.raises(ValueError, match="no such run folder"):
        build_site(tmp_path / "nowhere")
    with pytest.raises(ValueError, match=r"expected a run folder with episodes.jsonl or traces/"):
        build_site(tmp_path)
    assert main(["view", str(tmp_path / "nowhere")]) == 2


def test_a_model_names_its_traces_apart():
    assert trace_name("A1", "aoi_full", "llm", "Qwen/Qwen2.5-VL:7b", 2) == (
        "A1-aoi_full-llm-Qwen_Qwen2.5-VL_7b-2"
    )
    assert trace_name("A1", "standard", "oracle", None, 0) == "A1-standard-oracle-0"


def test_gather_matches_lines_to_traces(run):
    episodes, _ = gather(run)
    assert [(e.line is not None, e.trace is not None) for e in episodes] == [
        (True, True), (True, False), (True, True), (False, True),
    ]  # fmt: skip


# ---- the site, used as a person would -----------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    executable = find_chromium()
    with sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=executable, args=["--autoplay-policy=no-user-gesture-required"]
        )
        yield chromium
        chromium.close()


def _open(browser, url: str):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(url)
    page.wait_for_selector("#app > :not(.loading)")
    return page, errors


def _check_index(browser, url: str, episodes: list[tuple[str, str]]) -> None:
    """The index lists ``episodes`` (task, mode); filtering by text and by mode, and sorting."""
    page, errors = _open(browser, url)
    rows = page.locator("table.episodes tbody tr")

    def listed() -> list[tuple[str, str]]:
        cells = [row.locator("td").all_inner_texts() for row in rows.all()]
        return sorted((c[0].split(" ")[0], c[1]) for c in cells)

    assert listed() == sorted(episodes)
    task = episodes[0][0]
    page.fill("input[type=search]", task)
    assert listed() == sorted(e for e in episodes if e[0] == task)
    page.fill("input[type=search]", "")
    mode = episodes[-1][1]
    page.select_option("select[aria-label=mode]", mode)
    assert listed() == sorted(e for e in episodes if e[1] == mode)
    assert page.inner_text(".count") == f"{len(listed())} of {len(episodes)} episodes"
    page.select_option("select[aria-label=mode]", "")
    page.click("th[data-key=steps]")
    page.click("th[data-key=steps]")
    assert "desc" in (page.get_attribute("th[data-key=steps]", "class") or "")
    assert errors == []
    page.close()


def _check_episode(browser, url: str) -> dict:
    """Step through an episode and play its sound; returns what the page showed."""
    page, errors = _open(browser, url)
    page.wait_for_function("document.querySelector('.shot img')?.naturalWidth > 0")
    page.wait_for_selector(".shot svg")  # the action, drawn once the screenshot loaded
    steps = page.evaluate(
        "DynaCUView && JSON.parse(document.getElementById('data').textContent).steps.length"
    )
    cursor = page.locator(".axis svg line.cursor")
    x0 = float(cursor.get_attribute("x1") or 0)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("window.dynacuView.current") == 2
    assert float(cursor.get_attribute("x1") or 0) > x0
    shown = {
        "steps": steps,
        "keyframes": page.locator(".keyframes img").count(),
        "where": page.inner_text(".where"),
    }
    if page.evaluate("window.dynacuView.audio !== null"):
        page.wait_for_function("window.dynacuView.audio.readyState >= 1")
        t2 = page.evaluate(
            "JSON.parse(document.getElementById('data').textContent).steps[2].elapsed"
        )
        assert page.evaluate("window.dynacuView.audio.currentTime") == pytest.approx(t2, abs=0.05)
        # Play from step 0, from just before step 1's time: the chosen step follows the sound
        # (timeupdate comes a few times a second).
        page.evaluate("window.dynacuView.select(0)")
        page.click("text=play from this step")
        t1 = page.evaluate(
            "JSON.parse(document.getElementById('data').textContent).steps[1].elapsed"
        )
        page.evaluate(f"window.dynacuView.audio.currentTime = {max(0.0, t1 - 0.4)}")
        page.wait_for_function(f"window.dynacuView.audio.currentTime > {t1 + 0.1}", timeout=10_000)
        page.wait_for_function("window.dynacuView.current >= 1", timeout=2_000)
        if page.evaluate("window.dynacuView.voice !== null"):  # the agent's voice plays along
            view = "window.dynacuView"
            drift = f"Math.abs({view}.voice.currentTime - {view}.audio.currentTime)"
            assert page.evaluate(f"!{view}.voice.paused") and page.evaluate(drift) < 0.5
        page.evaluate("window.dynacuView.audio.pause()")
        page.wait_for_function("!window.dynacuView.voice || window.dynacuView.voice.paused")
    page.keyboard.press("End")
    assert page.evaluate("window.dynacuView.current") == steps - 1
    assert errors == []
    page.close()
    return shown


@pytest.mark.browser
def test_the_viewer_works_in_chromium_from_the_file_system_and_a_server(run, browser):
    index = build_site(run)
    _check_index(browser, index.as_uri(), HAND_MADE)
    shown = _check_episode(
        browser, (index.parent / "episodes" / "F1-aoi_full-oracle-0.html").as_uri()
    )
    assert shown["steps"] == 5 and shown["keyframes"] == 1 and "step 2 of 4" in shown["where"]
    # An episode without a trace says so and shows its line.
    page, errors = _open(
        browser, (index.parent / "episodes" / "A1-standard-oracle-0.html").as_uri()
    )
    assert "no trace" in page.inner_text(".problems") and errors == []
    page.close()
    server, url = serve(run)
    try:
        with urllib.request.urlopen(url) as reply:
            assert reply.status == 200
        _check_index(browser, url, HAND_MADE)
        _check_episode(browser, url.replace("index.html", "episodes/F1-aoi_full-oracle-0.html"))
    finally:
        server.stop()


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.audio
def test_the_viewer_of_a_real_run_in_chromium(tmp_path, browser):
    """An oracle run with traces (a listening task, a transient toast and a game, two modes; and
    a spoken answer), through `dynacu eval --traces` and `dynacu view`, as a person uses it."""
    run = tmp_path / "run"
    common = ["--agent", "oracle", "--out", str(run), "--traces"]
    assert main(["eval", "--tasks", "A1,F1,J1", "--modes", "standard,aoi_full", *common]) == 0
    assert main(["eval", "--tasks", "H1", "--modes", "aoi_interactive", *common]) == 0
    assert main(["view", str(run)]) == 0
    index = run / VIEW_DIR / "index.html"
    episodes = [(t, m) for t in ("A1", "F1", "J1") for m in ("standard", "aoi_full")]
    episodes.append(("H1", "aoi_interactive"))
    _check_index(browser, index.as_uri(), episodes)
    pages = index.parent / "episodes"
    for task, mode in episodes:
        page = pages / f"{task}-{mode}-oracle-0.html"
        data = _data(page)
        assert data["problems"] == [], (task, mode)
        shown = _check_episode(browser, page.as_uri())
        assert shown["steps"] >= 3
    a1 = _data(pages / "A1-aoi_full-oracle-0.html")
    assert a1["transcript"] and a1["page_said"]  # heard on the axis, beside what the page said
    assert any(s["keyframes"] for s in a1["steps"])  # the podcast page moves while it plays
    # The agent's voice: sound in voice.wav while it spoke, silence before.
    h1 = _data(pages / "H1-aoi_interactive-oracle-0.html")
    (said,) = h1["agent_said"]
    with wave.open(str(run / "traces" / "H1-aoi_interactive-oracle-0" / "voice.wav")) as wav:
        pcm = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2") / 32768.0
    rms = lambda a, b: float(np.sqrt(np.mean(pcm[int(a * RATE) : int(b * RATE)] ** 2)))  # noqa: E731
    assert rms(said["start"], said["end"]) > 20 * max(rms(0.0, max(0.5, said["start"] - 0.5)), 1e-4)
