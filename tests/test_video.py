"""An episode as a video: composed from a trace with ffmpeg, recorded from a real display."""

from __future__ import annotations

import json
import math
import subprocess
import wave
from pathlib import Path

import numpy as np
import pytest

from dynacu_gym.harness.cli import main
from dynacu_gym.harness.video import compose_video

RATE = 16000


def _probe(path: Path) -> dict:
    done = subprocess.run(
        ["ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json", str(path)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def _frame(path: Path, t: float) -> np.ndarray:
    """The video's frame at ``t`` seconds, as RGB."""
    info = next(s for s in _probe(path)["streams"] if s["codec_type"] == "video")
    w, h = int(info["width"]), int(info["height"])
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-ss", f"{t}", "-i", str(path), "-frames:v", "1",
         "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    return np.frombuffer(raw, dtype=np.uint8).reshape(h, w, 3)


def _tone(path: Path, seconds: float, hz: float) -> None:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        t = np.arange(int(seconds * RATE)) / RATE
        out.writeframes((0.3 * np.sin(2 * math.pi * hz * t) * 32767).astype("<i2").tobytes())


def test_a_trace_and_a_screen_recording_make_one_video_with_sound_and_the_steps(tmp_path):
    # A grey "screen" of 6 s that began 0.5 s into the episode; a click at 3.0 s.
    screen = tmp_path / "screen.mp4"
    subprocess.run(
        ["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "color=c=gray:s=640x360:r=5:d=6",
         "-c:v", "libx264", "-pix_fmt", "yuv420p", str(screen)],
        check=True,
    )  # fmt: skip
    steps = [
        {"step": 0, "elapsed": 0.6, "action": None},
        {"step": 1, "elapsed": 3.05, "action": {"type": "click", "x": 320, "y": 180},
         "timings": {"total": 0.05}},
        {"step": 2, "elapsed": 5.0, "action": {"type": "type", "text": "100% \\ 'done': {x}"},
         "timings": {"total": 0.05}},
    ]  # fmt: skip
    (tmp_path / "trace.jsonl").write_text("\n".join(json.dumps(s) for s in steps) + "\n")
    _tone(tmp_path / "speaker.wav", 6.5, 440)
    _tone(tmp_path / "voice.wav", 6.5, 220)
    out = compose_video(tmp_path, screen, 0.5, tmp_path / "episode.mp4")
    streams = {s["codec_type"]: s for s in _probe(out)["streams"]}
    assert set(streams) == {"video", "audio"}
    assert float(_probe(out)["format"]["duration"]) == pytest.approx(6.0, abs=0.4)
    # The click's box, red, around its point just after the click (video time 3.0 - 0.5).
    at_click = _frame(out, 2.7).astype(int)
    ring = at_click[160:200, 300:340]
    red = (ring[..., 0] > 150) & (ring[..., 1] < 90) & (ring[..., 2] < 90)
    assert red.sum() > 100
    later = _frame(out, 4.5).astype(int)[160:200, 300:340]
    assert not ((later[..., 0] > 150) & (later[..., 1] < 90)).any()  # gone after CLICK_S


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.audio
def test_dynacu_run_video_records_a_real_episode_with_its_sound(tmp_path):
    video = tmp_path / "f1.mp4"
    record = tmp_path / "trace"
    code = main(["run", "A1", "--agent", "oracle", "--mode", "standard", "--record", str(record),
                 "--video", str(video), "--video-fps", "5"])  # fmt: skip
    assert code == 0
    probe = _probe(video)
    streams = {s["codec_type"]: s for s in probe["streams"]}
    assert set(streams) == {"video", "audio"}
    assert (int(streams["video"]["width"]), int(streams["video"]["height"])) == (1280, 720)
    steps = [json.loads(line) for line in (record / "trace.jsonl").read_text().splitlines()]
    assert float(probe["format"]["duration"]) == pytest.approx(steps[-1]["elapsed"], abs=2.0)
    # The podcast plays: the video's sound is not silence while the host speaks.
    pcm = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(video), "-vn", "-ac", "1", "-ar", "16000",
         "-f", "s16le", "-"],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    sound = np.frombuffer(pcm, dtype="<i2") / 32768.0
    assert float(np.sqrt(np.mean(sound**2))) > 0.005
    assert not (record / "screen.mp4").exists()  # only the composed video is kept
    assert main(["run", "A1", "--agent", "oracle", "--video", str(tmp_path / "x.avi")]) == 2


@pytest.mark.browser
def test_gymnasium_record_video_records_an_episode_from_render(tmp_path):
    # The `video` extra (moviepy) is what gymnasium.wrappers.RecordVideo needs.
    import gymnasium as gym
    from gymnasium.wrappers import RecordVideo

    import dynacu_gym  # noqa: F401 - registers the envs
    from dynacu_gym import parse_action

    env = gym.make("DynaCU-F1-v0", mode="standard", render_mode="rgb_array")
    folder = tmp_path / "videos"  # a new folder: RecordVideo warns of one that exists
    env = RecordVideo(env, str(folder), episode_trigger=lambda _: True, disable_logger=True)
    try:
        env.reset(seed=0)
        for _ in range(4):
            env.step(parse_action("wait 0.5"))
    finally:
        env.close()  # the recording is saved on close
    (video,) = folder.glob("*.mp4")
    stream = next(s for s in _probe(video)["streams"] if s["codec_type"] == "video")
    assert (int(stream["width"]), int(stream["height"])) == (1280, 720)
    assert int(stream["nb_frames"]) == 5  # the reset's frame and one a step
    assert _frame(video, 0.0).std() > 5  # the page, not a blank frame


def test_a_caption_gives_a_wait_to_the_hundredth():
    from dynacu_gym.harness.video import _action_text

    assert _action_text({"type": "wait", "seconds": 28.798882007598877}) == "wait 28.8"
    assert _action_text({"type": "wait", "seconds": 2}) == "wait 2"
