"""The env on the real stack: Chromium under Xvfb, PulseAudio, the task server."""

from __future__ import annotations

import os
import re
import signal
import time
import urllib.request
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import dynacu_gym
from dynacu_gym import parse_action
from dynacu_gym.env import DynaCUEnv
from dynacu_gym.perception.keyframes import changed_fraction, gate_view
from dynacu_gym.runtime.process import descendants
from dynacu_gym.tasks import find_task

pytestmark = pytest.mark.browser


def _probe(env):
    return env.evaluate_in_page("() => window.probe")


def test_click_lands_on_the_pixel(probe_env):
    probe_env.reset(seed=0)
    for x, y in [(300, 300), (6, 712), (1250, 6)]:  # x < 1265: right of that is the scrollbar
        obs, reward, terminated, truncated, info = probe_env.step(parse_action(f"click {x} {y}"))
        assert info["last_action_error"] == ""
        assert _probe(probe_env)["clicks"][-1] == [x, y]
        # The page draws a red 10x10 marker centred on the click; the screen grab sees it.
        shot = obs["screenshot"]
        cx, cy = min(max(x, 5), 1274), min(max(y, 5), 714)
        patch = shot[cy - 2 : cy + 3, cx - 2 : cx + 3]
        assert (patch[..., 0] > 200).all() and (patch[..., 1] < 60).all()


def test_page_fills_the_screen_exactly(probe_env):
    probe_env.reset(seed=0)
    size = probe_env.evaluate_in_page("() => [innerWidth, innerHeight, screenX, screenY]")
    assert size == [1280, 720, 0, 0]


def test_typed_text_and_keys_arrive(probe_env):
    probe_env.reset(seed=0)
    probe_env.step(parse_action("click 640 200"))
    probe_env.step(parse_action('type "grey whale"'))
    probe_env.step(parse_action("key Backspace"))
    probe_env.step(parse_action('type "é"'))
    value = probe_env.evaluate_in_page("() => document.getElementById('field').value")
    assert value == "grey whalé"
    probe_env.step(parse_action("key Control+a"))
    probe_env.step(parse_action("key Delete"))
    assert probe_env.evaluate_in_page("() => document.getElementById('field').value") == ""
    assert "Backspace" in _probe(probe_env)["keys"]


def test_scroll_moves_the_page(probe_env):
    probe_env.reset(seed=0)
    probe_env.step(parse_action("scroll down 3"))
    probe_env.step(parse_action("wait 0.3"))
    assert _probe(probe_env)["scrollY"] == 300
    probe_env.step(parse_action("scroll up 1"))
    probe_env.step(parse_action("wait 0.3"))
    assert _probe(probe_env)["scrollY"] == 200


@pytest.mark.parametrize("clock", ["realtime", "paused"])
def test_an_open_dropdown_is_whole_in_the_screenshot_of_its_click(make_env, clock):
    """A native dropdown's list is a window of its own, which faded in over ~60 ms after the
    page had painted: the click's screenshot showed it faint, and the next step showed it
    again, changed. With window animations off it is whole at once, and on a loaded machine
    (where it was drawn after the screenshot) the step waits until it is drawn. In paused
    time the step waits for it after the click's time has passed."""
    env = make_env("S22", clock=clock)
    obs, _ = env.reset(seed=0)
    assert env.sandbox.display.popups() == []
    before = gate_view(obs["screenshot"])
    x, y = map(int, _center(env, "#f-subject").split())
    obs, *_ = env.step(parse_action(f"click {x} {y}"))
    shot = gate_view(obs["screenshot"])
    (box,) = env.sandbox.display.popups()  # the list, below the dropdown and as wide
    left, top, width, height = box
    assert left <= x < left + width and y < top and height > 50
    time.sleep(0.3)
    later = gate_view(env.sandbox.display.grab())
    assert changed_fraction(shot, before) > 0.05  # the list is open ...
    assert changed_fraction(later, shot) == 0.0  # ... and nothing more came of the click
    env.step(parse_action("key Escape"))
    assert env.sandbox.display.popups() == []


def test_wait_takes_wall_time(probe_env):
    obs, _ = probe_env.reset(seed=0)
    t = time.monotonic()
    obs, *_ = probe_env.step(parse_action("wait 2"))
    took = time.monotonic() - t
    assert 2.0 <= took < 2.3
    assert float(obs["elapsed"]) >= 2.0


def test_result_decides_reward(probe_env):
    probe_env.reset(seed=0)
    probe_env.step(parse_action("click 640 200"))
    probe_env.step(parse_action('type "the Blue Whale"'))
    obs, reward, terminated, truncated, info = probe_env.step(parse_action("key Enter"))
    assert (reward, terminated, truncated, info["task_result"]) == (1.0, True, False, "success")
    # After the end, steps are reported, not performed.
    obs, reward, terminated, *_ = probe_env.step(parse_action("click 1 1"))
    assert reward == 0.0 and "episode has ended" in obs["last_action_error"]


def test_wrong_answer_is_the_named_failure(probe_env):
    probe_env.reset(seed=0)
    probe_env.step(parse_action("click 640 200"))
    probe_env.step(parse_action('type "grey whale"'))
    _, reward, terminated, _, info = probe_env.step(parse_action("key Enter"))
    assert (reward, terminated, info["task_result"]) == (0.0, True, "wrong_answer")


def test_done_ends_with_the_page_verdict(probe_env):
    probe_env.reset(seed=0)
    _, reward, terminated, truncated, info = probe_env.step(parse_action("done"))
    assert (reward, terminated, truncated, info["task_result"]) == (0.0, True, False, "pending")


def test_agent_mistakes_are_reported_not_raised(probe_env):
    probe_env.reset(seed=0)
    for bad, message in [
        ({"type": "click", "x": 5000, "y": 3}, "off the screen"),
        ({"type": "warp"}, "expected an action type"),
        ({"type": "type", "text": "x" * 100_000}, "at most 4096"),
        ("click 1 2", "expected an action dict"),
        ({"type": "speak", "text": "hello"}, "speak needs the speak channel"),
    ]:
        obs, reward, terminated, truncated, info = probe_env.step(bad)
        assert message in info["last_action_error"]
        assert message in obs["last_action_error"]
        assert "[LAST ACTION ERROR]" in obs["record"]
        assert not terminated and not truncated
    assert probe_env.observation_space.contains(obs)
    # The env is still usable.
    _, _, _, _, info = probe_env.step(parse_action("click 640 200"))
    assert info["last_action_error"] == ""


def test_observation_record_and_timings(probe_env):
    obs, info = probe_env.reset(seed=0)
    assert probe_env.observation_space.contains(obs)
    assert obs["screenshot"].shape == (720, 1280, 3) and obs["screenshot"].dtype == np.uint8
    assert obs["record"].startswith("Observation Record — Step 0 (t = ")
    obs, _, _, _, info = probe_env.step(parse_action("wait 0.5  # nothing yet"))
    assert "Step 1: wait 0.5  # nothing yet" in obs["record"]
    assert "[TASK] Type the word shown in the box" in obs["record"]
    assert set(info["timings"]) >= {"action", "result", "capture", "total"}


def test_page_cannot_reach_other_addresses(probe_env):
    probe_env.reset(seed=0)
    origin = probe_env.sandbox.server.origin
    for url in [
        "http://example.com/",
        "http://127.0.0.2:9/",
        "http://[::1]:1/",
        "https://10.0.0.1/",
    ]:
        assert probe_env.evaluate_in_page("u => window.tryFetch(u)", url) == "blocked"
        assert url in probe_env.sandbox.browser.blocked_requests
    assert (
        probe_env.evaluate_in_page("u => window.tryFetch(u)", origin + "/api/episode")
        == "status 200"
    )


def test_server_refuses_private_and_foreign_files(probe_env):
    probe_env.reset(seed=0)
    origin = probe_env.sandbox.server.origin

    def status(path):
        try:
            with urllib.request.urlopen(origin + path, timeout=5) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code

    assert status("/task/index.html") == 200
    assert status("/shared/dynacu-task.js") == 200
    for path in [
        "/task/task.toml",
        "/task/../90-input-probe/task.toml",
        "/task/%2e%2e/%2e%2e/%2e%2e/pyproject.toml",
        "/shared/../H/1-capital-screening/task.toml",
        "/shared/../H/1-capital-screening/audio/manifest.json",
        "/etc/passwd",
        "/task/.hidden",
    ]:
        assert status(path) == 404, path
    # The episode data holds hashes, not answers.
    with urllib.request.urlopen(origin + "/api/episode", timeout=5) as r:
        body = r.read().decode()
    assert "blue whale" not in body.lower() and "hashes" in body


def test_two_envs_are_isolated(make_env, probe_task):
    a, b = make_env(probe_task), make_env(probe_task)
    a.reset(seed=0)
    b.reset(seed=0)
    assert a.sandbox.display.display != b.sandbox.display.display
    assert a.sandbox.audio.socket != b.sandbox.audio.socket
    assert a.sandbox.audio.pid != b.sandbox.audio.pid
    assert a.sandbox.server.origin != b.sandbox.server.origin
    a.step(parse_action("click 100 100"))
    b.step(parse_action("click 200 200"))
    assert _probe(a)["clicks"] == [[100, 100]]
    assert _probe(b)["clicks"] == [[200, 200]]


def _playwright_disabled_features() -> set[str]:
    """The features the installed Playwright's driver switches off in Chromium."""
    import playwright

    driver = Path(playwright.__file__).parent / "driver" / "package" / "lib"
    for path in sorted(driver.rglob("*.js")):
        text = path.read_text(errors="replace")
        at = text.find("disabledFeatures = [")
        if at >= 0:
            body = re.sub(r"//[^\n]*", "", text[at : text.index("]", at)])
            return set(re.findall(r'"([^"]+)"', body))
    raise AssertionError(f"no disabledFeatures list under {driver}")


def test_chromium_keeps_every_feature_playwright_switches_off(probe_env):
    """Chromium reads only the last --disable-features: ours must carry Playwright's too."""
    probe_env.reset(seed=0)
    (pid,) = probe_env.sandbox.browser_or_raise().browser_pids()
    args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    flags = [a for a in args if a.startswith("--disable-features=")]
    assert len(flags) >= 2  # Playwright's, then ours
    kept = set(flags[-1].split("=", 1)[1].split(","))
    wanted = _playwright_disabled_features()
    assert "PaintHolding" in wanted and wanted <= kept, sorted(wanted - kept)
    assert {"Translate", "DialMediaRouteProvider"} <= kept


def test_close_leaves_no_process(probe_task):
    before = descendants()
    env = dynacu_gym.env.DynaCUEnv(probe_task)
    env.reset(seed=0)
    started = descendants() - before
    assert len(started) >= 4  # Xvfb, pulseaudio, the Playwright driver, Chromium
    env.close()
    env.close()  # idempotent
    deadline = time.monotonic() + 5
    while descendants() & started and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not descendants() & started


def test_killed_browser_truncates_and_reset_recovers(make_env, probe_task):
    env = make_env(probe_task)
    env.reset(seed=0)
    for pid in env.sandbox.browser.browser_pids():
        os.kill(pid, signal.SIGKILL)
    obs, reward, terminated, truncated, info = env.step(parse_action("click 10 10"))
    assert truncated and reward == 0.0
    assert "browser" in info["infra_error"].lower() or "closed" in info["infra_error"].lower()
    obs, info = env.reset(seed=1)
    assert info["restarts"] == 1
    _, _, _, _, info = env.step(parse_action("click 640 200"))
    assert info["last_action_error"] == "" and "infra_error" not in info


def test_killed_audio_daemon_truncates_and_reset_recovers(make_env, probe_task):
    env = make_env(probe_task)
    env.reset(seed=0)
    old_pid = env.sandbox.audio.pid
    os.kill(old_pid, signal.SIGKILL)
    time.sleep(0.2)
    _, _, _, truncated, info = env.step(parse_action("wait 0.1"))
    assert truncated and "audio" in info["infra_error"]
    env.reset(seed=0)
    assert env.sandbox.audio.pid != old_pid and env.sandbox.audio.alive()
    _, _, _, truncated, _ = env.step(parse_action("wait 0.1"))
    assert not truncated


def test_step_before_reset_raises(make_env, probe_task):
    env = make_env(probe_task)
    with pytest.raises(gym.error.ResetNeeded):
        env.step(parse_action("wait 0"))


def test_page_that_never_gets_ready_is_a_clear_error(make_env, tmp_path, probe_task):
    import shutil

    from dynacu_gym.tasks import load_task

    folder = tmp_path / "F" / "90-input-probe"
    shutil.copytree(probe_task.root, folder)
    page = folder / "index.html"
    page.write_text(page.read_text().replace("DynaCU.task({", "({"))
    env = make_env(load_task(folder), ready_timeout_s=1.0, max_restarts=1)
    with pytest.raises(dynacu_gym.runtime.process.InfraError, match="did not become ready"):
        env.reset(seed=0)


def test_stopping_a_child_with_unwritten_input_does_not_raise(tmp_path):
    # A feeder (like the voice's pacat) stopped while its input still holds unflushed bytes:
    # closing the pipe to a dead child must not raise (it did, at reset during speech).
    import subprocess

    from dynacu_gym.runtime.process import ChildProcess

    child = ChildProcess(
        "sleep", ["sleep", "30"], log_path=tmp_path / "sleep.log", stdin=subprocess.PIPE
    )
    child.popen.stdin.write(b"x" * 100)  # buffered, not yet sent
    child.stop()
    assert not child.alive()


def _center(env, selector):
    x, y = env.evaluate_in_page(
        "(s) => { const r = document.querySelector(s).getBoundingClientRect();"
        " return [Math.round(r.x + r.width / 2), Math.round(r.y + r.height / 2)]; }",
        selector,
    )
    return f"{x} {y}"


@pytest.mark.audio
@pytest.mark.parametrize(
    ("code", "discount", "result", "credit"),
    [
        ("LATTE10", "10", "wrong_answer", 0.0),
        ("ROASTRIDE", "10", "wrong_answer", 0.5),
        ("ROASTRIDE", "35", "success", 1.0),
    ],
)
def test_a_checklist_pays_partial_credit(make_env, code, discount, result, credit):
    """A5 asks for a promo code and a discount: each right answer is half the credit."""
    checklist = make_env("A5", reward_mode="checklist")
    binary = make_env("A5")
    for env in (checklist, binary):
        _, info = env.reset(seed=0)
        assert info["checklist"] == {"code": False, "discount": False} and info["credit"] == 0.0
        total = 0.0
        for action in (
            f"click {_center(env, '#answer-input-code')}",
            f'type "{code}"',
            f"click {_center(env, '#answer-input-discount')}",
            f'type "{discount}"',
            f"click {_center(env, '#answer-submit')}",
            "wait 1",
        ):
            _, reward, terminated, _, info = env.step(parse_action(action))
            total += reward
            if terminated:
                break
        assert info["task_result"] == result
        assert info["checklist"] == {"code": code == "ROASTRIDE", "discount": discount == "35"}
        assert info["credit"] == credit
        assert total == (credit if env is checklist else float(result == "success"))


@pytest.mark.parametrize(
    ("boxes", "checklist", "result"),
    [
        # Greenway Deals starts ticked; the gardening letters are The Potting Bench and Seed & Soil.
        (["Greenway Deals", "Seed & Soil"], {"first": False, "second": True}, "wrong_answer"),
        (
            ["The Potting Bench", "Indoor Living", "Seed & Soil"],
            {"first": True, "second": False},  # both asked boxes, but two wrong ones ticked
            "wrong_answer",
        ),
        (
            ["Greenway Deals", "The Potting Bench", "Seed & Soil"],
            {"first": True, "second": True},
            "success",
        ),
    ],
)
def test_a_group_of_boxes_is_graded_by_which_are_ticked(make_env, boxes, checklist, result):
    """S2's boxes: each asked box ticked holds its criterion, wherever it stands in the group;
    a wrong box ticked costs the group's ``only`` criterion (second) and fails the form."""
    env = make_env("S2", reward_mode="checklist")
    env.reset(seed=0)
    total = 0.0
    for label in boxes:
        box = f'#f-letters input[data-label="{label}"]'
        _, reward, *_ = env.step(parse_action(f"click {_center(env, box)}"))
        total += reward
    _, reward, terminated, _, info = env.step(
        parse_action(f"click {_center(env, '.st-form button[type=submit]')}")
    )
    total += reward
    assert terminated and info["task_result"] == result
    assert info["checklist"] == checklist
    assert total == info["credit"] == sum(checklist.values()) / 2


def test_a_table_pick_decides_only_when_confirmed(make_env):
    """S19's plans: "Choose" selects a row and opens the bar; only its "Continue" answers, with
    the row selected last. A stray click on a row decides nothing."""
    env = make_env("S19")
    env.reset(seed=0)
    for plan in ("Team", "Plus"):  # Team is over the budget; Plus is the answer
        _, reward, terminated, _, info = env.step(
            parse_action(f"click {_center(env, f'button[data-value={plan!r}]')}")
        )
        assert not terminated and reward == 0.0 and info["task_result"] == "pending"
        said = "() => document.querySelector('.st-confirm-text').textContent"
        assert env.evaluate_in_page(said) == f"Your choice: {plan}"
        chosen = "() => [...document.querySelectorAll('tr.chosen td')].map((td) => td.textContent)"
        assert env.evaluate_in_page(chosen)[0] == plan
    _, reward, terminated, _, info = env.step(parse_action(f"click {_center(env, '.st-confirm')}"))
    assert terminated and reward == 1.0 and info["task_result"] == "success"


def test_a_form_with_a_confirm_step_decides_on_the_bar(make_env):
    """S24's checkout: "Continue to payment" opens the bar with the option given; a change to
    the form closes it, and only the bar's "Confirm delivery" answers."""
    env = make_env("S24")
    env.reset(seed=0)
    bar = "() => document.querySelector('.st-confirm-text')?.textContent ?? null"

    def click(selector: str):
        return env.step(parse_action(f"click {_center(env, selector)}"))

    answer = env.task.answers["delivery"]
    wrong = next(o for o in ("Economy", "Standard", "Tracked", "Express") if o not in answer.accept)
    for option in (wrong, answer.accept[0]):
        click(f'#f-delivery input[value="{option}"]')
        assert env.evaluate_in_page(bar) is None  # the change closed the bar
        _, reward, terminated, _, info = click(".st-form button[type=submit]")
        assert not terminated and reward == 0.0 and info["task_result"] == "pending"
        assert env.evaluate_in_page(bar) == f"Please check: Delivery option: {option}"
    _, reward, terminated, _, info = click(".st-confirm")
    assert terminated and reward == 1.0 and info["task_result"] == "success"


def test_a_shorter_time_limit_ends_the_episode_then(make_env):
    """``time_limit_s`` replaces the task's limit: S1's page, which waits 180 s for an agent,
    calls time after 4 s, and the env stops there."""
    env = make_env("S1", time_limit_s=4)
    assert env.task.time_limit_s == 4.0 and find_task("S1").time_limit_s == 180.0
    env.reset(seed=0)
    _, _, terminated, _, info = env.step(parse_action("wait 2"))
    assert not terminated and info["task_result"] == "pending"
    _, reward, terminated, _, info = env.step(parse_action("wait 3"))
    assert terminated and info["task_result"] == "timeout" and reward == 0.0


@pytest.mark.parametrize(
    ("limit", "error"),
    [
        (0, ValueError),
        (-5.0, ValueError),
        (float("nan"), ValueError),
        (1e9, ValueError),
        ("60", TypeError),
        (True, TypeError),
    ],
)
def test_a_bad_time_limit_is_refused(probe_task, limit, error):
    with pytest.raises(error, match="time_limit_s"):
        DynaCUEnv(probe_task, time_limit_s=limit)


def test_an_unknown_reward_mode_is_refused(probe_task):
    with pytest.raises(ValueError, match="expected reward_mode in \\('binary', 'checklist'\\)"):
        DynaCUEnv(probe_task, reward_mode="partial")
