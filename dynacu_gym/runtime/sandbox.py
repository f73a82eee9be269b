"""One isolated sandbox per env: display, audio daemon, task server and browser, owned together.

Start-up order: work dir -> Xvfb -> PulseAudio -> speaker capture (when the audio channel is
on) -> task server -> Chromium; shutdown is the reverse. Nothing is shared between sandboxes,
so envs side by side never see or hear each other.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path

from dynacu_gym.runtime.audio import AudioServer
from dynacu_gym.runtime.browser import Browser
from dynacu_gym.runtime.display import SCREEN_HEIGHT, SCREEN_WIDTH, VirtualDisplay
from dynacu_gym.runtime.process import InfraError
from dynacu_gym.runtime.server import Listener, TaskServer
from dynacu_gym.runtime.speaker import SpeakerCapture


@dataclass(frozen=True)
class SandboxConfig:
    """How a sandbox is built.

    Attributes:
        width: screen width in pixels.
        height: screen height in pixels.
        start_timeout_s: seconds each part may take to start before it counts as failed.
        keep_workdir: keep the work dir (logs, browser profile) after close, for debugging.
        listen_model: the Whisper model pages' speech is transcribed with (None: tiny.en).
        capture_speaker: record what the page plays (the audio channel turns this on).
    """

    width: int = SCREEN_WIDTH
    height: int = SCREEN_HEIGHT
    start_timeout_s: float = 30.0
    keep_workdir: bool = False
    listen_model: str | None = None
    capture_speaker: bool = False


class Sandbox:
    """The processes and servers behind one env.

    Args:
        config: the sandbox's settings.
        listener: what makes the transcriber of a listening page's speech (the env hands in
            ``perception.asr.listening_transcriber`` for ``config.listen_model``); None for a
            sandbox whose pages never listen.
    """

    def __init__(self, config: SandboxConfig | None = None, listener: Listener | None = None):
        self.config = config or SandboxConfig()
        self.workdir = Path(tempfile.mkdtemp(prefix="dynacu-"))
        self.display = VirtualDisplay(self.workdir, self.config.width, self.config.height)
        self.audio = AudioServer(self.workdir)
        self.server = TaskServer(listener)
        self.browser: Browser | None = None
        self.capture: SpeakerCapture | None = None
        self.restarts = 0  # rebuilds after a part died (the first start is not one)
        self._started = False
        self._closed = False
        _OPEN_SANDBOXES.add(self)

    def start(self) -> None:
        """Start every part in order; on failure, stop what started and raise InfraError."""
        if self._closed:
            raise InfraError("the sandbox is closed")
        try:
            if not self.display.alive():
                self.display.start(self.config.start_timeout_s)
            if not self.audio.alive():
                self.audio.start(self.config.start_timeout_s)
            if self.config.capture_speaker and (self.capture is None or not self.capture.alive()):
                if self.capture is not None:
                    self.capture.stop()
                # Before the browser: a recorder that joins later misses the first 1-2 s.
                self.capture = SpeakerCapture(self.audio, self.workdir)
                self.capture.start()
            if not self.server.alive():
                self.server.start()
            if self.browser is None:
                assert self.display.display is not None
                self.browser = Browser(
                    self.workdir,
                    display=self.display.display,
                    audio_env=self.audio.client_env(),
                    allowed_origin=self.server.origin,
                    width=self.config.width,
                    height=self.config.height,
                )
                self.browser.start(self.config.start_timeout_s)
            self._started = True
        except BaseException:
            self.stop_parts()
            raise

    def browser_or_raise(self) -> Browser:
        """The running browser.

        Raises:
            InfraError: there is none (it died and was not yet rebuilt).
        """
        if self.browser is None:
            raise InfraError("the browser is not running")
        return self.browser

    def dead_parts(self) -> list[str]:
        """Names of the parts that are not working (empty when healthy)."""
        dead = []
        if not self.display.alive():
            dead.append("display (Xvfb)")
        if not self.audio.alive():
            dead.append("audio daemon (PulseAudio)")
        if self.config.capture_speaker and (self.capture is None or not self.capture.alive()):
            dead.append("speaker capture (parec)")
        if not self.server.alive():
            dead.append("task server")
        if self.browser is None or not self.browser.alive():
            reason = self.browser.crashed if self.browser else None
            dead.append(f"browser ({reason})" if reason else "browser")
        return dead

    def ensure_running(self) -> bool:
        """Rebuild whatever died; return True if anything had to be restarted.

        The browser renders on the display and plays into the audio daemon, so it is restarted
        whenever either of them is.
        """
        dead = self.dead_parts()
        if not dead:
            return False
        display_or_audio = not self.display.alive() or not self.audio.alive()
        if self.browser is not None and (display_or_audio or not self.browser.alive()):
            self.browser.stop()
            self.browser = None
        if not self.display.alive():
            self.display.stop()
        if not self.audio.alive():
            if self.capture is not None:
                self.capture.stop()
                self.capture = None
            self.audio.stop()
        if self._started:
            self.restarts += 1
        self.start()
        return True

    def stop_parts(self) -> None:
        """Stop every part, newest first. Idempotent."""
        if self.browser is not None:
            self.browser.stop()
            self.browser = None
        self.server.stop()
        if self.capture is not None:
            self.capture.stop()
            self.capture = None
        self.audio.stop()
        self.display.stop()

    def close(self) -> None:
        """Stop everything and remove the work dir. Idempotent."""
        if self._closed:
            return
        self._closed = True
        _OPEN_SANDBOXES.discard(self)
        self.stop_parts()
        if not self.config.keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


# Children must not outlive the interpreter even if an env is never closed.
_OPEN_SANDBOXES: weakref.WeakSet[Sandbox] = weakref.WeakSet()


@atexit.register
def _close_open_sandboxes() -> None:
    for sandbox in list(_OPEN_SANDBOXES):
        sandbox.close()
