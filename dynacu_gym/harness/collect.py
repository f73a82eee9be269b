"""Demonstrations for fine-tuning: episodes as chat turns that a training stack reads directly.

``dynacu collect --agent oracle --tasks ... --modes ... --out DIR`` runs the episodes through
the evaluation runner with their traces (``DIR/traces/``, see :mod:`dynacu_gym.harness.trace`), then
writes ``DIR/demos.jsonl``: one line per step the agent took, in the chat ``messages`` format
with the images as files::

    {"messages": [
        {"role": "system", "content": [{"type": "text", "text": "You operate ..."}]},
        {"role": "user", "content": [{"type": "text", "text": "Observation Record ..."},
                                     {"type": "text", "text": "Screenshot now (t = 3.0s):"},
                                     {"type": "image", "text": null}, ...]},
        {"role": "assistant", "content": [{"type": "text", "text": "click 640 300  # ..."}]}],
     "images": ["traces/A5-aoi_full-oracle-0/screens/0002.png", ...],
     "task": "A5", "mode": "aoi_full", "agent": "oracle", "repeat": 0, "seed": 123,
     "variant": 0, "clock": "realtime", "step": 3,
     "outcome": {"result": "success", "success": true, "credit": 1.0, "steps": 7}}

The user turn is what the LLM agent (:class:`dynacu_agents.llm.LLMAgent`) sends for that
observation: the observation record, then the screenshot and each keyframe with its label.
Each ``{"type": "image"}`` part stands for the next path in ``images`` (relative to ``DIR``),
as the common vision fine-tuning stacks expect. Every part has both keys, so the lines load as
one table: ``datasets.load_dataset("json", data_files="DIR/demos.jsonl")``. The assistant turn
is the action as text with the agent's narration; steps whose action was invalid (an agent
mistake) are left out. ``successes_only`` keeps the episodes that succeeded. ``variant`` says
which of the task's variants played (``dynacu collect --variety`` draws one per seed), and
``clock`` how the page's time passed.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from dynacu_gym.actions import ActionError, format_action, validate_action
from dynacu_gym.harness.trace import OUTCOME_FILE, TRACE_FILE

DEMOS_FILE = "demos.jsonl"


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


IMAGE = {"type": "image", "text": None}


def episode_demos(trace: Path, root: Path, system: str) -> list[dict[str, Any]]:
    """The demonstration lines of the episode traced in ``trace`` (paths relative to ``root``).

    Raises:
        FileNotFoundError: the trace is not finished (no ``episode.json``).
    """
    episode = json.loads((trace / OUTCOME_FILE).read_text(encoding="utf-8"))
    steps = [
        json.loads(line) for line in (trace / TRACE_FILE).read_text(encoding="utf-8").splitlines()
    ]
    outcome = {
        "result": episode["result"],
        "success": bool(episode["success"]),
        "credit": float(episode.get("credit", float(episode["success"]))),
        "steps": int(episode["steps"]),
    }
    lines = []
    for before, step in itertools.pairwise(steps):
        try:
            action = validate_action(step["action"])
        except (ActionError, TypeError):
            continue  # an agent mistake: nothing to learn from
        reply = format_action(action)  # with the narration, after "  # "
        name = f"{before['step']:04d}"
        images = [trace / "screens" / f"{name}.png"]
        user = [
            _text((trace / "records" / f"{name}.txt").read_text(encoding="utf-8")),
            _text(f"Screenshot now (t = {before['elapsed']:.1f}s):"),
            IMAGE,
        ]
        for k, when in enumerate(before.get("keyframe_times", []), start=1):
            user += [_text(f"Keyframe {k} at {when:.1f}s:"), IMAGE]
            images.append(trace / "keyframes" / f"{name}-{k}.png")
        lines.append(
            {
                "messages": [
                    {"role": "system", "content": [_text(system)]},
                    {"role": "user", "content": user},
                    {"role": "assistant", "content": [_text(reply)]},
                ],
                "images": [str(p.relative_to(root)) for p in images],
                "task": episode["task"],
                "mode": episode["mode"],
                "agent": episode["agent"],
                "repeat": int(episode.get("repeat", 0)),
                "seed": episode.get("seed"),
                "variant": int(episode.get("variant", 0)),
                "clock": episode.get("clock", "realtime"),
                "step": int(step["step"]),
                "outcome": outcome,
            }
        )
    return lines


def write_demos(out: Path, successes_only: bool = False) -> tuple[int, int]:
    """Write ``out/demos.jsonl`` from the finished traces under ``out/traces``.

    Returns the number of episodes and of lines written.
    """
    from dynacu_agents.llm import SYSTEM_PROMPT

    episodes = lines = 0
    path = out / DEMOS_FILE
    with path.open("w", encoding="utf-8") as sink:
        for trace in sorted((out / "traces").glob("*/")):
            if not (trace / OUTCOME_FILE).is_file():
                continue  # an episode that did not finish
            demos = episode_demos(trace, out, SYSTEM_PROMPT)
            if not demos or (successes_only and not demos[0]["outcome"]["success"]):
                continue
            episodes += 1
            for line in demos:
                sink.write(json.dumps(line) + "\n")
                lines += 1
    return episodes, lines
