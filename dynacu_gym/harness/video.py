"""An episode as a video with its sound, made with ffmpeg from a trace and its screen recording.

The screen (:class:`~dynacu_gym.runtime.recording.ScreenRecording`), the speaker and the agent's
voice (:mod:`~dynacu_gym.harness.trace`), with the steps drawn over it: the step number while
each step runs, the action as a caption from when it was taken, and for a click a box on its
point. The labels are written to files that ffmpeg's ``drawtext`` reads (``textfile``, its
expansion off), so no text of the agent's needs escaping in the filter.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from dynacu_gym.errors import InfraError

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")  # fonts-dejavu-core
CAPTION_S = 2.5  # how long an action's caption stays, at most (until the next action)
CLICK_S = 1.2  # how long a click's box stays


def _action_text(action: dict[str, Any] | None) -> str:
    if not action:
        return ""
    kind = action.get("type")
    if kind == "click":
        if action.get("element"):
            return f"click [{action['element']}]"
        return f"click {action.get('x')} {action.get('y')}"
    if kind in ("type", "speak"):
        return f'{kind} "{action.get("text", "")}"'
    if kind == "key":
        return f"key {action.get('key')}"
    if kind == "scroll":
        return f"scroll {action.get('direction')} {action.get('amount', '')}".strip()
    if kind == "wait":  # to the hundredth: the oracle waits until a script time (28.7988... s)
        seconds = action.get("seconds")
        if isinstance(seconds, int | float):
            return f"wait {round(seconds, 2):g}"
        return f"wait {seconds}"
    return str(kind)


def _filters(steps: list[dict[str, Any]], offset: float, labels: Path) -> str:
    """The video filter chain: a step counter, captions and click boxes, in video time."""
    font = f"fontfile={FONT}:" if FONT.is_file() else ""
    parts = []
    last = steps[-1]["step"] if steps else 0
    for i, step in enumerate(steps[1:], start=1):
        begin = steps[i - 1]["elapsed"] - offset
        end = step["elapsed"] - offset
        counter = labels / f"step-{i}.txt"
        counter.write_text(f"step {step['step']} of {last}")
        parts.append(
            f"drawtext={font}expansion=none:textfile={counter}:x=12:y=12:fontsize=22:fontcolor=white:"
            f"box=1:boxcolor=black@0.6:boxborderw=6:enable='between(t,{begin:.3f},{end:.3f})'"
        )
        action = step.get("action") or {}
        text = _action_text(action)
        if not text:
            continue
        taken = end - float(step.get("timings", {}).get("total", 0.0))
        until = steps[i + 1]["elapsed"] - offset if i + 1 < len(steps) else end + CAPTION_S
        caption = labels / f"action-{i}.txt"
        caption.write_text(f"step {step['step']}: {text}"[:120])
        parts.append(
            f"drawtext={font}expansion=none:textfile={caption}:x=(w-text_w)/2:y=h-58:fontsize=26:"
            f"fontcolor=white:box=1:boxcolor=black@0.7:boxborderw=10:"
            f"enable='between(t,{taken:.3f},{min(until, taken + CAPTION_S):.3f})'"
        )
        if action.get("type") == "click" and "x" in action and "y" in action:
            x, y = int(action["x"]) - 20, int(action["y"]) - 20
            parts.append(
                f"drawbox=x={x}:y={y}:w=40:h=40:color=red@0.9:t=4:"
                f"enable='between(t,{taken:.3f},{taken + CLICK_S:.3f})'"
            )
    return ",".join(parts) or "null"


def compose_video(trace: Path, screen: Path, offset: float, out: Path) -> Path:
    """Write ``out`` (MP4, H.264 and AAC) from ``screen`` and the trace's sound and steps.

    Args:
        trace: the trace folder (its ``trace.jsonl``, ``speaker.wav``, ``voice.wav``).
        screen: the screen recording, which began ``offset`` seconds into the episode.
        offset: the episode time of the recording's first frame.
        out: the video to write.

    Raises:
        InfraError: ffmpeg failed (its last words quoted).
    """
    steps = [json.loads(line) for line in (trace / "trace.jsonl").read_text().splitlines() if line]
    sounds = [trace / name for name in ("speaker.wav", "voice.wav") if (trace / name).is_file()]
    with tempfile.TemporaryDirectory(prefix="dynacu-video-") as tmp:
        labels = Path(tmp)
        graph = [f"[0:v]{_filters(steps, offset, labels)}[v]"]
        for k in range(len(sounds)):
            # The sound starts at the episode's start; the screen a little after.
            graph.append(f"[{k + 1}:a]atrim=start={offset:.3f},asetpts=PTS-STARTPTS[a{k}]")
        if len(sounds) == 2:
            graph.append("[a0][a1]amix=inputs=2:duration=longest:normalize=0[a]")
        elif sounds:
            graph.append("[a0]anull[a]")
        script = labels / "graph.txt"
        script.write_text(";\n".join(graph))
        argv = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", str(screen)]
        for sound in sounds:
            argv += ["-i", str(sound)]
        argv += ["-filter_complex_script", str(script), "-map", "[v]"]
        if sounds:
            argv += ["-map", "[a]", "-c:a", "aac", "-b:a", "96k"]
        argv += ["-c:v", "libx264", "-preset", "veryfast", "-crf", "26", "-pix_fmt", "yuv420p"]
        argv += ["-shortest", "-movflags", "+faststart", str(out)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise InfraError(f"ffmpeg could not make {out}: {done.stderr.strip()[-800:]}")
    return out
