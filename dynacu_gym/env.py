"""The env: a task page in a real browser, as a Gymnasium environment."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from dynacu_gym.actions import (
    MAX_ELEMENTS,
    SCREEN_HEIGHT,
    SCREEN_WIDTH,
    SCROLL_NOTCH_PX,
    TEXT_CHARSET,
    Action,
    ActionError,
    ActionType,
    action_space,
    format_action,
    to_charset,
    validate_action,
)
from dynacu_gym.clock import PageClock
from dynacu_gym.config import (  # noqa: F401 - REWARD_MODES also named here, where it was
    MAX_ELAPSED_S,
    REWARD_MODES,
    EnvConfig,
)
from dynacu_gym.imaging import frame_space
from dynacu_gym.perception.asr import listening_transcriber
from dynacu_gym.record import MAX_RECORD_CHARS, RecordParts, render_record
from dynacu_gym.runtime.browser import Browser
from dynacu_gym.runtime.elements import (
    LIST_ELEMENTS,
    PageElement,
    element_options,
    parse_elements,
)
from dynacu_gym.runtime.memory import give_back_large_buffers
from dynacu_gym.runtime.process import InfraError
from dynacu_gym.runtime.sandbox import Sandbox, SandboxConfig
from dynacu_gym.tasks import TaskSpec, find_task, load_task
from dynacu_gym.tasks.audio_assets import audio_clips, audio_dir

MAX_INSTRUCTION = 4096  # characters of the instruction observation
MAX_ERROR = 2000  # characters of the last-action-error observation
RESULT_POLL_S = 0.25  # how often a wait checks whether the page has decided
# Resolves after the page has produced two frames: the first paints the input's effect.
SETTLE_SCRIPT = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
# The verdict and the checklist in one call (a page without the runtime has no checklist).
RESULT_SCRIPT = (
    "() => [window.getTaskResult(), window.getTaskChecklist ? window.getTaskChecklist() : null]"
)
ELEMENTS_TIMEOUT_S = 10.0  # how long the page may take to list its elements
POPUP_STILL_S = 0.02  # a popup window is drawn once two grabs this far apart agree on it
POPUP_WAIT_S = 1.0  # the longest a step waits for its popups to be drawn
# The agent's input: what it changes on screen is the step's screenshot, not news.
INPUT_ACTIONS = (ActionType.CLICK, ActionType.TYPE, ActionType.KEY, ActionType.SCROLL)


# Long by design (~650 lines, a third of them its Gymnasium docstring): the whole env contract
# (spaces, reset, step, render, close) and the hooks the channel wrappers call. What could
# stand alone has: settings in EnvConfig, time in PageClock, processes in the Sandbox.
class DynaCUEnv(gym.Env):
    """A dynamic computer-use task: a real Chromium page that plays, moves and listens.

    ## Description
    The env opens the task's page full screen (1280x720) in Chromium under its own X display,
    with its own PulseAudio daemon and task server (see :class:`Sandbox`). The page runs on the
    wall clock from ``reset()``: audio plays, content changes and time limits run out while the
    agent thinks, as on a person's screen.

    ## Action Space
    A Dict (:func:`dynacu_gym.actions.action_space`): ``type`` (click, type, key, scroll,
    speak, wait, done) plus the fields each needs (``x``/``y``, ``text``, ``key``,
    ``direction``/``amount``, ``seconds``) and an optional ``narration``. Text actions go
    through :func:`dynacu_gym.parse_action`. A malformed or out-of-range action is an agent
    mistake: it is reported in ``last_action_error`` and the episode goes on.

    ## Observation Space
    A Dict: ``screenshot`` uint8 (720, 1280, 3); ``instruction``, ``last_action_error`` and
    ``record`` (the observation record text) as Text; ``elapsed`` float32 seconds since reset.
    Modes add channels (keyframes, transcripts) through wrappers.

    ## Rewards
    ``reward_mode="binary"`` (the benchmark's number): 1.0 on the step the page's
    ``getTaskResult()`` returns the task's success value, else 0.0. ``"checklist"``: partial
    credit for a task whose success criteria are a checklist (``[checklist]`` in its task file),
    the share of criteria held (1.0 on success), paid as its change each step, so an episode's
    return is its final credit; a task without a checklist pays as in binary.
    ``info["checklist"]`` holds each criterion's state and ``info["credit"]`` the share, in
    both modes.

    ## Episode End
    Terminated when the page reports success, a named failure or ``timeout``, or when the
    agent says ``done`` (the page's verdict then stands). Truncated with ``info["infra_error"]``
    when a part of the sandbox fails; the next ``reset()`` rebuilds it. Step limits come from
    ``max_episode_steps`` in the registration.

    ## Time
    ``clock="realtime"`` (default, the benchmark's): the page runs on the wall clock, also while
    the agent thinks. ``clock="paused"``: between steps the page's timers, clock, animations and
    sound stand still, and a step lets exactly its time pass: a ``wait``'s seconds, a
    ``speak``'s until the words are said and the page has heard the silence after them, none
    for ``done``, and ``action_time_s`` for any other action. Episodes then do not depend on
    how long the agent takes, replay the same from the same seed and actions, and run faster
    than real time where nothing needs the wall clock: a silent page (no sound played or
    heard) in a mode without keyframes. Otherwise the step's time passes at the wall clock's pace.

    ## Arguments
    - ``task``: a task id such as ``"A1"`` or a loaded :class:`TaskSpec`.
    - ``render_mode``: None or ``"rgb_array"`` (the last screenshot).
    - ``sandbox_config``: a :class:`SandboxConfig`.
    - ``ready_timeout_s``: seconds a page may take to load its data and audio.
    - ``max_restarts``: consecutive failed starts of the sandbox before ``reset()`` raises.
    - ``reward_mode``: ``"binary"`` (default) or ``"checklist"`` (see Rewards).
    - ``time_limit_s``: seconds from reset until the page calls ``timeout``; None (default)
      keeps the task's own ``time_limit_s``, which the benchmark's figures use. A shorter limit
      bounds episodes for training, or ends a static page once there is nothing left to see.
    - ``clock``: ``"realtime"`` (default) or ``"paused"`` (see Time).
    - ``action_time_s``: in paused time, the page seconds an action other than ``wait`` takes.
    - ``variety``: each ``reset(seed=k)`` plays one of the task's ``[[variants]]``, drawn from
      the seed (other codes, numbers, names, sizes; the audio rendered for it and cached), so
      that an agent in training cannot learn one instance by heart. Off (default): variant 0,
      the benchmark's. ``info["variant"]`` says which.

    The settings from ``ready_timeout_s`` on are an :class:`EnvConfig` (``env.config``), which
    checks each against its unit and range.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(
        self,
        task: str | TaskSpec,
        render_mode: str | None = None,
        sandbox_config: SandboxConfig | None = None,
        ready_timeout_s: float = 30.0,
        max_restarts: int = 3,
        reward_mode: str = "binary",
        time_limit_s: float | None = None,
        clock: str = "realtime",
        action_time_s: float = 0.5,
        variety: bool = False,
    ) -> None:
        self.config = EnvConfig(
            ready_timeout_s=ready_timeout_s,
            max_restarts=max_restarts,
            reward_mode=reward_mode,
            time_limit_s=time_limit_s,
            clock=clock,
            action_time_s=action_time_s,
            variety=variety,
        )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"expected render_mode in {self.metadata['render_modes']} or None, "
                f"got {render_mode!r}"
            )
        if isinstance(task, str):
            task = find_task(task)
        elif not isinstance(task, TaskSpec):
            raise TypeError(f"expected a task id or TaskSpec, got {type(task).__name__}")
        # Fail now, not mid-episode, if the task's audio is missing or stale.
        self._sounds = bool(audio_clips(task))  # a page that plays sound needs the wall clock
        if self.config.time_limit_s is not None:
            task = replace(task, time_limit_s=self.config.time_limit_s)
        self.task = task
        self.variety = self.config.variety
        self._variants: dict[int, TaskSpec] = {task.variant: task}
        self._time_limit_s = self.config.time_limit_s
        self.render_mode = render_mode
        self.sandbox_config = sandbox_config or SandboxConfig()
        self.ready_timeout_s = self.config.ready_timeout_s
        self.max_restarts = self.config.max_restarts
        self.reward_mode = self.config.reward_mode
        self.clock = self.config.clock
        self.action_time_s = self.config.action_time_s
        self._wall_clock_needs: set[str] = set()  # wrappers whose channels need it too
        self.page_clock = PageClock(self.clock)
        self.action_space = action_space()
        give_back_large_buffers()  # frames freed go back to the system (runtime/memory.py)
        self.observation_space = spaces.Dict(
            {
                "screenshot": frame_space((SCREEN_HEIGHT, SCREEN_WIDTH, 3)),
                "instruction": spaces.Text(MAX_INSTRUCTION, min_length=0, charset=TEXT_CHARSET),
                "elapsed": spaces.Box(0.0, MAX_ELAPSED_S, shape=(), dtype=np.float32),
                "last_action_error": spaces.Text(MAX_ERROR, min_length=0, charset=TEXT_CHARSET),
                "record": spaces.Text(MAX_RECORD_CHARS, min_length=0, charset=TEXT_CHARSET),
            }
        )
        self.sandbox: Sandbox | None = None
        self._step = 0
        self._prior_actions: list[str] = []
        self._ended = False
        self._pointer = (SCREEN_WIDTH // 2, SCREEN_HEIGHT // 2)
        self._screenshot = np.zeros((SCREEN_HEIGHT, SCREEN_WIDTH, 3), dtype=np.uint8)
        self._popups: list[tuple[int, int, int, int]] = []  # as the last click or key left them
        self.screenshot_time = 0.0  # monotonic time of the last screenshot's grab (its middle)
        # (start, end) in monotonic time of the last step's input (a click, typing, a key or a
        # scroll) up to its screenshot: what the screen did then, the agent's input did; None
        # when the last step gave no input.
        self.input_window: tuple[float, float] | None = None
        self._result = "pending"
        self._checks: dict[str, bool] = dict.fromkeys(task.checklist, False)
        self._credit = 0.0
        self._speaker: Callable[[Action], dict[str, Any]] | None = None
        self._speech_info: dict[str, Any] | None = None
        self.channels: tuple[str, ...] = ()  # the channels wrapped around it (set by modes)
        # The page elements on screen at the last screenshot (the elements channel turns the
        # reading on), and how many more the list left out.
        self._element_options: dict[str, int] | None = None
        self.elements: list[PageElement] = []
        self.elements_truncated = 0

    # ---- episode ---------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Load the task page afresh and start its clock.

        Raises:
            InfraError: the sandbox could not be (re)built after ``max_restarts`` attempts.
        """
        super().reset(seed=seed)
        t_start = time.monotonic()
        page_seed = int(self.np_random.integers(0, 2**31 - 1))
        if self.variety and self.task.variants > 1:
            self.task = self._variant(int(self.np_random.integers(self.task.variants)))
        last_error: InfraError | None = None
        for _attempt in range(self.max_restarts + 1):
            try:
                self._ensure_sandbox()
                self._load_page(page_seed)
                break
            except InfraError as e:
                last_error = e
                if self.sandbox is not None and self.sandbox.browser is not None:
                    # A page that would not load may have wedged the browser: rebuild it.
                    self.sandbox.browser.stop()
                    self.sandbox.browser = None
        else:
            raise InfraError(
                f"{self.task.gym_id}: the sandbox failed {self.max_restarts + 1} times in a "
                f"row; last error: {last_error}"
            ) from last_error
        self.page_clock.start()
        self._step = 0
        self._prior_actions = []
        self._ended = False
        self._popups = []
        self._result = "pending"
        self._checks = dict.fromkeys(self.task.checklist, False)
        self._credit = 0.0
        t_loaded = time.monotonic()
        self.input_window = None
        self._grab_screenshot()
        obs, parts = self._observation("")
        info = {
            "task_id": self.task.id,
            "task_result": "pending",
            "checklist": dict(self._checks),
            "credit": 0.0,
            "page_seed": page_seed,
            "variant": self.task.variant,
            "channels": list(self.channels),
            "mode": self.mode,
            "restarts": self._sandbox().restarts,
            "timings": {
                "reset": t_loaded - t_start,
                "capture": time.monotonic() - t_loaded,
            },
            "record_parts": parts,
        }
        return obs, info

    def step(
        self, action: dict[str, Any] | Action
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Perform one action, then observe."""
        if not self.page_clock.running:
            raise gym.error.ResetNeeded("call reset() before step()")
        t_start = time.monotonic()
        timings: dict[str, float] = {}
        error = ""
        infra_error = ""
        act: Action | None = None
        described = ""
        if self._ended:
            error = "EpisodeOver: the episode has ended; call reset()"
        else:
            try:
                act = validate_action(action)
                if act.type == ActionType.SPEAK and self._speaker is None:
                    raise ActionError(
                        "speak needs the speak channel, which this env's mode does not have; "
                        "use mode='aoi_interactive'"
                    )
                if act.type == ActionType.CLICK and act.element:
                    act = self._at_element(act)
                described = self._describe(act)  # before the step's screenshot lists anew
            except ActionError as e:
                error = f"{type(e).__name__}: {e}"
                act = None
        result = self._result
        self._speech_info = None
        self.input_window = None
        input_start = None
        try:
            if not self._ended:
                self._check_parts()
                t = time.monotonic()
                if act is not None:
                    if act.type in INPUT_ACTIONS:
                        input_start = t
                    self._perform(act)
                timings["action"] = time.monotonic() - t
                if act is not None and act.type == ActionType.SPEAK:
                    timings["tts"] = timings["action"]  # synthesis and scheduling of the speech
                read = None
                if self.page_clock.paused:
                    t = time.monotonic()
                    read = self._pass_time(self._time_of(act))
                    if act is not None and act.type in (ActionType.CLICK, ActionType.KEY):
                        if self._paints_after_pass(act):  # a dropdown it opened, drawn whole
                            self._let_popups_paint()
                    timings["pass"] = time.monotonic() - t
                t = time.monotonic()
                result = self._read_result(read)
                timings["result"] = time.monotonic() - t
            t = time.monotonic()
            self._grab_screenshot()
            timings["capture"] = time.monotonic() - t
            if input_start is not None:
                self.input_window = (input_start, self.screenshot_time)
        except InfraError as e:
            infra_error = f"{type(e).__name__}: {e}"
        self._step += 1
        if act is not None:
            self._prior_actions.append(described)
        elif not self._ended:
            self._prior_actions.append(f"(invalid action) {error}")
        credit = self._credit_for(result) if not self._ended else self._credit
        if self.reward_mode == "checklist" and self.task.checklist:
            reward = credit - self._credit
        else:
            reward = 1.0 if result == self.task.success and not self._ended else 0.0
        self._credit = credit
        terminated = not self._ended and (
            result != "pending" or (act is not None and act.type == ActionType.DONE)
        )
        truncated = bool(infra_error)
        self._result = result
        if terminated or truncated:
            self._ended = True
        obs, parts = self._observation(error)
        timings["total"] = time.monotonic() - t_start
        info: dict[str, Any] = {
            "task_id": self.task.id,
            "task_result": result,
            "checklist": dict(self._checks),
            "credit": credit,
            "last_action_error": error,
            "timings": timings,
            "record_parts": parts,
            "channels": list(self.channels),
            "mode": self.mode,
        }
        if self._speech_info is not None:
            info["speech"] = self._speech_info
        if infra_error:
            info["infra_error"] = infra_error
        return obs, reward, terminated, truncated, info

    def render(self) -> np.ndarray | None:
        """The last screenshot in ``rgb_array`` mode."""
        if self.render_mode == "rgb_array":
            return self._screenshot.copy()
        return None

    def close(self) -> None:
        """Stop the sandbox and everything in it. Idempotent."""
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None
        self.page_clock.stop()

    # ---- privileged access (scripted solutions, tests) ---------------------------------------

    def evaluate_in_page(self, expression: str, arg: Any = None) -> Any:
        """Evaluate JavaScript in the task page.

        Privileged: for scripted solutions and tests, never for agents under evaluation.
        """
        return self._sandbox().browser_or_raise().evaluate(expression, arg)

    def enable_speaker_capture(self) -> None:
        """Record what the page plays from now on (the audio channel calls this)."""
        if not self.sandbox_config.capture_speaker:
            self.sandbox_config = replace(self.sandbox_config, capture_speaker=True)
            if self.sandbox is not None:
                self.sandbox.config = self.sandbox_config
                self.sandbox.ensure_running()

    @property
    def mode(self) -> str:
        """The name of the channel set this env runs with (a preset's, or ``a+b`` channels)."""
        from dynacu_gym.modes import mode_name

        return mode_name(self.channels)

    def enable_elements(self, max_items: int) -> None:
        """List the page's elements with every screenshot (the elements channel calls this).

        Args:
            max_items: the most elements one list holds (the first in document order).
        """
        self._element_options = element_options(max_items)

    def set_speaker(self, speaker: Callable[[Action], dict[str, Any]] | None) -> None:
        """Let ``speak`` actions through to ``speaker`` (the speak channel calls this).

        ``speaker`` says the action's text and returns what ``info["speech"]`` reports; it
        raises :class:`InfraError` if the voice's output has died. None turns ``speak`` back
        into an agent mistake.
        """
        self._speaker = speaker

    @property
    def heard(self) -> list[str]:
        """What the page's recogniser heard this episode, one text per utterance, in order.

        A listening page's uploads, as Whisper transcribed them; empty for other pages. It is
        what a spoken answer was judged on, so an episode line keeps it.
        """
        if self.sandbox is None:
            return []
        return list(self.sandbox.server.heard)

    @property
    def episode_start(self) -> float:
        """Monotonic time the page's clock started.

        Raises:
            gymnasium.error.ResetNeeded: before the first reset.
        """
        return self.page_clock.start_time

    @property
    def elapsed(self) -> float:
        """Seconds of page time since the episode started (0 before the first reset).

        In real time, the wall clock's; in paused time, what the steps have let pass.
        """
        return self.page_clock.elapsed

    def episode_time(self, wall: float) -> float:
        """The page time at monotonic wall time ``wall``: how channels stamp what they caught.

        In real time ``wall - episode_start``. In paused time the page time stands still
        between steps, so a frame grabbed while the agent thought is stamped with the time the
        last step ended at (:meth:`PageClock.page_at`).
        """
        return self.page_clock.page_at(wall)

    def wall_time(self, page: float) -> float:
        """The first monotonic wall time at which page time ``page`` was reached.

        The inverse of :meth:`episode_time`: the start for a page time before 0, now for one
        not reached yet.
        """
        return self.page_clock.wall_at(page)

    def pass_page_time(self, seconds: float) -> None:
        """Let ``seconds`` of page time pass now, in paused time; nothing in real time.

        For a channel that must let the page run while it acts: the voice, while it speaks.
        """
        if self.page_clock.paused:
            self._pass_time(seconds)

    def needs_wall_clock(self, reason: str) -> None:
        """Have paused time keep to the wall clock's pace while it passes (see Time).

        For a channel that watches the screen or hears the page (``reason`` names it).
        """
        self._wall_clock_needs.add(reason)

    # ---- internals -------------------------------------------------------------------------

    def _sandbox(self) -> Sandbox:
        if self.sandbox is None:
            raise InfraError("the sandbox is not running; call reset()")
        return self.sandbox

    def _ensure_sandbox(self) -> None:
        if self.sandbox is None:
            model = self.sandbox_config.listen_model
            self.sandbox = Sandbox(self.sandbox_config, partial(listening_transcriber, model))
        self.sandbox.ensure_running()

    def _load_page(self, page_seed: int) -> None:
        sandbox = self._sandbox()
        browser = sandbox.browser_or_raise()
        variant_audio = audio_dir(self.task) if self.task.variant else None
        sandbox.server.begin_episode(self.task, page_seed, audio_clips(self.task), variant_audio)
        if self.page_clock.paused:
            browser.hold_time()
        browser.goto(sandbox.server.origin + self.task.page_path)
        browser.wait_for_page_ready(f"{self.task.id}: the page", self.ready_timeout_s)
        browser.move_mouse(*self._pointer)
        browser.evaluate("() => window.DynaCU.start()")
        self._let_paint(browser)  # what start() shows is in the first screenshot

    def _check_parts(self) -> None:
        sandbox = self._sandbox()
        for name, part in (
            ("display (Xvfb)", sandbox.display),
            ("audio daemon", sandbox.audio),
            ("speaker capture", sandbox.capture),
        ):
            if part is not None and not part.alive():
                raise InfraError(f"the {name} died")

    def _perform(self, act: Action) -> None:
        browser = self._sandbox().browser_or_raise()
        if act.type == ActionType.CLICK:
            browser.click(act.x, act.y)
            self._pointer = (act.x, act.y)
        elif act.type == ActionType.TYPE:
            browser.type_text(act.text)
        elif act.type == ActionType.KEY:
            browser.press(act.key)
        elif act.type == ActionType.SCROLL:
            sign = -1 if act.direction == "up" else 1
            browser.scroll(0, sign * act.amount * SCROLL_NOTCH_PX)
        elif act.type == ActionType.WAIT:
            if not self.page_clock.paused:  # paused time passes after the action
                self._wait(act.seconds)
        elif act.type == ActionType.SPEAK:
            assert self._speaker is not None  # validated in step()
            self._speech_info = self._speaker(act)
        # The screenshot shows what the input changed. In paused time the pass that follows
        # waits for the paint (a click's own wait then cost two more frames, 33 ms) and then
        # for the popups (step()).
        if self._paints_after_pass(act):
            return
        if act.type in INPUT_ACTIONS:
            self._let_paint(browser)
        if act.type in (ActionType.CLICK, ActionType.KEY):
            self._let_popups_paint()

    def _paints_after_pass(self, act: Action) -> bool:
        """Whether paused time passes after ``act``, so that its paint is waited for then."""
        return self.page_clock.paused and self._time_of(act) > 0

    def _grab_screenshot(self) -> None:
        """Grab the screen; with the elements channel, list the page's elements meanwhile.

        The page runs the listing in one task, during which it paints nothing: the grab made
        while it runs shows what the list describes.
        """
        sandbox = self._sandbox()
        listing = None
        if self._element_options is not None:
            browser = sandbox.browser_or_raise()
            listing = browser.submit_evaluate(LIST_ELEMENTS, self._element_options)
        t = time.monotonic()
        self._screenshot = sandbox.display.grab()
        self.screenshot_time = (t + time.monotonic()) / 2
        if listing is not None:
            try:
                raw = listing(ELEMENTS_TIMEOUT_S)
            except InfraError:
                raise
            except Exception as e:
                raise InfraError(f"listing the page's elements failed: {e}") from e
            self.elements, self.elements_truncated = parse_elements(raw)

    def _at_element(self, act: Action) -> Action:
        """A click on element ``[n]``: the click at its centre, as the last observation listed it.

        Raises:
            ActionError: the env lists no elements, or none numbered ``n``.
        """
        if self._element_options is None:
            raise ActionError(
                f"click [{act.element}] needs the elements channel, which this env does not "
                "have; click at x y, or use a mode with page elements (standard_structured or "
                "an aoi_* mode)"
            )
        if not 1 <= act.element <= len(self.elements):
            listed = f"[1]..[{len(self.elements)}]" if self.elements else "no elements"
            raise ActionError(
                f"click [{act.element}]: the last observation listed {listed}; click an element "
                "as numbered there, or at x y"
            )
        x, y = self.elements[act.element - 1].center
        return replace(act, x=x, y=y)

    def _describe(self, act: Action) -> str:
        """An action as the record's prior actions list it (a click on [n] says where it went)."""
        if act.type != ActionType.CLICK or not act.element:
            return format_action(act)
        element = self.elements[act.element - 1]
        name = element.text or element.label or element.value
        what = f"{element.role} {_quoted(name)}" if name else element.role
        note = f"  # {act.narration}" if act.narration else ""
        return f"click [{act.element}] ({what} at {act.x} {act.y}){note}"

    def _let_paint(self, browser: Browser) -> None:
        """Wait until the page has painted what it last changed."""
        if self.page_clock.paused:
            browser.settle()
        else:
            browser.evaluate(SETTLE_SCRIPT)

    def _let_popups_paint(self) -> None:
        """Wait until the browser's popup windows (an open dropdown's list) are drawn and still.

        A popup is a window of its own, drawn after the page has painted: on a loaded machine
        the screenshot of the click that opened a dropdown showed its list not yet whole, and
        the screen changed after it. A popup that has just opened is drawn when its box differs
        from what the last screenshot showed there; any popup, when two grabs
        :data:`POPUP_STILL_S` apart agree on it. After :data:`POPUP_WAIT_S` the step goes on
        with the screen as it is.
        """
        display = self._sandbox().display
        boxes = display.popups()
        deadline = time.monotonic() + POPUP_WAIT_S
        last = None
        while boxes:
            frame = display.grab()
            now = [_crop(frame, box) for box in boxes]
            drawn = all(
                box in self._popups or not np.array_equal(part, _crop(self._screenshot, box))
                for box, part in zip(boxes, now, strict=True)
            )
            still = last is not None and all(
                np.array_equal(a, b) for a, b in zip(now, last, strict=True)
            )
            if (drawn and still) or time.monotonic() >= deadline:
                break
            time.sleep(POPUP_STILL_S)
            again = display.popups()
            last = now if again == boxes else None
            boxes = again
        self._popups = boxes

    def _variant(self, number: int) -> TaskSpec:
        """The task's variant ``number`` (with this env's time limit), its audio rendered."""
        if number not in self._variants:
            task = load_task(self.task.root, variant=number)
            if self._time_limit_s is not None:
                task = replace(task, time_limit_s=float(self._time_limit_s))
            audio_clips(task)  # renders the variant's words the first time (then cached)
            self._variants[number] = task
        return self._variants[number]

    def _time_of(self, act: Action | None) -> float:
        """The page seconds a step takes in paused time."""
        if act is None:  # an invalid action takes an action's time, as a valid one does
            return self.action_time_s
        if act.type == ActionType.WAIT:
            return act.seconds
        if act.type == ActionType.DONE:
            return 0.0
        if act.type == ActionType.SPEAK:  # the voice let the page run while it spoke
            return 0.0
        return self.action_time_s

    def _pass_time(self, seconds: float) -> Any:
        """Let ``seconds`` of page time pass (paused time), and note the stretch.

        Returns what :data:`RESULT_SCRIPT` read after it (None when no time passed): the call
        that passes the time reads the verdict too.
        """
        if seconds <= 0:
            return None
        browser = self._sandbox().browser_or_raise()
        paced = bool(self._wall_clock_needs) or self._sounds or browser.listening()
        wall_start = time.monotonic()
        # What the page asked its server in that time has come back, and it has painted.
        try:
            wall_end, read = browser.pass_time(seconds, paced, then=RESULT_SCRIPT)
        except InfraError:
            raise
        except Exception as e:  # a timer the page ran, or getTaskResult(), threw
            raise InfraError(f"passing page time failed in the page: {e}") from e
        self.page_clock.passed(wall_start, wall_end, seconds)
        return read

    def _wait(self, seconds: float) -> None:
        """Let the wall clock run; stop early only if the page decides the episode."""
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            time.sleep(min(RESULT_POLL_S, remaining))
            if remaining > RESULT_POLL_S and self._read_result() != "pending":
                return

    def _read_result(self, value: Any = None) -> str:
        """The page's verdict; its checklist goes to ``self._checks``.

        ``value``: what :data:`RESULT_SCRIPT` returned, where it has been read; else it is.
        """
        if value is None:
            browser = self._sandbox().browser_or_raise()
            try:
                value = browser.evaluate(RESULT_SCRIPT)
            except InfraError:
                raise
            except Exception as e:
                raise InfraError(f"getTaskResult() failed in the page: {e}") from e
        result, checks = value if isinstance(value, list) and len(value) == 2 else (value, None)
        if not isinstance(result, str):
            raise InfraError(f"getTaskResult() returned {result!r}; expected a string")
        if self.task.checklist:
            names = list(self.task.checklist)
            if not (
                isinstance(checks, dict)
                and list(checks) == names
                and all(isinstance(v, bool) for v in checks.values())
            ):
                raise InfraError(
                    f"getTaskChecklist() returned {checks!r}; expected true or false for each of "
                    f"{names}"
                )
            self._checks = checks
        return result

    def _credit_for(self, result: str) -> float:
        """1.0 on success; else the share of the checklist held (0.0 without a checklist)."""
        if result == self.task.success:
            return 1.0
        if not self._checks:
            return 0.0
        return sum(self._checks.values()) / len(self._checks)

    def _observation(self, error: str) -> tuple[dict[str, Any], RecordParts]:
        instruction = to_charset(self.task.instruction, MAX_INSTRUCTION)
        error = to_charset(error, MAX_ERROR)
        elapsed = self.elapsed
        parts = RecordParts(
            step=self._step,
            elapsed=elapsed,
            instruction=instruction,
            prior_actions=tuple(self._prior_actions),
            last_action_error=error,
        )
        obs = {
            "screenshot": self._screenshot,
            "instruction": instruction,
            "elapsed": np.array(elapsed, dtype=np.float32),
            "last_action_error": error,
            "record": to_charset(render_record(parts), MAX_RECORD_CHARS),
        }
        return obs, parts


def _crop(frame: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """The part of a screen grab inside ``box`` (x, y, width, height), clipped to the screen."""
    x, y, width, height = box
    return frame[max(y, 0) : max(y + height, 0), max(x, 0) : max(x + width, 0)]


def _quoted(text: str, limit: int = 40) -> str:
    """``text`` in double quotes, cut to ``limit`` characters."""
    return '"' + (text if len(text) <= limit else text[: limit - 1] + "\u2026") + '"'


def make_env(
    task: str | TaskSpec,
    mode: str | None = None,
    channels: list[str] | tuple[str, ...] | None = None,
    asr_model: str | None = None,
    asr_device: str = "cpu",
    asr_compute_type: str = "int8",
    max_keyframes: int = 5,
    keyframe_fps: float = 3.0,
    clip_weights: str | None = None,
    clip_arch: str = "ViT-B-32",
    clip_cache_dir: str | None = None,
    narration_chars: int = 8000,
    voice: str | None = None,
    speech_rate: float = 1.0,
    max_elements: int = MAX_ELEMENTS,
    **kwargs: Any,
) -> gym.Env:
    """Entry point of every registered id: the base env wrapped in its channels.

    Args:
        task: the task id, or a loaded task (a variant, say).
        mode: one of :data:`dynacu_gym.modes.MODES`, or channels joined with ``+``; None (and no
            ``channels``): ``"standard"``.
        channels: the channels as a list, instead of ``mode`` (see
            :data:`dynacu_gym.modes.CHANNELS`): any set that makes sense.
        asr_model: the Whisper model the audio channel uses (None: the bundled ``tiny.en``; a
            CTranslate2 folder; or a name in the local Hugging Face cache).
        asr_device: ``"cpu"`` or ``"cuda"`` for that model.
        asr_compute_type: CTranslate2 compute type for that model.
        max_keyframes: K, the most keyframes a step returns (keyframe channel).
        keyframe_fps: how often the screen is grabbed between steps (keyframe channel).
        clip_weights: turns on the CLIP keyframe gate: a checkpoint file or a pretrained tag in
            a local cache (see :mod:`dynacu_gym.perception.clip_gate`); off by default.
        clip_arch: the open_clip model of those weights.
        clip_cache_dir: where to look for a pretrained tag.
        narration_chars: the bound on the agent's kept narration (narration channel).
        voice: the piper voice ``speak`` uses (an ``.onnx`` path; None: en_US-joe-medium).
        speech_rate: its speaking rate, 0.5 to 2.0.
        max_elements: the most page elements one observation lists (elements channel).
        kwargs: arguments of :class:`DynaCUEnv`.

    Raises:
        ValueError: both ``mode`` and ``channels``, an unknown or impossible channel set, or a
            channel's argument without its channel.
    """
    from dynacu_gym.modes import apply_channels, check_channels, check_mode, mode_channels

    if mode is not None and channels is not None:
        raise ValueError(
            f"expected mode or channels, not both (got mode={mode!r}, channels={channels!r})"
        )
    if channels is not None:
        chosen = check_channels(channels)
    else:
        mode = "standard" if mode is None else mode
        chosen = mode_channels(check_mode(mode))
    named = f"channels {list(chosen)}" if channels is not None else f"mode {mode!r}"
    asr = {"model": asr_model, "device": asr_device, "compute_type": asr_compute_type}
    if asr != {"model": None, "device": "cpu", "compute_type": "int8"} and (
        "transcript" not in chosen
    ):
        raise ValueError(f"asr_* arguments need the transcript channel, got {named}")
    keyframes = {
        "max_keyframes": max_keyframes,
        "fps": keyframe_fps,
        "clip_weights": clip_weights,
        "clip_arch": clip_arch,
        "clip_cache_dir": clip_cache_dir,
    }
    if tuple(keyframes.values()) != (5, 3.0, None, "ViT-B-32", None) and "keyframes" not in chosen:
        raise ValueError(
            "keyframe and clip_* arguments need the keyframes channel (aoi_visual, aoi_full, "
            f"aoi_interactive), got {named}"
        )
    if narration_chars != 8000 and "narration" not in chosen:
        raise ValueError(f"narration_chars needs the narration channel, got {named}")
    if (voice, speech_rate) != (None, 1.0) and "speech" not in chosen:
        raise ValueError(
            f"voice and speech_rate need the speech channel (aoi_interactive), got {named}"
        )
    if max_elements != MAX_ELEMENTS and "elements" not in chosen:
        raise ValueError(f"max_elements needs the elements channel, got {named}")
    env = DynaCUEnv(task, **kwargs)
    try:
        return apply_channels(
            env,
            chosen,
            elements={"max_items": max_elements},
            transcript=asr,
            keyframes=keyframes,
            narration={"max_chars": narration_chars},
            speech={"voice": voice, "rate": speech_rate},
        )
    except BaseException:
        env.close()
        raise
