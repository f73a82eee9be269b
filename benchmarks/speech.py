"""The speak channel's latency, through the real path: piper -> pacat -> PulseAudio -> Chromium's
getUserMedia -> the page's energy detector -> the task server's Whisper -> the page.

    python benchmarks/speech.py [--runs 20]

A listening page (tests/fixtures/tasks/H/90-listen-probe) logs, on its own clock, when each
utterance's energy first crossed its threshold and when the server's transcript came back. Per
run the agent speaks one sentence; the page clock is mapped to the env's by a round trip.
Prints median and p90 of: the ``speak`` step's own duration; from the step call to the first
sample scheduled; to the page detecting speech energy (target <= 0.5 s); to the page holding
the transcript; and from the end of the speech to the transcript.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from dynacu_gym.env import DynaCUEnv
from dynacu_gym.modes import apply_mode
from dynacu_gym.tasks import load_task

PROBE = Path(__file__).parent.parent / "tests" / "fixtures" / "tasks" / "H" / "90-listen-probe"
SENTENCES = [
    "The capital of Australia is Canberra.",
    "My order number is four four one seven.",
    "I can start on Monday the third of March.",
    "Yes, that works for me.",
    "The meeting moved to half past two.",
    "Please send the invoice to the billing team.",
    "I have five years of experience with customers.",
    "The total came to nineteen dollars and fifty cents.",
    "No, the second option is better.",
    "Thank you, that answers my question.",
]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def page_offset(env: DynaCUEnv) -> float:
    """Monotonic seconds at the page's performance.now() == 0."""
    before = time.monotonic()
    page_ms = env.evaluate_in_page("() => performance.now()")
    after = time.monotonic()
    return (before + after) / 2 - page_ms / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()

    base = DynaCUEnv(load_task(PROBE))
    env = apply_mode(base, "aoi_interactive")
    rows: dict[str, list[float]] = {
        k: [] for k in ("step", "scheduled", "energy", "transcript", "after_end")
    }
    try:
        env.reset(seed=0)
        while not base.evaluate_in_page("() => !!document.querySelector('#state.listening')"):
            env.step({"type": "wait", "seconds": 0.2})
        offset = page_offset(base)
        # Chromium's capture runs ~0.6 s late for its first second or two after getUserMedia
        # (a page detail, not the channel's): task pages listen from their start, so let it
        # settle as theirs has by the time an agent answers.
        env.step({"type": "wait", "seconds": 3.0})
        for run in range(args.runs):
            text = SENTENCES[run % len(SENTENCES)]
            env.step({"type": "wait", "seconds": 1.0})  # silence between utterances
            seen = len(base.evaluate_in_page("() => window.DynaCU.mic.log"))
            called = time.monotonic()
            _, _, _, truncated, info = env.step({"type": "speak", "text": text})
            rows["step"].append(time.monotonic() - called)
            assert not truncated, info.get("infra_error")
            t0 = base.episode_start
            rows["scheduled"].append(t0 + info["speech"]["starts_at"] - called)
            deadline = time.monotonic() + 20
            while len(log := base.evaluate_in_page("() => window.DynaCU.mic.log")) <= seen:
                if time.monotonic() > deadline:
                    raise SystemExit(f"run {run}: the page heard nothing")
                env.step({"type": "wait", "seconds": 0.2})
            entry = log[seen]
            rows["energy"].append(offset + entry["onset"] / 1000 - called)
            rows["transcript"].append(offset + entry["heardAt"] / 1000 - called)
            ends = t0 + info["speech"]["ends_at"]
            rows["after_end"].append(offset + entry["heardAt"] / 1000 - ends)
            print(f"  run {run + 1:2}: scheduled {rows['scheduled'][-1]:.3f} s, energy "
                  f"{rows['energy'][-1]:.3f} s, transcript {rows['transcript'][-1]:.3f} s  "
                  f"{entry['text']!r}", flush=True)  # fmt: skip
    finally:
        env.close()
    print(f"\nlatency from step(speak) over {args.runs} runs (seconds): median, p90")
    labels = {
        "step": "the speak step returns",
        "scheduled": "first sample scheduled to play",
        "energy": "page detects speech energy",
        "transcript": "page holds the transcript",
        "after_end": "transcript after the speech ends",
    }
    for key, label in labels.items():
        values = rows[key]
        print(f"  {label:34} {statistics.median(values):6.3f}  {pct(values, 0.9):6.3f}")


if __name__ == "__main__":
    main()
