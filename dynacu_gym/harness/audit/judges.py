"""The verdicts: whether each evidence item was perceived where the premise wants it."""

from __future__ import annotations

import bisect
import math
from pathlib import Path
from typing import Any

from dynacu_gym.harness.audit.keys import seen
from dynacu_gym.harness.audit.observed import Observed
from dynacu_gym.harness.choices import STEP_S
from dynacu_gym.modes import MODE_CHANNELS, MODES, mode_channels
from dynacu_gym.tasks import Evidence, TaskSpec

AUDIO_MODES = tuple(m for m in MODES if "transcript" in MODE_CHANNELS[m])
KEYFRAME_MODES = tuple(m for m in MODES if "keyframes" in MODE_CHANNELS[m])
STANDARD = "standard"  # the screenshot-only agent the chance is the share of
STRUCTURED = "standard_structured"  # the same agent with the element list
SLACK_S = (1.0, 3.0)  # seconds before and after an evidence window that still count
TRANSIENT_CHANCE = 0.5  # transient: a screenshot-only agent catches it at most this often
LASTING_CHANCE = 0.9  # lasting: every one does (less a margin: OCR misreads a frame now and then)
TIMELINE = "timeline"
TIMELINE_MODE = "aoi_visual"


def judge_silent(task: TaskSpec, observed: dict[str, Observed]) -> list[dict[str, Any]]:
    """A static control (category S): no keyframes and no Whisper calls, in every mode.

    Nothing on the page moves or plays, so the keyframe and audio channels must stay silent;
    what the agent's own actions change is in each step's screenshot.
    """
    rows = []
    for mode, obs in observed.items():
        problems = []
        if obs.keyframes:
            problems.append(f"{obs.keyframes} keyframes on a static page")
        if obs.asr_calls:
            problems.append(f"{obs.asr_calls} Whisper calls on a page that plays nothing")
        if obs.heard:
            problems.append(f"heard {obs.heard_text(0.0, math.inf)!r} on a silent page")
        rows.append(
            {
                "task": task.id,
                "check": "silent",
                "mode": mode,
                "keyframes": obs.keyframes,
                "asr_calls": obs.asr_calls,
                "ok": not problems,
                "reason": "; ".join(problems),
            }
        )
    return rows


def judge_evidence(
    task: TaskSpec,
    observed: dict[str, Observed],
    timeline: Observed | None,
    step_s: float = STEP_S,
) -> list[dict[str, Any]]:
    """One row per evidence item and mode, and one for the timeline.

    Each row says whether the item was seen, and whether the premise wants that (see the
    module's docstring).
    """
    rows = []
    for number, item in enumerate(task.evidence, start=1):
        if item.channel == "visual" and not item.keys:
            # Not text (a highlight, a mole, a falling fruit): OCR cannot look for it.
            unread = {"check": "unread", "mode": "", "seen": None, "ok": True, "reason": ""}
            rows.append({**_item_fields(task, number, item), **unread})
            continue
        after_speech = item.follows is not None and task.solution[item.follows - 1].speaks
        verdicts = [(TIMELINE, *_judge_timeline(item, timeline))]
        verdicts += [
            (m, *_judge_mode(item, m, o, timeline, step_s, after_speech))
            for m, o in observed.items()
        ]
        for mode, found, problems, extra in verdicts:
            if not item.keys:
                problems = ["no keys to listen for: give the audio evidence item keys"]
            rows.append(
                {
                    **_item_fields(task, number, item),
                    "mode": mode,
                    "seen": found,
                    **extra,
                    "ok": not problems,
                    "reason": "; ".join(problems),
                }
            )
    return rows


def frames_to_read(
    task: TaskSpec, observed: dict[str, Observed], timeline: Observed | None
) -> list[Path]:
    """The frames the judges read, to OCR ahead; the rest is never read.

    Those in the windows of visual items with keys; in the timeline also the frame on screen
    when a window opens (the chance reads it), all after a transient item's window, and all of
    it when spoken keys must not be on the page. A dashboard whose items are charts (no keys)
    has most of its keyframes left unread.
    """
    windows, after, everything = [], math.inf, False
    for item in task.evidence:
        if item.keys and item.channel == "audio":
            everything = True
        elif item.keys:
            windows.append(_window(item))
            if item.transient:
                after = min(after, windows[-1][1])

    def inside(t: float) -> bool:
        return any(lo <= t <= hi for lo, hi in windows)

    paths = [p for o in observed.values() for t, p in o.frames if inside(t)]
    if timeline is not None:
        times = [t for t, _ in timeline.frames]
        opening = {bisect.bisect_right(times, lo) - 1 for lo, _ in windows} - {-1}
        paths += [
            p
            for k, (t, p) in enumerate(timeline.frames)
            if everything or t >= after or inside(t) or k in opening
        ]
    return paths


def _item_fields(task: TaskSpec, number: int, item: Evidence) -> dict[str, Any]:
    return {
        "task": task.id,
        "check": "evidence",
        "evidence": number,
        "channel": item.channel,
        "transient": item.transient,
        "keys": list(item.keys),
        "fact": item.fact,
    }


Verdict = tuple[bool, list[str], dict[str, Any]]  # seen, what is wrong, more fields


def _window(item: Evidence) -> tuple[float, float]:
    return item.window[0] - SLACK_S[0], item.window[1] + SLACK_S[1]


def has_lists(mode: str) -> bool:
    """Whether ``mode``'s agent reads the page's element list (the timeline: its mode's)."""
    try:
        return "elements" in mode_channels(TIMELINE_MODE if mode == TIMELINE else mode)
    except ValueError:
        return False  # a row of a mode this version does not know


def _spoken_listed(item: Evidence, mode: str, obs: Observed) -> tuple[list[str], dict[str, Any]]:
    """An audio item in a mode with element lists: never in any of them, all episode long.

    Like the timeline's "readable on the page", half its keys listed at any time is a leak.
    """
    if not has_lists(mode):
        return [], {}
    listed = obs.shows(item.keys, 0.0, math.inf, screens=False, lists=True)
    return ["spoken evidence is listed in the page elements"] if listed else [], {"listed": listed}


def _judge_timeline(item: Evidence, timeline: Observed | None) -> Verdict:
    """Audio: never on the page. Visual: on screen in its window; transient: gone after it.

    The timeline runs in a mode with element lists: an audio item must not be listed either,
    a visual item counts on screen where OCR or the lists hold it, and a transient one must be
    gone from both after its window.
    """
    if timeline is None:
        return False, ["no timeline run"], {}
    lo, hi = _window(item)
    lists = has_lists(TIMELINE)
    if item.channel == "audio":
        # Half the pieces on the page is already a leak, whatever the item needs.
        shown = timeline.shows(item.keys, 0.0, math.inf)
        leaks, listed = _spoken_listed(item, TIMELINE, timeline)
        problems = ["spoken evidence is readable on the page"] if shown else []
        return shown, problems + leaks, listed
    shown = timeline.shows(item.keys, lo, hi, item.all_keys, lists=lists)
    fields: dict[str, Any] = {}
    if lists:
        fields["listed"] = timeline.shows(
            item.keys, lo, hi, item.all_keys, screens=False, lists=True
        )
    problems = []
    if not shown:
        problems.append(
            "not on screen in its window even in the timeline: check its keys and window, "
            "or the text is too small for OCR"
        )
    if item.transient and timeline.shows(item.keys, hi, math.inf, item.all_keys):
        problems.append("still on screen after its window: it is not transient")
    elif (
        item.transient
        and lists
        and timeline.shows(item.keys, hi, math.inf, item.all_keys, screens=False, lists=True)
    ):
        problems.append("still listed in the page elements after its window: it is not transient")
    return shown, problems, fields


def _judge_mode(
    item: Evidence,
    mode: str,
    obs: Observed,
    timeline: Observed | None,
    step_s: float,
    after_speech: bool = False,
) -> Verdict:
    """Audio: heard in the audio modes. Visual: seen where the premise wants it.

    An audio item played only ``after_speech`` (it follows a spoken step) is wanted only in
    the modes that speak: elsewhere the page never plays it; and in a mode with element lists
    it is in none of them. In standard, a visual item is also judged by its chance (see
    :meth:`Observed.chance`); in standard_structured a transient one by its chance with the
    lists (see the module's docstring). In a mode with lists, a visual item is seen where OCR
    or the lists hold it, and ``listed`` says whether the lists alone did.
    """
    lo, hi = _window(item)
    if item.channel == "audio":
        found = seen(item.keys, obs.heard_text(lo, hi), item.all_keys)
        wanted = mode in AUDIO_MODES and (not after_speech or "speech" in MODE_CHANNELS[mode])
        missing = wanted and not found
        problems = ["audio evidence not heard in its window", *_cut_short(item, obs)]
        leaks, listed = _spoken_listed(item, mode, obs)
        return found, (problems if missing else []) + leaks, listed
    lists = has_lists(mode)
    found = obs.shows(item.keys, lo, hi, item.all_keys, lists=lists)
    extra: dict[str, Any] = {}
    if lists:
        extra["listed"] = obs.shows(item.keys, lo, hi, item.all_keys, screens=False, lists=True)
    kind = "transient" if item.transient else "lasting"
    problems = []
    if (not item.transient or mode in KEYFRAME_MODES) and not found:
        problems += [f"{kind} visual evidence not seen", *_cut_short(item, obs)]
    if mode not in (STANDARD, STRUCTURED) or timeline is None:
        return found, problems, extra
    chance = timeline.chance(item.keys, lo, hi, step_s, item.all_keys, item.follows, lists)
    extra["chance"] = chance
    agent = "a screenshot-only agent" + (" with the element list" if lists else "")
    if item.transient and chance > TRANSIENT_CHANCE:
        problems.append(
            f"{agent} stepping about every {step_s:g} s sees it {chance:.0%} of "
            "the time: show it for less time, or call it lasting"
        )
    if mode == STANDARD and not item.transient and chance < LASTING_CHANCE:
        problems.append(
            f"{agent} stepping about every {step_s:g} s sees it only "
            f"{chance:.0%} of the time: call it transient, or show it for longer"
        )
    return found, problems, extra


def _cut_short(item: Evidence, obs: Observed) -> list[str]:
    """Why an item was missed, where the watched episode ended before its window opened.

    Then the page never played or showed it (a game the watcher lost, say): the episode, not
    the channel, missed it.
    """
    if obs.ended >= item.window[0]:
        return []
    how = f" ({obs.result})" if obs.result else ""
    return [f"the episode ended{how} at {obs.ended:.1f} s, before the item's window opened"]
