"""A task's audio: rendered from its script with piper, committed with the hash of that script.

Each spoken line of the script becomes ``audio/line-NN.ogg`` (Opus) in the task folder; the page
plays it at the line's time. ``audio/manifest.json`` records the voice, the hash of everything
that shaped the sound (words, speaker pitch and rate, voice) and each clip's duration. A script
edited without re-rendering no longer matches its hash, and the env refuses to run the task.

A task's other variants (``[[variants]]``; variant 0 is the committed one) say other words:
their audio is rendered when a variant is first played and kept in the cache
(:func:`dynacu_gym.paths.cache_root`), one folder per script hash.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from dynacu_gym.errors import AudioNotRendered
from dynacu_gym.paths import VARIANT_URL, cache_root
from dynacu_gym.perception.tts import DEFAULT_VOICE, Voice, load_voice
from dynacu_gym.tasks.spec import Speaker, TaskSpec, file_stem

AUDIO_DIR = "audio"
MANIFEST = "manifest.json"
CLIP_RATE = 48000  # Hz of the rendered Opus clips


def spoken_lines(task: TaskSpec) -> list[tuple[int, Any]]:
    """(index in the script, line) of every line with words to say."""
    return [(i, line) for i, line in enumerate(task.script) if line.say]


def script_hash(task: TaskSpec, voice: str = DEFAULT_VOICE) -> str:
    """SHA-256 of what the audio depends on: the words, each speaker's pitch and rate, the voice."""
    parts = []
    for _, line in spoken_lines(task):
        speaker = task.speakers.get(line.speaker, Speaker())
        parts.append(
            {"say": line.say, "speaker": line.speaker, "pitch": speaker.pitch, "rate": speaker.rate}
        )
    blob = json.dumps({"voice": voice, "lines": parts}, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()


def audio_dir(task: TaskSpec) -> Path:
    """Where the task's clips are: its folder's ``audio/`` for variant 0, else the cache."""
    if task.variant == 0:
        return task.root / AUDIO_DIR
    return cache_root() / "audio" / f"{file_stem(task.id)}-{script_hash(task)[:16]}"


def read_manifest(task: TaskSpec) -> dict[str, Any] | None:
    """The task's audio manifest, or None if it has none."""
    path = audio_dir(task) / MANIFEST
    if not path.is_file():
        return None
    return json.loads(path.read_text())


def audio_clips(task: TaskSpec) -> list[dict[str, Any]]:
    """The clips the page plays: start time, URL, duration and speaker of each spoken line.

    Raises:
        AudioNotRendered: the task has speech but its audio is missing or stale.
    """
    lines = spoken_lines(task)
    if not lines:
        return []
    manifest = read_manifest(task)
    hint = f"run `dynacu render-audio {task.id}`"
    if task.variant and (
        manifest is None
        or manifest.get("script_hash") != script_hash(task, manifest.get("voice", DEFAULT_VOICE))
    ):
        render_task_audio(task)  # a variant's words: rendered once, then kept in the cache
        manifest = read_manifest(task)
    if manifest is None:
        raise AudioNotRendered(f"{task.root}: the script's audio is not rendered; {hint}")
    if manifest.get("script_hash") != script_hash(task, manifest.get("voice", DEFAULT_VOICE)):
        raise AudioNotRendered(
            f"{task.root}: the audio was rendered from a different script; {hint}"
        )
    clips = manifest["clips"]
    base = VARIANT_URL if task.variant else f"/task/{AUDIO_DIR}/"
    return [
        {
            "t": line.t,
            "src": f"{base}{clip['file']}",
            "duration": clip["duration"],
            "speaker": line.speaker,
        }
        for (_, line), clip in zip(lines, clips, strict=True)
    ]


def render_task_audio(task: TaskSpec, voice: Voice | None = None, force: bool = False) -> bool:
    """Render the task's spoken lines to Opus clips and write the manifest.

    Returns:
        True if audio was rendered, False if it was already current (or the task is silent).

    Raises:
        RuntimeError: ffmpeg is missing or failed.
    """
    lines = spoken_lines(task)
    out_dir = audio_dir(task)
    voice_name = voice.name if voice else DEFAULT_VOICE
    current = read_manifest(task)
    if not lines:
        if out_dir.exists():
            shutil.rmtree(out_dir)
        return False
    if not force and current and current.get("script_hash") == script_hash(task, voice_name):
        return False
    if shutil.which("ffmpeg") is None:
        raise RuntimeError("ffmpeg is not installed; run `make setup`")
    voice = voice or load_voice()
    if out_dir.exists():
        shutil.rmtree(out_dir)
    # Written beside, then moved into place: a half-rendered folder is never taken for done.
    final, out_dir = out_dir, out_dir.with_name(out_dir.name + f".part-{os.getpid()}")
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    clips = []
    for k, (_, line) in enumerate(lines):
        speaker = task.speakers.get(line.speaker, Speaker())
        pcm = voice.synthesize(line.say, rate=speaker.rate)
        name = f"line-{k:02d}.ogg"
        _encode(pcm.tobytes(), voice.sample_rate, speaker.pitch, out_dir / name)
        clips.append({"file": name, "duration": round(len(pcm) / voice.sample_rate, 3)})
    manifest = {
        "voice": voice.name,
        "script_hash": script_hash(task, voice.name),
        "clips": clips,
    }
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    try:
        out_dir.rename(final)
    except OSError:  # another process rendered the same variant meanwhile: keep theirs
        shutil.rmtree(out_dir, ignore_errors=True)
    return True


def _encode(pcm: bytes, rate: int, pitch: float, path: Path) -> None:
    """s16le mono PCM -> Opus, pitch-shifted by ``pitch`` while keeping its duration."""
    shift = (
        f"asetrate={rate * pitch:.0f},aresample={CLIP_RATE},atempo={1 / pitch:.6f}"
        if abs(pitch - 1.0) > 1e-6
        else f"aresample={CLIP_RATE}"
    )
    result = subprocess.run(
        [
            "ffmpeg",
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-f",
            "s16le",
            "-ar",
            str(rate),
            "-ac",
            "1",
            "-i",
            "pipe:0",
            "-af",
            shift,
            "-c:a",
            "libopus",
            "-b:a",
            "48k",
            "-ac",
            "1",
            "-map_metadata",
            "-1",
            "-fflags",
            "+bitexact",
            "-flags:a",
            "+bitexact",
            str(path),
        ],  # fmt: skip
        input=pcm,
        capture_output=True,
        timeout=120,
    )
    if result.returncode != 0:
        raise RuntimeError(f"ffmpeg failed on {path.name}: {result.stderr.decode()[-500:]}")
