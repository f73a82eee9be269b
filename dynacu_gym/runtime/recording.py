"""The X display recorded as a video while an episode runs: ffmpeg's x11grab, in its own process.

The recording holds the screen only; the sound and the overlay of steps and actions are added
afterwards from the trace (:mod:`dynacu_gym.harness.video`). H.264 at the ``ultrafast`` preset
takes a few percent of a core at 1280x720 and a few frames a second.
"""

from __future__ import annotations

import shutil
import signal
import time
from pathlib import Path

from dynacu_gym.runtime.process import ChildProcess, InfraError


class ScreenRecording:
    """ffmpeg recording ``display`` into ``out`` (an ``.mp4``) from :meth:`start` to :meth:`stop`.

    Attributes:
        started_at: the monotonic time the recorder was started (its first frame follows within
            the time x11grab takes to connect, a tenth of a second or two).
    """

    def __init__(self, display: str, size: tuple[int, int], out: Path, fps: float) -> None:
        if shutil.which("ffmpeg") is None:
            raise InfraError("a video needs ffmpeg on PATH (Debian: apt install ffmpeg)")
        if not 0.5 <= fps <= 30:
            raise ValueError(f"expected a video frame rate in 0.5..30 frames a second, got {fps}")
        self.display, self.size, self.out, self.fps = display, size, Path(out), fps
        self.started_at: float | None = None
        self._proc: ChildProcess | None = None

    def start(self) -> None:
        """Start recording.

        Raises:
            InfraError: ffmpeg could not start or died at once (its last words quoted).
        """
        width, height = self.size
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self._proc = ChildProcess(
            "ffmpeg-x11grab",
            [
                "ffmpeg",
                "-nostdin",
                "-hide_banner",
                "-loglevel",
                "error",
                "-y",
                "-f",
                "x11grab",
                "-draw_mouse",
                "0",
                "-framerate",
                f"{self.fps:g}",
                "-video_size",
                f"{width}x{height}",
                "-i",
                f"{self.display}.0",
                "-c:v",
                "libx264",
                "-preset",
                "ultrafast",
                "-crf",
                "26",
                "-pix_fmt",
                "yuv420p",
                str(self.out),
            ],  # fmt: skip
            log_path=self.out.with_suffix(".log"),
        )
        self.started_at = time.monotonic()
        time.sleep(0.05)
        if not self._proc.alive():
            raise InfraError(f"ffmpeg could not record {self.display}: {self._proc.log_tail()}")

    def alive(self) -> bool:
        """Whether the recorder runs."""
        return self._proc is not None and self._proc.alive()

    def stop(self) -> None:
        """Stop recording (SIGINT: ffmpeg writes the file's index) and reap it. Idempotent."""
        if self._proc is not None:
            self._proc.stop(signal.SIGINT, timeout=10.0)
            self._proc = None
