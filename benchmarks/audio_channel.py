"""The audio channel, measured on every task with speech, through the real browser audio path.

    python benchmarks/audio_channel.py [--tasks 'A*,B1'] [--step 2.0]

Prints, per task and overall:
- latency of the recent layer: from the end of a spoken sentence to text reaching a step,
  first as unstable text (the utterance still going on) and then committed (median, p90),
  polled every 50 ms;
- the channel's per-step overhead: time a step spends in the audio wrapper (median, p90);
- CPU while listening: this process (capture reader + Whisper threads + env) and parec, in % of
  one core, against the same task in standard mode;
- word error rate of every sentence committed in the run against the lines the page played
  (a line the page plays only once the agent acts is not counted when no agent acts), numbers
  normalised ("nine dollars fifty" and "$9.50" both read "9 50"). A task whose page plays
  nothing until the agent acts (a call to answer) is listed and left out of the totals.

Targets (2 cores): unstable text within 0.5 s of a sentence's end (median; p90 1.0 s),
committed within 1.0 s (p90 2.0 s), and a word error rate of at most 4.4%.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import threading
import time
from pathlib import Path

import gymnasium as gym

import dynacu_gym  # noqa: F401
from dynacu_gym.harness.cli import select_tasks
from dynacu_gym.tasks import find_task
from dynacu_gym.tasks.answers import _ORDINAL_WORDS, _TENS, _UNITS, _base, _words_to_number
from dynacu_gym.tasks.audio_assets import audio_clips, spoken_lines
from dynacu_gym.wrappers.transcript import AudioTranscript

TICKS = os.sysconf("SC_CLK_TCK")
NUMBER_WORDS = set(_UNITS) | set(_TENS) | {"hundred", "thousand", "million", "billion", "and"}
DROP = {"dollars", "dollar", "cents", "cent", "percent"}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def wer_tokens(text: str) -> list[str]:
    """Lower-case words with numbers as digits, for a word error rate that ignores notation."""
    text = _base(text).replace("-", " ")
    text = re.sub(r"(\d),(\d{3})", r"\1\2", text)
    text = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", text)
    raw = re.findall(r"[a-z']+|\d+|[,.;:!?]", text)  # punctuation ends a run of number words
    out: list[str] = []
    i = 0
    while i < len(raw):
        tok = raw[i]
        if tok in _ORDINAL_WORDS:
            out.append(str(_ORDINAL_WORDS[tok]))
        elif tok in NUMBER_WORDS and tok != "and":
            j = i
            while j < len(raw) and raw[j] in NUMBER_WORDS:
                j += 1
            run = [t for t in raw[i:j] if t != "and"]
            if j < len(raw) and raw[j] in _ORDINAL_WORDS and run and run[-1] in _TENS:
                out.append(str(_TENS[run.pop()] + _ORDINAL_WORDS[raw[j]]))
                j += 1
            if run and all(t in _UNITS and _UNITS[t] <= 9 for t in run) and len(run) > 1:
                out.append("".join(str(_UNITS[t]) for t in run))  # digits read one by one
            elif run:
                parsed = _words_to_number(run)
                out.append(str(parsed[0]) if parsed else " ".join(run))
            i = j
            continue
        elif tok not in DROP and tok not in ",.;:!?":
            out.append(tok)
        i += 1
    return out


def edit_distance(a: list[str], b: list[str]) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


# Notes the length of each clip a page starts: which script lines played.
STARTED_SCRIPT = """(() => {
  const start = AudioBufferSourceNode.prototype.start;
  window.__benchStarted = [];
  AudioBufferSourceNode.prototype.start = function (...args) {
    if (this.buffer) window.__benchStarted.push(this.buffer.duration);
    return start.apply(this, args);
  };
})();"""


def played_lines(task, started: list[float]) -> list[str]:
    """The script lines whose clips the page started (matched by length, to 50 ms)."""
    lines = spoken_lines(task)
    clips = audio_clips(task)
    left = list(started)
    out = []
    for (_, line), clip in zip(lines, clips, strict=True):
        near = [d for d in left if abs(d - clip["duration"]) <= 0.05]
        if near:
            left.remove(near[0])
            out.append(line.say)
    return out


def transcript_wrapper(env: gym.Env) -> AudioTranscript:
    while not isinstance(env, AudioTranscript):
        env = env.env  # type: ignore[attr-defined]
    return env


def run_task(task_id: str, step_s: float) -> dict:
    task = find_task(task_id)
    end = max(line.t for line in task.script if line.say and line.t <= task.duration_s) + 8.0
    env = gym.make(f"DynaCU-{task_id}-v0", mode="aoi_audio")
    first_seen: dict[tuple[float, str], float] = {}
    committed: dict[tuple[float, str], float] = {}  # (start, text) -> end, every stable one
    heard: list[tuple[float, float, float]] = []  # (start, end, seen) of any text, stable or not
    overheads: list[float] = []
    stop = threading.Event()
    try:
        env.reset(seed=0)  # starts the browser, which then notes the clips of the next page
        env.unwrapped.sandbox.browser_or_raise().add_init_script(STARTED_SCRIPT)
        obs, info = env.reset(seed=0)
        wrapper = transcript_wrapper(env)

        def poll() -> None:
            while not stop.wait(0.05):
                now = time.monotonic()
                for seg in wrapper.transcriber.snapshot():
                    heard.append((seg.start, seg.end, now))
                    if seg.stable:
                        first_seen.setdefault((seg.end, seg.text), now)
                        committed[(seg.start, seg.text)] = seg.end

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        parec = env.unwrapped.sandbox.capture.pid
        cpu0, parec0, wall0 = cpu_seconds(os.getpid()), cpu_seconds(parec), time.monotonic()
        while float(obs["elapsed"]) < end:
            obs, _, terminated, truncated, info = env.step({"type": "wait", "seconds": step_s})
            overheads.append(info["timings"]["asr"])
            if terminated or truncated:
                break
        wall = time.monotonic() - wall0
        cpu = (cpu_seconds(os.getpid()) - cpu0) / wall
        parec_cpu = (cpu_seconds(parec) - parec0) / wall
        stop.set()
        poller.join()
        started = env.unwrapped.sandbox.browser_or_raise().evaluate("() => window.__benchStarted")
    finally:
        stop.set()
        env.close()
    latencies = [seen - seg_end for (seg_end, _), seen in first_seen.items()]
    # Unstable: the first time any text reaching to within 0.3 s of the sentence's end existed.
    unstable = [
        min((seen for s, e, seen in heard if s <= seg_end and e >= seg_end - 0.3), default=seen_c)
        - seg_end
        for (seg_end, _), seen_c in first_seen.items()
    ]
    # The transcript's text of the whole run (the audio context keeps only its last 60 s).
    context = " ".join(text for _, text in sorted(committed))
    reference = wer_tokens(" ".join(played_lines(task, started)))
    hypothesis = wer_tokens(context)
    return {
        "latencies": latencies,
        "unstable": unstable,
        "overheads": overheads,
        "cpu": cpu,
        "parec_cpu": parec_cpu,
        "errors": edit_distance(reference, hypothesis),
        "words": len(reference),
        "wall": wall,
    }


def baseline_cpu(task_id: str, seconds: float) -> float:
    env = gym.make(f"DynaCU-{task_id}-v0")
    try:
        env.reset(seed=0)
        cpu0, wall0 = cpu_seconds(os.getpid()), time.monotonic()
        while time.monotonic() - wall0 < seconds:
            env.step({"type": "wait", "seconds": 2.0})
        return (cpu_seconds(os.getpid()) - cpu0) / (time.monotonic() - wall0)
    finally:
        env.close()


# (median, p90) of each latency, in seconds, and the word error rate.
TARGET_UNSTABLE = (0.5, 1.0)
TARGET_COMMITTED = (1.0, 2.0)
TARGET_WER = 0.044


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", help="task id patterns (default: every task with speech)")
    parser.add_argument("--step", type=float, default=2.0, help="seconds each wait step takes")
    args = parser.parse_args()
    ids = [t for t in select_tasks(args.tasks) if any(line.say for line in find_task(t).script)]
    all_lat, all_unstable, all_over, errors, words, cpus, parecs = [], [], [], 0, 0, [], []
    header = ("task", "lat med", "lat p90", "step med", "cpu", "parec", "WER")
    print(f"{header[0]:5} " + " ".join(f"{h:>8}" for h in header[1:]))
    measured = 0
    for task_id in ids:
        r = run_task(task_id, args.step)
        if not r["words"]:
            print(f"{task_id:5} the page played no speech without an agent: left out", flush=True)
            continue
        measured += 1
        all_lat += r["latencies"]
        all_unstable += r["unstable"]
        all_over += r["overheads"]
        errors += r["errors"]
        words += r["words"]
        cpus.append(r["cpu"])
        parecs.append(r["parec_cpu"])
        lat, over = r["latencies"] or [float("nan")], r["overheads"]
        print(
            f"{task_id:5} {statistics.median(lat):7.2f}s {pct(lat, 0.9):7.2f}s "
            f"{1000 * statistics.median(over):6.1f}ms {100 * r['cpu']:7.0f}% "
            f"{100 * r['parec_cpu']:7.1f}% {r['errors'] / max(1, r['words']):8.1%}",
            flush=True,
        )
    base = baseline_cpu(ids[0], 20.0)
    print()
    print(f"tasks with speech: {len(ids)}, measured: {measured}")
    print(
        f"recent-layer latency (end of sentence -> first text, unstable): median "
        f"{statistics.median(all_unstable):.2f} s, p90 {pct(all_unstable, 0.9):.2f} s "
        f"(target <= {TARGET_UNSTABLE[0]:g} s, p90 <= {TARGET_UNSTABLE[1]:g} s)"
    )
    print(
        f"recent-layer latency (end of sentence -> committed text): median "
        f"{statistics.median(all_lat):.2f} s, p90 {pct(all_lat, 0.9):.2f} s (n={len(all_lat)}; "
        f"target <= {TARGET_COMMITTED[0]:g} s, p90 <= {TARGET_COMMITTED[1]:g} s)"
    )
    print(
        f"per-step overhead of the channel: median {1000 * statistics.median(all_over):.1f} ms, "
        f"p90 {1000 * pct(all_over, 0.9):.1f} ms (n={len(all_over)})"
    )
    cpu, parec = 100 * statistics.median(cpus), 100 * statistics.median(parecs)
    print(
        f"CPU while listening (this process, % of one core): median {cpu:.0f}% "
        f"(standard mode, same task: {100 * base:.0f}%); parec {parec:.1f}%"
    )
    print(
        f"word error rate over all speech: {errors / words:.1%} ({errors} errors / {words} words;"
        f" target <= {TARGET_WER:.1%})"
    )


if __name__ == "__main__":
    main()
