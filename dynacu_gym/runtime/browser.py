"""The env's Chromium: headful on the env's display, playing into the env's PulseAudio.

Playwright's sync API binds to the thread that started it and allows one instance per thread,
so each browser gets a worker thread of its own that owns its Playwright driver; callers hand
it work through a queue. Envs are then independent of each other and of the caller's thread.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, TypeVar

from dynacu_gym.errors import BrowserCrashed, InfraError
from dynacu_gym.runtime.chromium import find_chromium
from dynacu_gym.runtime.elements import ELEMENTS_INIT_SCRIPT

T = TypeVar("T")

# Flags for a closed network (no update checks, no sync, no QUIC probes) and a full-screen,
# sound-playing, microphone-granting kiosk. Host resolution outside 127.0.0.1 fails, so even a
# request that escaped the route filter could not leave the machine by name. Window animations
# off: a dropdown's list is a window of its own that otherwise fades in for ~60 ms after the
# page has painted, so the screenshot of the click that opens it showed it faint.
#
# Chromium keeps only the last --disable-features it is given, and Playwright passes its own
# first: ours must repeat Playwright's list (1.65.2's, PaintHolding among them) or it drops it.
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding",
    "ThirdPartyStoragePartitioning", "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin", "OptimizationHints", "NetworkTimeServiceQuerying", "AimEnabled",
    "PreconnectToSearch", "msForceBrowserSignIn", "msEdgeUpdateLaunchServicesPreferredVersion",
)  # fmt: skip
# Ours: no translate bar, no cast (DIAL) probes; no renderer kept for the omnibox's popups in
# a kiosk, which has no omnibox (Chromium 156 started one for its AIM popup: 63 MiB), nor a
# spare renderer for a next site (19 MiB): an env's page is one site.
DISABLED_FEATURES = (*PLAYWRIGHT_DISABLED_FEATURES, "Translate", "DialMediaRouteProvider",
                     "WebUIOmniboxPopup", "WebUIOmniboxAimPopup",
                     "SpareRendererForSitePerProcess")  # fmt: skip
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-features=" + ",".join(DISABLED_FEATURES),
    "--wm-window-animations-disabled",
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


# The page elements channel lists what the page listens to for clicks (a card, a mole, a
# key of a keypad): every element given a pointer listener is remembered, out of the page's
# reach. The page itself behaves as without it; every env installs it, whatever its channels.
CLICKABLE_INIT_SCRIPT = """
(() => {
  const marks = new WeakSet();
  const kinds = new Set(["click", "dblclick", "mousedown", "mouseup", "pointerdown",
    "pointerup", "touchstart", "touchend"]);
  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, ...rest) {
    if (kinds.has(type) && this instanceof Element && this !== document.documentElement &&
        this !== document.body) marks.add(this);
    return add.call(this, type, ...rest);
  };
  Object.defineProperty(window, "__dynacuClickable", {value: marks});
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


# Paused time (the env's clock="paused"): every AudioContext the page makes plays only while
# the env lets time pass, whatever the page asks (an app that resumes its context on a click
# asks while time is held: the context starts when time next passes). The page's own
# getUserMedia calls are counted, so the env knows a listening page needs the wall clock.
CLOCK_INIT_SCRIPT = """
(() => {
  const Native = window.AudioContext;
  if (!Native || window.__dynacuTime) return;
  const contexts = [];
  const resume = Native.prototype.resume, suspend = Native.prototype.suspend;
  let passing = false;
  // This script runs before the fake clock is installed: the real requestAnimationFrame.
  const frame = window.requestAnimationFrame.bind(window);
  const time = {
    listening: 0,
    /** Resolves once the page has produced two real frames: the first paints what changed. */
    frames() {
      return new Promise((done) => frame(() => frame(done)));
    },
    async pass() {
      passing = true;
      const wanted = contexts.filter((c) => c.__wanted && c.state !== "closed");
      await Promise.all(wanted.map((c) => resume.call(c)));
    },
    async hold() {
      passing = false;
      const running = contexts.filter((c) => c.state === "running" && !c.__listens);
      await Promise.all(running.map((c) => suspend.call(c)));
    },
    requests: 0,
    /** Runs `ms` of the fake clock in this page and its frames; returns the page's verdict. */
    async slice(ms) {
      for (const clock of clocks(window)) await clock.runFor(ms);
      moveAnimations(ms);
      return window.getTaskResult ? String(window.getTaskResult()) : "pending";
    },
    /** Runs `total` ms in slices of `each` as fast as the page computes them, a real task
     *  between slices (what the page posts, and the browser's own work, runs there), until
     *  the page decides the episode. */
    async run(total, each) {
      let done = 0, verdict = "pending";
      while (done < total && verdict === "pending") {
        const ms = Math.min(each, total - done);
        verdict = await time.slice(ms);
        done += ms;
        if (done < total) await turn();
      }
    },
    /** Resolves once no request the page made (its body read included) is still open and
     *  the page has painted what followed: what a step asked is answered within it. */
    async passed() {
      do { await turn(); } while (time.requests > 0);
      await turn();  // what the page does with the answer runs first
      await time.frames();
    },
  };
  // A real task: setTimeout and requestAnimationFrame are the fake clock's.
  const turn = () => new Promise((done) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = done;
    channel.port2.postMessage(0);
  });
  // Playwright's fake clock of this window and of every same-origin frame in it (the only
  // frames a task page can have: other origins are blocked).
  const clocks = (w) => {
    const out = [];
    try {
      if (w.__pwClock) out.push(w.__pwClock.controller);
      for (let i = 0; i < w.frames.length; i += 1) out.push(...clocks(w.frames[i]));
    } catch (e) { /* a frame of another origin: nothing of ours runs there */ }
    return out;
  };
  // Sets every running animation to where the slices since it was first seen put it (the
  // document timeline itself stands still). The time is set, not added to, so a frame the
  // browser drew in between changes nothing.
  const seen = new WeakMap();
  const moveAnimations = (ms) => {
    const now = performance.now();  // the fake clock, at the end of this slice
    for (const a of document.getAnimations()) {
      if (a.playState !== "running") { seen.delete(a); continue; }
      if (!seen.has(a)) seen.set(a, {since: now - ms, from: a.currentTime || 0});
      const s = seen.get(a);
      a.currentTime = s.from + (now - s.since);
    }
  };
  const track = (promise) => {
    time.requests += 1;
    return promise.finally(() => { time.requests -= 1; });
  };
  const nativeFetch = window.fetch.bind(window);
  window.fetch = (...args) => track(nativeFetch(...args));
  for (const name of ["json", "text", "arrayBuffer", "blob"]) {
    const read = Response.prototype[name];
    Response.prototype[name] = function () { return track(read.call(this)); };
  }
  // A context the microphone feeds keeps running while time is held: the agent's voice is
  // real sound, and the page's listener (on the fake clock) ends the utterance once time passes.
  const streamSource = Native.prototype.createMediaStreamSource;
  Native.prototype.createMediaStreamSource = function (...args) {
    this.__listens = true;
    resume.call(this);
    return streamSource.apply(this, args);
  };
  Native.prototype.resume = function () {
    this.__wanted = true;
    return passing ? resume.call(this) : Promise.resolve();
  };
  Native.prototype.suspend = function () {
    this.__wanted = false;
    return suspend.call(this);
  };
  window.AudioContext = class extends Native {
    constructor(...args) {
      super(...args);
      this.__wanted = true;
      contexts.push(this);
      if (!passing) suspend.call(this);
    }
  };
  const md = navigator.mediaDevices;
  if (md && md.getUserMedia) {
    const original = md.getUserMedia.bind(md);
    md.getUserMedia = (constraints) => {
      if (constraints && constraints.audio) time.listening += 1;
      return original(constraints);
    };
  }
  Object.defineProperty(window, "__dynacuTime", {value: time});
})();
"""

# The time the fake clock starts at: any fixed date, so that Date is the same every run. A
# datetime, not a number: Playwright for Python reads a number as seconds.
PAUSED_EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)


# Long (~330 lines): every call into the page must run on the one Playwright thread this class
# owns, so the thread's life and each page action (click, evaluate, pass time) live together.
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
        self.executable: Path | None = None  # the Chromium launched (found at each start)
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._page: Any = None
        self._context: Any = None
        self._playwright: Any = None
        self._crashed: str | None = None
        self._cdp: Any = None  # the DevTools session that holds animations, in paused time
        self.time_held = False

    # ---- lifecycle -------------------------------------------------------------------------

    def start(self, timeout: float = 30.0) -> None:
        """Launch Chromium and open its page.

        Args:
            timeout: seconds allowed for the launch and the first page.

        Raises:
            ChromiumNotFound: no Chromium to drive (the message says where it looked); raised
                before anything starts.
            BrowserCrashed: the launch took longer than ``timeout``, or the browser died
                while starting.
        """
        self.executable = find_chromium()
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
            executable_path=str(self.executable),
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
        self._context.add_init_script(CLICKABLE_INIT_SCRIPT)
        self._context.add_init_script(ELEMENTS_INIT_SCRIPT)
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
        return self.submit(fn)(timeout)

    def submit(self, fn: Callable[[], T]) -> Callable[[float], T]:
        """Start ``fn`` on the browser's thread; return what waits for its result.

        The caller goes on meanwhile (the env grabs the screen while the page lists its
        elements); the returned function takes a timeout in seconds and answers as
        :meth:`call` does.
        """
        if self._thread is None or not self._thread.is_alive():
            raise BrowserCrashed("the browser is not running")
        future: Future[T] = Future()
        self._jobs.put((fn, future))
        return lambda timeout: self._result(future, timeout)

    def _result(self, future: Future[T], timeout: float) -> T:
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

        def load() -> None:
            self._page.goto(url, wait_until="load", timeout=timeout * 1000)
            if self._cdp is not None:  # a new document: hold its animations too
                self._cdp.send("Animation.setPlaybackRate", {"playbackRate": 0})

        self.call(load, timeout=timeout + 5)

    def add_init_script(self, script: str) -> None:
        """Run ``script`` in every page the browser loads from now on, before the page's own."""
        self.call(lambda: self._context.add_init_script(script))

    def evaluate(self, expression: str, arg: Any = None, timeout: float = 10.0) -> Any:
        """Evaluate a JavaScript function or expression in the page, with ``arg``."""
        return self.call(lambda: self._page.evaluate(expression, arg), timeout=timeout)

    def submit_evaluate(self, expression: str, arg: Any = None) -> Callable[[float], Any]:
        """Start evaluating ``expression`` in the page; see :meth:`submit`."""
        return self.submit(lambda: self._page.evaluate(expression, arg))

    def wait_for_function(self, expression: str, timeout: float) -> None:
        """Wait until ``expression`` is truthy in the page."""
        self.call(
            lambda: self._page.wait_for_function(expression, timeout=timeout * 1000),
            timeout=timeout + 5,
        )

    def wait_for_page_ready(self, what: str, timeout: float) -> None:
        """Wait until the page's runtime (``dynacu-task.js``) is ready.

        Raises:
            InfraError: naming ``what`` ("H1: the page"): it reported an error while getting
                ready, or was not ready within ``timeout`` seconds.
        """
        try:
            self.wait_for_function(
                "() => window.DynaCU && (window.DynaCU.ready || window.DynaCU.error)", timeout
            )
        except InfraError:
            raise
        except Exception as e:
            raise InfraError(
                f"{what} did not become ready within {timeout:g} s (is dynacu-task.js loaded "
                f"and DynaCU.task() called?): {str(e).splitlines()[0]}"
            ) from e
        error = self.evaluate("() => window.DynaCU.error")
        if error:
            raise InfraError(f"{what} failed to get ready: {error}")

    def click(self, x: int, y: int) -> None:
        """Move the mouse to the pixel and click it."""
        self.call(lambda: self._page.mouse.click(x, y))

    def type_text(self, text: str) -> None:
        """Type text into whatever has focus, one key event per character.

        The time allowed grows with the text (50 ms a character beyond 30 s, ten times what a
        loaded machine takes), so a long text is never cut short as a browser fault.
        """
        self.call(lambda: self._page.keyboard.type(text), timeout=30.0 + 0.05 * len(text))

    def press(self, combo: str) -> None:
        """Press a key combination, e.g. ``Control+a``."""
        self.call(lambda: self._page.keyboard.press(combo))

    def scroll(self, dx: float, dy: float) -> None:
        """Turn the mouse wheel at the pointer's position."""
        self.call(lambda: self._page.mouse.wheel(dx, dy))

    def move_mouse(self, x: float, y: float) -> None:
        """Move the pointer without clicking."""
        self.call(lambda: self._page.mouse.move(x, y))

    # ---- paused time (each runs on the browser thread) -----------------------------------

    def hold_time(self) -> None:
        """Stop the page's time from passing by itself, from the next page load on.

        Timers, ``Date`` and ``performance.now`` become Playwright's fake clock, paused; the
        document timeline's animations stand still (DevTools' animation playback rate 0); and
        every AudioContext is suspended (:data:`CLOCK_INIT_SCRIPT`). Time then passes only in
        :meth:`pass_time`. Once per browser.
        """
        if self.time_held:
            return

        def hold() -> None:
            context = self._context
            context.add_init_script(CLOCK_INIT_SCRIPT)
            # The installed clock runs until it is paused, and pause_at refuses a time it has
            # passed: installed at the epoch itself, a loaded machine failed the pause now and
            # then ("Cannot fast-forward to the past"). Installed an hour before, it only runs
            # on to the epoch, before any task page loads.
            context.clock.install(time=PAUSED_EPOCH - timedelta(hours=1))
            context.clock.pause_at(PAUSED_EPOCH)
            self._cdp = context.new_cdp_session(self._page)
            self._cdp.send("Animation.enable")
            self._cdp.send("Animation.setPlaybackRate", {"playbackRate": 0})

        self.call(hold)
        self.time_held = True

    def pass_time(
        self, seconds: float, paced: bool, slice_s: float = 0.1, then: str = "() => null"
    ) -> tuple[float, Any]:
        """Let ``seconds`` of page time pass, in slices; wait for paint; evaluate ``then``.

        ``then`` is a function of no arguments, evaluated in the page once it has settled
        (:meth:`settle`).

        Each slice runs the fake clock on (firing the timers due in it) and moves the running
        animations on by as much, in the page (``__dynacuTime.slice``). ``paced``: the slices
        keep to the wall clock and the page's sound plays meanwhile (a page that plays or hears
        sound, or a channel that watches the screen, needs real time to pass); else they run
        as fast as the page computes them, all in one call into the page, ``then`` included.
        Stops at the end of the slice in which the page decides the episode.

        Playwright's ``clock.run_for`` is not used: each call adds an init script to the
        context (replayed on every later page load) and takes two round trips.

        Returns:
            The monotonic time the slices ended (paced, before the wait for requests and
            paint; unpaced, after it: a few frames, and nothing is timed against it then),
            and what ``then`` returned.
        """
        total_ms = round(seconds * 1000)
        slice_ms = max(1, round(slice_s * 1000))
        settled = f"async () => {{ await window.__dynacuTime.passed(); return ({then})(); }}"

        def run() -> tuple[float, Any]:
            page = self._page
            if not paced:
                value = page.evaluate(
                    "async ([total, each]) => { await window.__dynacuTime.run(total, each); "
                    f"return ({settled})(); }}",
                    [total_ms, slice_ms],
                )
                return time.monotonic(), value
            page.evaluate("() => window.__dynacuTime.pass()")
            start = time.monotonic()
            done, verdict = 0, "pending"
            try:
                while done < total_ms and verdict == "pending":
                    ms = min(slice_ms, total_ms - done)
                    verdict = page.evaluate("(ms) => window.__dynacuTime.slice(ms)", ms)
                    done += ms
                    ahead = start + done / 1000 - time.monotonic()
                    if ahead > 0:
                        time.sleep(ahead)
                ended = time.monotonic()
            finally:
                page.evaluate("() => window.__dynacuTime.hold()")
            return ended, page.evaluate(settled)

        return self.call(run, timeout=seconds * (2.0 if paced else 10.0) + 30.0)

    def settle(self) -> None:
        """Wait until the page's requests have come back and it has painted, in paused time.

        The page's ``requestAnimationFrame`` is the fake clock's then, so the env's usual two
        frames would never come: this waits for the requests the page has open (a
        transcription of the agent's words), then for two of the real frames, which
        :data:`CLOCK_INIT_SCRIPT` kept.
        """
        self.evaluate("() => window.__dynacuTime.passed()", timeout=30.0)

    def listening(self) -> bool:
        """Whether the page has opened the microphone (paused time only)."""
        return bool(self.evaluate("() => window.__dynacuTime ? window.__dynacuTime.listening : 0"))

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
