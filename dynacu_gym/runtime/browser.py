"""The env's Chromium: headful on the env's display, playing into the env's PulseAudio.

Playwright's sync API binds to the thread that started it and allows one instance per thread,
so each browser gets a worker thread of its own that owns its Playwright driver; callers hand
it work through a queue. Envs are then independent of each other and of the caller's thread.
"""

from __future__ import annotations

import queue
import shutil
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any, TypeVar

from dynacu_gym.runtime.process import InfraError

T = TypeVar("T")

CHROMIUM = "/usr/bin/chromium"

# Flags for a closed network (no update checks, no sync, no QUIC probes) and a full-screen,
# sound-playing, microphone-granting kiosk. Host resolution outside 127.0.0.1 fails, so even a
# request that escaped the route filter could not leave the machine by name.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-features=Translate,MediaRouter,OptimizationHints,DialMediaRouteProvider",
    "--disable-session-crashed-bubble",
    "--disable-infobars",
    "--password-store=basic",
    "--kiosk",
    "--window-position=0,0",
    "--autoplay-policy=no-user-gesture-required",
    "--use-fake-ui-for-media-stream",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]

# Pages that listen must hear the agent even while they play audio themselves; Chromium's echo
# cancellation erases the agent's words then, so processing is switched off for every stream.
MIC_INIT_SCRIPT = """
(() => {
  const md = navigator.mediaDevices;
  if (!md || !md.getUserMedia) return;
  const original = md.getUserMedia.bind(md);
  const raw = {echoCancellation: false, noiseSuppression: false, autoGainControl: false};
  md.getUserMedia = (constraints) => {
    if (constraints && constraints.audio) {
      const audio = constraints.audio === true ? {} : {...constraints.audio};
      constraints = {...constraints, audio: {...audio, ...raw}};
    }
    return original(constraints);
  };
})();
"""


AUDIO_WARMUP_SCRIPT = """
async () => {
  const ac = new AudioContext();
  await ac.resume();
  const source = ac.createConstantSource();
  const gain = ac.createGain();
  gain.gain.value = 0;
  source.connect(gain).connect(ac.destination);
  source.start();
  await new Promise((r) => setTimeout(r, 600));
  source.stop();
  await ac.close();
}
"""


class BrowserCrashed(InfraError):
    """The browser, its page or its driver died."""


class Browser:
    """A persistent Chromium context with one full-screen page, driven from a worker thread."""

    def __init__(
        self,
        workdir: Path,
        *,
        display: str,
        audio_env: dict[str, str],
        allowed_origin: str,
        width: int,
        height: int,
    ) -> None:
        self.workdir = workdir
        self.display = display
        self.audio_env = audio_env
        self.allowed_origin = allowed_origin.rstrip("/")
        self.width = width
        self.height = height
        self.blocked_requests: list[str] = []
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._page: Any = None
        self._context: Any = None
        self._playwright: Any = None
        self._crashed: str | None = None

    # ---- lifecycle -------------------------------------------------------------------------

    def start(self, timeout: float = 30.0) -> None:
        """Launch Chromium and open its page; raises :class:`InfraError` on failure."""
        if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
            raise InfraError(f"Chromium is not installed at {CHROMIUM}; run `make setup`")
        self._thread = threading.Thread(target=self._serve, name="dynacu-browser", daemon=True)
        self._thread.start()
        self.call(self._launch, timeout=timeout)

    def _launch(self) -> None:
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        env = dict(self.audio_env)
        env["DISPLAY"] = self.display
        profile = self.workdir / "chromium-profile"
        profile.mkdir(parents=True, exist_ok=True)
        self._context = self._playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=False,
            no_viewport=True,
            args=[*CHROMIUM_ARGS, f"--window-size={self.width},{self.height}"],
            ignore_default_args=["--mute-audio", "--enable-automation"],
            env=env,
            permissions=["microphone"],
        )
        self._context.route("**/*", self._filter_request)
        self._context.route_web_socket("**/*", self._refuse_websocket)
        self._context.add_init_script(MIC_INIT_SCRIPT)
        self._context.on("close", lambda _ctx: self._mark_crashed("the browser closed"))
        pages = self._context.pages
        self._page = pages[0] if pages else self._context.new_page()
        for extra in pages[1:]:
            extra.close()
        self._watch(self._page)
        # The first sound a Chromium makes starts its audio service and output stream, which
        # took ~0.45 s here: a page's first clip then came out that late. Make that first sound
        # now, in silence, so that every episode's audio plays on time.
        self._page.evaluate(AUDIO_WARMUP_SCRIPT)

    def _watch(self, page: Any) -> None:
        page.on("crash", lambda _p: self._mark_crashed("the page crashed"))

    def _mark_crashed(self, why: str) -> None:
        if self._crashed is None:
            self._crashed = why

    def _filter_request(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(self.allowed_origin + "/") or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            self.blocked_requests.append(url)
            route.abort("blockedbyclient")

    def _refuse_websocket(self, ws: Any) -> None:
        self.blocked_requests.append(ws.url)
        ws.close()

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fn, future = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn())
            except BaseException as e:  # handed to the caller, who re-raises it
                future.set_exception(e)

    def call(self, fn: Callable[[], T], timeout: float = 30.0) -> T:
        """Run ``fn`` on the browser's thread and return its result.

        Playwright errors that mean the browser is gone become :class:`BrowserCrashed`; other
        errors (a page script that threw, say) propagate unchanged.
        """
        if self._thread is None or not self._thread.is_alive():
            raise BrowserCrashed("the browser is not running")
        future: Future[T] = Future()
        self._jobs.put((fn, future))
        try:
            return future.result(timeout=timeout)
        except FutureTimeout as e:
            raise BrowserCrashed(f"the browser did not answer within {timeout:.0f} s") from e
        except Exception as e:
            if self._crashed is not None or _is_gone(e):
                self._mark_crashed(str(e).splitlines()[0] if str(e) else type(e).__name__)
                raise BrowserCrashed(f"browser failed: {self._crashed}") from e
            raise

    def alive(self) -> bool:
        """Whether the browser and its page still work (a cheap round trip)."""
        if self._crashed is not None or self._page is None:
            return False
        try:
            return bool(self.call(lambda: self._page.evaluate("1") == 1, timeout=5.0))
        except Exception:
            return False

    @property
    def crashed(self) -> str | None:
        """Why the browser is considered dead, or None."""
        return self._crashed

    def stop(self) -> None:
        """Close the context and the driver, then end the worker thread. Idempotent."""
        if self._thread is None:
            return
        if self._thread.is_alive():
            try:
                self.call(self._shutdown, timeout=15.0)
            except Exception:
                pass
            self._jobs.put(None)
            self._thread.join(timeout=15.0)
        self._thread = None

    def _shutdown(self) -> None:
        try:
            if self._context is not None:
                self._context.close()
        except Exception:
            pass
        finally:
            self._context = None
            self._page = None
            if self._playwright is not None:
                try:
                    self._playwright.stop()
                finally:
                    self._playwright = None

    # ---- page operations (each runs on the browser thread) ---------------------------------

    def goto(self, url: str, timeout: float = 20.0) -> None:
        """Load ``url`` in the page and wait for its load event."""
        self.call(
            lambda: self._page.goto(url, wait_until="load", timeout=timeout * 1000),
            timeout=timeout + 5,
        )

    def evaluate(self, expression: str, arg: Any = None, timeout: float = 10.0) -> Any:
        """Evaluate a JavaScript function or expression in the page, with ``arg``."""
        return self.call(lambda: self._page.evaluate(expression, arg), timeout=timeout)

    def wait_for_function(self, expression: str, timeout: float) -> None:
        """Wait until ``expression`` is truthy in the page."""
        self.call(
            lambda: self._page.wait_for_function(expression, timeout=timeout * 1000),
            timeout=timeout + 5,
        )

    def click(self, x: int, y: int) -> None:
        """Move the mouse to the pixel and click it."""
        self.call(lambda: self._page.mouse.click(x, y))

    def type_text(self, text: str) -> None:
        """Type text into whatever has focus, one key event per character."""
        self.call(lambda: self._page.keyboard.type(text), timeout=60.0)

    def press(self, combo: str) -> None:
        """Press a key combination, e.g. ``Control+a``."""
        self.call(lambda: self._page.keyboard.press(combo))

    def scroll(self, dx: float, dy: float) -> None:
        """Turn the mouse wheel at the pointer's position."""
        self.call(lambda: self._page.mouse.wheel(dx, dy))

    def move_mouse(self, x: float, y: float) -> None:
        """Move the pointer without clicking."""
        self.call(lambda: self._page.mouse.move(x, y))

    def browser_pids(self) -> list[int]:
        """Process ids of this browser's Chromium processes (found by its profile directory)."""
        from dynacu_gym.runtime.process import descendants

        marker = str(self.workdir / "chromium-profile")
        pids = []
        for pid in descendants():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace")
            except OSError:
                continue
            if marker in cmdline and "--type=" not in cmdline:
                pids.append(pid)
        return pids


def _is_gone(error: BaseException) -> bool:
    text = str(error).lower()
    return any(
        phrase in text
        for phrase in (
            "target closed",
            "target page, context or browser has been closed",
            "browser has been closed",
            "connection closed",
            "has been closed",
            "page crashed",
            "browser closed",
            "driver",
        )
    )
