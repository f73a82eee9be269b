"""An agent that drives the benchmark through Gemini's computer-use tool (``google-genai``).

The request carries the computer-use tool (``ENVIRONMENT_BROWSER``) with the predefined
functions the benchmark cannot perform excluded (:data:`EXCLUDED_FUNCTIONS`: no navigation, no
hovering, no dragging), and three functions of ours beside it: ``speak(text)``,
``wait(seconds)`` and ``done()``. The model answers ``function_call`` parts with x and y
normalised 0-999 over the image it was shown; :func:`call_actions` maps each call onto the
benchmark's actions in screen pixels:

==================================================  ===========================================
Gemini                                              benchmark
==================================================  ===========================================
``click_at(x, y)``                                  ``click``
``type_text_at(x, y, text, press_enter,``           ``click``, then ``key Control+a`` and
``clear_before_typing)``                            ``key Backspace`` (clear, default true),
                                                    ``type``, ``key Enter`` (press_enter,
                                                    default true), one per env step
``key_combination(keys)``                           ``key`` (``"control+a"`` is ``Control+a``)
``scroll_document(up|down)``                        ``scroll``, a screen's height of notches
``scroll_at(x, y, up|down, magnitude)``             ``scroll``, magnitude in thousandths of the
                                                    image's height (default 800)
``wait_5_seconds()`` / ``wait(seconds)``            ``wait``
``speak(text)`` / ``done()``                        ``speak`` / ``done``
==================================================  ===========================================

The env scrolls the wheel where the mouse is and has no mouse move, so ``scroll_at`` scrolls
where the pointer last clicked (its point is checked but cannot move the pointer); the system
instruction says so. Text parts beside the calls are the narration of the first action.

A reply's calls are performed one per env step: the actions of one reply wait in a queue, and
the ``act`` calls that hand them out ask the model nothing (``calls`` 0); a step's ``reply`` is
the final reply in short (its text, then its calls). A reply that cannot be performed (no
function call, a function that is excluded or unknown, a point outside 0-999 or on the image's
padding, a call that needs a person's confirmation) is answered with a ``function_response``
per call saying why, and the model is asked once more within the same ``act``; a second miss
becomes ``{"type": "invalid_reply", ...}``, an agent mistake the env reports. A
``safety_decision`` asking for confirmation is never acknowledged on anyone's behalf: no person
watches a benchmark run, so that call is not performed.

With ``history=0`` every step is one fresh user turn: the observation record, the screenshot
and the keyframes. With ``history=K`` the conversation keeps the last K exchanges (the model's
calls and the user turn answering them): the newest user turn answers the previous calls with
``function_response`` parts, the last computer-use one carrying the screenshot (as the
protocol has it), then the record and the keyframes; older turns keep their responses without
images, and the oldest kept is replaced by the task's text.

Retries are ours, not the SDK's (its retry options are left off so that every HTTP call is
counted): 429 and 5xx answers are retried ``http_retries`` times, then raise
:class:`~dynacu_agents.llm.LLMError`, as does a server that cannot be reached; any other 4xx
raises :class:`~dynacu_agents.llm.ModelRefused`, the agent's failure.

Where the installed SDK has no computer-use tool, the same function names and 0-999
coordinates are declared as plain functions (:data:`COMPUTER_FUNCTIONS`).
"""

from __future__ import annotations

import base64
import importlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dynacu_agents.computer_use.base import (
    ComputerUseAgent,
    Plan,
    check_http_retries,
    check_max_keyframes,
    check_model,
    check_reasoning_effort,
    given_or_env,
    http_error,
    image_fit,
    import_sdk,
    timed,
)
from dynacu_agents.coords import CoordSpace, ImageFit
from dynacu_agents.llm import (
    BACKOFF_S,
    MAX_ERROR_CHARS,
    RETRY_STATUSES,
    THINKING_BUDGETS,
    LLMError,
    MessagePart,
    StepCost,
    observation_parts,
)
from dynacu_gym.actions import (
    MAX_NARRATION,
    MAX_SCROLL,
    MAX_WAIT_S,
    SCREEN_HEIGHT,
    SCREEN_WIDTH,
    SCROLL_NOTCH_PX,
    ActionError,
    normalize_key,
    validate_action,
)

DEFAULT_MODEL = "gemini-2.5-computer-use-preview-10-2025"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"  # the SDK's own default
API_VERSION = "v1beta"  # the computer-use tool is a preview of the v1beta API
KEY_ENV = ("GEMINI_API_KEY", "GOOGLE_API_KEY")  # the first one set is used
BASE_URL_ENV = "GOOGLE_GEMINI_BASE_URL"  # the SDK documents this one for the Gemini API
INSTALL_HINT = 'pip install "dynacu-gym[gemini]"'
NO_SDK = f"the Gemini computer-use agent needs the google-genai SDK: {INSTALL_HINT}"

# Predefined functions the benchmark cannot perform: the page is the whole world (no address
# bar, history or search engine) and the env has no mouse move (no hover, no drag).
EXCLUDED_FUNCTIONS = (
    "open_web_browser",
    "navigate",
    "go_back",
    "go_forward",
    "search",
    "drag_and_drop",
    "hover_at",
)
COMPUTER_FUNCTIONS = (
    "click_at",
    "type_text_at",
    "key_combination",
    "scroll_document",
    "scroll_at",
    "wait_5_seconds",
)
CUSTOM_FUNCTIONS = ("speak", "wait", "done")
AVAILABLE = ", ".join(COMPUTER_FUNCTIONS + CUSTOM_FUNCTIONS)

NORM_TOP = 999  # the largest coordinate the model is told about (0-999)
SCROLL_AT_MAGNITUDE = 800  # scroll_at's documented default, thousandths of the image's height
DOCUMENT_SCROLL_NOTCHES = SCREEN_HEIGHT // SCROLL_NOTCH_PX  # scroll_document: a screen's height
WAIT_5_SECONDS = 5.0
PAGE_URL = "(not shown)"  # the observation carries no address; the page never changes anyway
MAX_SHOWN_ARG = 200  # characters of one argument a reply summary quotes


def system_instruction(fit: ImageFit | None = None) -> str:
    """The system instruction: the screen, the turn, what each function does here.

    ``fit`` is the image the model is shown (default: the full screen).
    """
    fit = fit or ImageFit()
    return f"""\
You operate a web page in a Chromium browser on a {SCREEN_WIDTH}x{SCREEN_HEIGHT} screen through \
the computer-use functions, as a person at a computer would. The browser is already open on the \
task's page and stays on it: there is no address bar, navigation, search, going back or \
forward, hovering or dragging. The page runs in real time: sound plays, content changes and \
time passes while you think.

Each turn brings the observation record (the task, your prior actions, any audio transcript, \
the list of keyframes, your narration notes and, where the page has them, its [PAGE ELEMENTS], \
whose positions are {SCREEN_WIDTH}x{SCREEN_HEIGHT} screen pixels), the current screenshot, and \
the keyframes: frames of what the screen showed since your last action, each labelled with its \
time in seconds since the task started. The screenshot is {fit.describe()}; the x and y of \
your calls are 0 to {NORM_TOP} over that image (x = 0 is its left edge and {NORM_TOP} its \
right, y = 0 its top and {NORM_TOP} its bottom).

The functions:
- click_at(x, y): click there.
- type_text_at(x, y, text, press_enter, clear_before_typing): click there, clear the field \
with Control+A and Backspace (clear_before_typing, default true), type the text, then press \
Enter (press_enter, default true).
- key_combination(keys): press a key or a combination, such as "Enter", "Escape", "Tab" or \
"Control+A".
- scroll_document(direction) and scroll_at(x, y, direction, magnitude): turn the mouse wheel up \
or down where the pointer last clicked. The pointer moves only by clicking, so scroll_at's x \
and y do not move it: click an empty spot of the area first to scroll that area. \
scroll_document scrolls a screen's height; scroll_at scrolls magnitude thousandths of the \
image's height (default {SCROLL_AT_MAGNITUDE}). Left and right are not available.
- wait_5_seconds() and wait(seconds): let time pass (up to {MAX_WAIT_S:g} seconds), to see or \
hear more.
- speak(text): say the words aloud. Use it only when the task says to answer aloud.
- done(): end the task; the page's verdict then stands. Call it once the task is complete.

Each call is performed as one step of the task (type_text_at as several), in the order you \
give them. Beside your calls write, as text, what you newly saw in the screenshot and keyframes \
that may matter later (numbers, names, messages that may vanish): the record keeps these notes \
in its [NARRATION] section after the frames are gone, and each frame is shown to you only once. \
Always answer with at least one function call.
"""


NO_CALL_PROMPT = (
    "Your reply was not performed: {error}. Answer with a function call, one of: "
    + AVAILABLE
    + " (done() when the task is complete, speak(text) when it asks for a spoken answer)."
)
BAD_CALL_PROMPT = (
    "None of your calls was performed: {error}. The function responses above say why. Call "
    "one of: " + AVAILABLE + "."
)


# ---- the calls ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GeminiCall:
    """One function call of a reply, apart from the SDK's objects.

    Attributes:
        name: the function's name.
        args: its arguments, as the model gave them.
        id: the call's id where the server gives one (echoed in its response).
    """

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None

    def describe(self) -> str:
        """The call in a line, e.g. ``click_at(x=500, y=250)``."""
        shown = ", ".join(
            f"{key}={json.dumps(value, ensure_ascii=False, default=str)[:MAX_SHOWN_ARG]}"
            for key, value in self.args.items()
        )
        return f"{self.name}({shown})"


def call_actions(call: GeminiCall, coords: CoordSpace) -> list[dict[str, Any]]:
    """The benchmark actions (screen pixels) one Gemini function call stands for, in order.

    ``coords`` is the model's space: ``norm1000`` over the image it was shown.

    Raises:
        ActionError: the benchmark cannot perform the call (an excluded or unknown function,
            a missing or bad argument, a point outside the space or on the padding); the
            message says what was expected.
    """
    args = {key: value for key, value in call.args.items() if key != "safety_decision"}
    name = call.name
    if name == "click_at":
        x, y = _point(args, name, coords)
        actions = [{"type": "click", "x": x, "y": y}]
    elif name == "type_text_at":
        x, y = _point(args, name, coords)
        text = args.get("text")
        if not isinstance(text, str):
            raise ActionError(f"type_text_at needs 'text', a string; got {_shown(text)}")
        actions = [{"type": "click", "x": x, "y": y}]
        if _flag(args, "clear_before_typing", name, default=True):
            actions += [{"type": "key", "key": "Control+a"}, {"type": "key", "key": "Backspace"}]
        if text:
            actions.append({"type": "type", "text": text})
        if _flag(args, "press_enter", name, default=True):
            actions.append({"type": "key", "key": "Enter"})
    elif name == "key_combination":
        actions = [{"type": "key", "key": gemini_key(args.get("keys"))}]
    elif name == "scroll_document":
        direction = _direction(args, name)
        actions = [{"type": "scroll", "direction": direction, "amount": DOCUMENT_SCROLL_NOTCHES}]
    elif name == "scroll_at":
        _point(args, name, coords)  # checked, though the pointer cannot move there
        direction = _direction(args, name)
        magnitude = _number(args, "magnitude", name, default=SCROLL_AT_MAGNITUDE)
        if magnitude <= 0:
            raise ActionError(
                f"scroll_at needs a magnitude above 0 (thousandths of the image's height), "
                f"got {magnitude:g}"
            )
        actions = [
            {"type": "scroll", "direction": direction, "amount": _notches(magnitude, coords)}
        ]
    elif name == "wait_5_seconds":
        actions = [{"type": "wait", "seconds": WAIT_5_SECONDS}]
    elif name == "wait":
        actions = [{"type": "wait", "seconds": _number(args, "seconds", name)}]
    elif name == "speak":
        actions = [{"type": "speak", "text": args.get("text")}]
    elif name == "done":
        actions = [{"type": "done"}]
    elif name in EXCLUDED_FUNCTIONS:
        raise ActionError(
            f"{name} is not available here: the browser stays on the task's page and the pointer "
            f"moves only by clicking; call one of: {AVAILABLE}"
        )
    else:
        raise ActionError(f"there is no function {_shown(name)}; call one of: {AVAILABLE}")
    for action in actions:
        try:
            validate_action(action)
        except ActionError as e:
            raise ActionError(f"{name}: {e}") from None
    return actions


def gemini_key(keys: Any) -> str:
    """A ``key_combination`` argument (``"control+a"``, ``"Enter"``, a list) in our spelling.

    A letter pressed with Control, Alt or Meta is written in lower case (``Control+a``), as the
    benchmark's key vocabulary has it.

    Raises:
        ActionError: not a key combination.
    """
    if isinstance(keys, (list, tuple)) and all(isinstance(k, str) for k in keys):
        keys = "+".join(keys)
    if not isinstance(keys, str):
        raise ActionError(f"key_combination needs 'keys', such as 'Control+A'; got {_shown(keys)}")
    combo = normalize_key(keys.strip())
    parts = combo.split("+")
    last = parts[-1]
    if len(parts) > 1 and len(last) == 1 and {"Control", "Alt", "Meta"} & set(parts[:-1]):
        combo = "+".join([*parts[:-1], last.lower()])
    return combo


def _shown(value: Any) -> str:
    return repr(value)[:MAX_SHOWN_ARG]


def _number(args: Mapping[str, Any], key: str, name: str, default: float | None = None) -> float:
    value = args.get(key, default)
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ActionError(f"{name} needs a number for {key!r}, got {_shown(value)}")
    return float(value)


def _point(args: Mapping[str, Any], name: str, coords: CoordSpace) -> tuple[int, int]:
    x, y = _number(args, "x", name), _number(args, "y", name)
    try:
        return coords.to_screen(x, y)
    except ActionError as e:
        raise ActionError(f"{name}: {e}") from None


def _flag(args: Mapping[str, Any], key: str, name: str, default: bool) -> bool:
    value = args.get(key, default)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if not isinstance(value, bool):
        raise ActionError(f"{name} needs true or false for {key!r}, got {_shown(value)}")
    return value


def _direction(args: Mapping[str, Any], name: str) -> str:
    direction = args.get("direction")
    if isinstance(direction, str) and direction.strip().lower() in ("up", "down"):
        return direction.strip().lower()
    raise ActionError(
        f"{name} scrolls 'up' or 'down' only (the page has no horizontal scroll here); "
        f"got direction {_shown(direction)}"
    )


def _notches(magnitude: float, coords: CoordSpace) -> int:
    """Wheel notches for ``magnitude`` thousandths of the image's height."""
    fit = coords.fit
    screen_px = magnitude / 1000 * fit.size[1] * SCREEN_HEIGHT / fit.content[1]
    return max(1, min(MAX_SCROLL, round(screen_px / SCROLL_NOTCH_PX)))


# ---- the conversation ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Answer:
    """The function response owed to one call."""

    name: str
    id: str | None
    response: dict[str, Any]


@dataclass
class _Reply:
    """One model answer, read."""

    content: Any  # the candidate's Content (None when there was none), sent back as it came
    calls: list[GeminiCall]
    text: str
    note: str  # why there is no content or the answer stopped early ("" when it did not)

    @property
    def summary(self) -> str:
        """The reply in short: its text, then its calls, a line each."""
        lines = [self.text] if self.text else []
        lines += [call.describe() for call in self.calls]
        if self.note:
            lines.append(f"({self.note})")
        return "\n".join(lines) or "(empty reply)"

    @property
    def has_parts(self) -> bool:
        """Whether the reply can be sent back as a model turn."""
        return bool(self.content is not None and self.content.parts)


@dataclass
class _Step:
    """One step's request as it grows, and the exchanges it leaves for history.

    Attributes:
        contents: what the next request sends.
        user: the user turn the next model turn answers, as history keeps it (no images).
        kept: (user turn, model turn, responses owed to its calls) of each reply that can be
            sent back, for history.
    """

    contents: list[Any]
    user: Any
    kept: list[tuple[Any, Any, list[_Answer]]] = field(default_factory=list)


# Long (~270 lines): 85 document and check its options; the rest build turns of the SDK's types.
class GeminiComputerAgent(ComputerUseAgent):
    """Drives the benchmark through Gemini's computer-use tool (see the module docstring).

    Args:
        model: a model that has the computer-use tool.
        base_url: the server; defaults to ``GOOGLE_GEMINI_BASE_URL``, then to the SDK's own.
        api_key: the key; defaults to ``GEMINI_API_KEY``, then ``GOOGLE_API_KEY``.
        max_tokens: the longest reply, in tokens (thinking's budget comes on top).
        temperature: the sampling temperature.
        timeout_s: seconds one HTTP request may take.
        image_size: the image the model sees (:meth:`ImageFit.parse`): ``"full"``, a long side
            (``"1024"``) or a size the screen is scaled into and padded (``"1000x1000"``);
            None is ``"full"``. The model's 0-999 coordinates are over that image.
        max_keyframes: send only the last this many keyframes of a step (None: all).
        history: 0 for one fresh user turn per step; K to keep the last K exchanges, images
            only in the newest turn.
        http_retries: retries of a request answered 429 or 5xx (done here, not by the SDK).
        reasoning_effort: ``minimal``, ``low``, ``medium`` or ``high``: a thinking budget of
            :data:`~dynacu_agents.llm.THINKING_BUDGETS` tokens; None sends none.

    Raises:
        ValueError: a missing key or an out-of-range argument.
        DependencyNotInstalled: ``google-genai`` is not installed.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int = 1024,
        temperature: float = 0.0,
        timeout_s: float = 120.0,
        image_size: str | ImageFit | None = "full",
        max_keyframes: int | None = None,
        history: int = 0,
        http_retries: int = 2,
        reasoning_effort: str | None = None,
    ) -> None:
        check_model(model)
        check_reasoning_effort(reasoning_effort)
        check_max_keyframes(max_keyframes)
        if isinstance(history, bool) or not isinstance(history, int) or history < 0:
            raise ValueError(f"expected history >= 0 (exchanges kept), got {history!r}")
        check_http_retries(http_retries)
        if not max_tokens >= 1:
            raise ValueError(f"expected max_tokens >= 1, got {max_tokens!r}")
        if not timeout_s > 0:
            raise ValueError(f"expected timeout_s > 0, got {timeout_s!r}")
        genai = import_sdk("google.genai", NO_SDK)
        self._errors = import_sdk("google.genai.errors", NO_SDK)
        self._types = types = import_sdk("google.genai.types", NO_SDK)
        key = given_or_env(api_key, *KEY_ENV)
        if not key:
            raise ValueError(
                f"the Gemini API needs a key: set {' or '.join(KEY_ENV)}, or pass api_key"
            )
        fit = ImageFit() if image_size is None else image_fit(image_size)
        super().__init__(
            model=model,
            max_tokens=max_tokens,
            temperature=temperature,
            timeout_s=timeout_s,
            coords=CoordSpace("norm1000", fit),
            max_keyframes=max_keyframes,
            http_retries=http_retries,
            reasoning_effort=reasoning_effort,
        )
        self.base_url = (given_or_env(base_url, BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
        self.history = history
        self.system_instruction = system_instruction(fit)
        # The documented tool where the SDK has it, else the same functions declared plainly.
        self.native_tool = hasattr(types, "ComputerUse") and hasattr(types, "Environment")
        self._images_in_responses = hasattr(types, "FunctionResponsePart")
        self._client = genai.Client(
            api_key=key,
            vertexai=False,
            http_options=types.HttpOptions(
                base_url=self.base_url,
                api_version=API_VERSION,
                timeout=max(1, round(timeout_s * 1000)),
            ),
        )
        self._config = self._generate_config()
        self._unreachable: tuple[type[BaseException], ...] = (OSError, *_transport_errors())

    @property
    def url(self) -> str:
        """Where requests go."""
        return f"{self.base_url}/{API_VERSION}/models/{self.model}:generateContent"

    def _clear_conversation(self) -> None:
        self._exchanges: list[tuple[Any, Any]] = []  # (user Content, model Content), oldest first
        self._pending: list[_Answer] = []  # responses owed to the last kept model turn's calls

    # ---- one step -----------------------------------------------------------------------------

    def _open_step(self, observation: dict[str, Any]) -> _Step:
        context = self._context(observation)
        newest = self._observation_turn(observation, self._pending if context else [])
        return _Step([*context, newest], _stripped(self._types, newest, self.instruction))

    def _send(self, step: _Step, cost: StepCost) -> _Reply:
        return self._generate(step.contents, cost)

    def _add_retry_turn(self, step: _Step, reply: _Reply, plan: Plan) -> None:
        """Answer the calls and ask again: after the model turn, or in the same user turn.

        A reply with no parts cannot be sent back as a model turn, so the prompt joins the
        step's user turn instead.
        """
        types = self._types
        prompt = (BAD_CALL_PROMPT if reply.calls else NO_CALL_PROMPT).format(error=plan.error)
        if reply.has_parts:
            retry_turn = types.Content(
                role="user",
                parts=[*_response_parts(types, plan.answers), types.Part(text=prompt)],
            )
            step.kept.append((step.user, reply.content, plan.answers))
            step.contents += [reply.content, retry_turn]
            step.user = retry_turn
        else:
            newest = step.contents[-1]
            step.contents[-1] = types.Content(
                role="user", parts=[*newest.parts, types.Part(text=prompt)]
            )

    def _close_step(self, step: _Step, reply: _Reply, plan: Plan) -> None:
        """Keep the step's exchanges (images left out) and the responses the last one is owed.

        A reply with nothing to send back is not kept; the responses owed to the model turn
        before it then stay owed.
        """
        if not self.history:
            return
        if reply.has_parts:
            step.kept.append((step.user, reply.content, plan.answers))
        for user, model, answers in step.kept:
            self._exchanges.append((user, model))
            self._pending = answers
        del self._exchanges[: -self.history]

    def _plan(self, reply: _Reply) -> Plan:
        """The actions of a reply's calls, the responses they are owed, or why none can be taken."""
        if not reply.calls:
            why = "the reply has no function call"
            if reply.note:
                why += f" ({reply.note})"
            return Plan([], [], why)
        actions: list[dict[str, Any]] = []
        answers: list[_Answer] = []
        errors: list[str] = []
        for call in reply.calls:
            try:
                if _needs_confirmation(call):
                    raise ActionError(
                        f"{call.name} asks for a person's confirmation, and no one is here to "
                        "give it: the call was not performed; do the task another way"
                    )
                actions += call_actions(call, self.coords)
            except ActionError as e:
                errors.append(str(e))
                answers.append(_answer(call, {"error": str(e)}))
            else:
                answers.append(_answer(call, {}))
        if errors:
            refused = {"error": "not performed, since another call of this reply cannot be"}
            answers = [
                a if "error" in a.response else _Answer(a.name, a.id, {**a.response, **refused})
                for a in answers
            ]
            return Plan([], answers, "; ".join(errors))
        narration = reply.text[:MAX_NARRATION].strip()
        if narration:
            actions[0] = {**actions[0], "narration": narration}
        return Plan(actions, answers)

    # ---- the turns ----------------------------------------------------------------------------

    def _context(self, observation: dict[str, Any]) -> list[Any]:
        """The kept exchanges, the oldest user turn replaced by the task's text."""
        if not self._exchanges:
            return []
        types = self._types
        task = self.instruction or str(observation.get("instruction", ""))
        turns = [types.Content(role="user", parts=[types.Part(text=f"The task: {task}")])]
        for i, (user, model) in enumerate(self._exchanges):
            if i:
                turns.append(user)
            turns.append(model)
        return turns

    def _observation_turn(self, observation: dict[str, Any], answers: list[_Answer]) -> Any:
        """The newest user turn: responses to the previous calls, the record, the images.

        The screenshot goes in the last computer-use response where there is one (as the
        protocol has it), else beside the record as an image of its own.
        """
        types = self._types
        pieces = observation_parts(observation, self.coords.fit, self.max_keyframes)
        screenshot = next(i for i, piece in enumerate(pieces) if piece.png)
        target = None
        if self._images_in_responses:
            target = next(
                (
                    i
                    for i in range(len(answers) - 1, -1, -1)
                    if answers[i].name in COMPUTER_FUNCTIONS
                ),
                None,
            )
        image = pieces[screenshot].png if target is not None else ""
        parts = _response_parts(types, answers, image, target)
        for i, piece in enumerate(pieces):
            if target is not None and i == screenshot:
                continue
            if target is not None and i == screenshot - 1:
                name = answers[target].name
                parts.append(
                    types.Part(text=f"{piece.text.rstrip(':')}: the image of the {name} response.")
                )
                continue
            parts.append(_part(types, piece))
        return types.Content(role="user", parts=parts)

    # ---- the wire -----------------------------------------------------------------------------

    def _generate_config(self) -> Any:
        types = self._types
        budget = THINKING_BUDGETS[self.reasoning_effort] if self.reasoning_effort else 0
        return types.GenerateContentConfig(
            system_instruction=self.system_instruction,
            max_output_tokens=self.max_tokens + budget,
            temperature=self.temperature,
            tools=_tools(types, self.native_tool),
            thinking_config=types.ThinkingConfig(thinking_budget=budget) if budget else None,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )

    def _generate(self, contents: list[Any], cost: StepCost) -> _Reply:
        """One request (retried on 429 and 5xx); the reply, read, its cost added to ``cost``."""
        errors = self._errors
        for attempt in range(self.http_retries + 1):
            cost.calls += 1
            try:
                with timed(cost):
                    response = self._client.models.generate_content(
                        model=self.model, contents=contents, config=self._config
                    )
            except errors.APIError as e:
                code = int(e.code or 0)
                message = str(e.message or e.details or "(no message)")[:MAX_ERROR_CHARS]
                text = f"{self.url} answered HTTP {code} {e.status or ''}".rstrip()
                text = f"{text}: {message}"
                retry = code in RETRY_STATUSES or 500 <= code < 600
                if retry and attempt < self.http_retries:
                    time.sleep(BACKOFF_S * 2**attempt)
                    continue
                raise http_error(text, code, retried=RETRY_STATUSES) from e
            except self._unreachable as e:
                raise LLMError(f"cannot reach the model server at {self.url}: {e}") from e
            except ValueError as e:  # an answer the SDK could not read
                raise LLMError(
                    f"{self.url} answered with something that is not a reply: "
                    f"{str(e)[:MAX_ERROR_CHARS]}"
                ) from e
            return _read_reply(response, cost)
        raise AssertionError("unreachable: the last attempt returns or raises")


def _response_parts(
    types: Any, answers: list[_Answer], image: str = "", target: int | None = None
) -> list[Any]:
    """``function_response`` parts for ``answers``; answer ``target`` carries ``image``."""
    parts = []
    for i, answer in enumerate(answers):
        response = types.FunctionResponse(id=answer.id, name=answer.name, response=answer.response)
        if image and i == target:
            blob = types.FunctionResponseBlob(mime_type="image/png", data=base64.b64decode(image))
            response.parts = [types.FunctionResponsePart(inline_data=blob)]
        parts.append(types.Part(function_response=response))
    return parts


def _stripped(types: Any, turn: Any, task: str) -> Any:
    """``turn`` as history keeps it: its function responses, without their images.

    A turn without any (the first) becomes the ``task``'s text.
    """
    parts = [
        types.Part(
            function_response=types.FunctionResponse(
                id=part.function_response.id,
                name=part.function_response.name,
                response=part.function_response.response,
            )
        )
        for part in turn.parts
        if part.function_response is not None
    ]
    if not parts:  # the first turn; the oldest kept turn becomes the task's text anyway
        parts = [types.Part(text=f"The task: {task}")]
    return types.Content(role="user", parts=parts)


def _answer(call: GeminiCall, result: dict[str, Any]) -> _Answer:
    """The response owed to ``call``: ``result``, the page's URL beside a computer-use one's."""
    if call.name in COMPUTER_FUNCTIONS or call.name in EXCLUDED_FUNCTIONS:
        response = {"url": PAGE_URL, **result}
    else:
        response = result or {"output": "performed"}
    return _Answer(call.name, call.id, response)


def _part(types: Any, piece: MessagePart) -> Any:
    """A message part as the SDK's ``Part``: a PNG's bytes, or the text."""
    if piece.png:
        return types.Part.from_bytes(data=base64.b64decode(piece.png), mime_type="image/png")
    return types.Part(text=piece.text)


def _read_reply(response: Any, cost: StepCost) -> _Reply:
    """The calls and text of the first candidate; the usage added to ``cost``."""
    usage = response.usage_metadata
    if usage is not None:
        cost.input_tokens += int(usage.prompt_token_count or 0)
        cost.output_tokens += int(usage.candidates_token_count or 0)
        cost.reasoning_tokens += int(usage.thoughts_token_count or 0)
    if not response.candidates:
        feedback = response.prompt_feedback
        reason = getattr(feedback, "block_reason", None) if feedback is not None else None
        note = f"no candidate; block reason {_enum_name(reason)}" if reason else "no candidate"
        return _Reply(None, [], "", note)
    candidate = response.candidates[0]
    finish = _enum_name(candidate.finish_reason)
    note = f"finish reason {finish}" if finish not in ("", "STOP") else ""
    content = candidate.content
    parts = list(content.parts or []) if content is not None else []
    texts = [p.text for p in parts if p.text and not p.thought]
    calls = [
        GeminiCall(p.function_call.name or "", dict(p.function_call.args or {}), p.function_call.id)
        for p in parts
        if p.function_call is not None
    ]
    return _Reply(content, calls, "\n".join(texts).strip(), note)


def _tools(types: Any, native_tool: bool) -> list[Any]:
    """The request's tools: computer use (or its functions declared plainly), then ours."""
    custom = [
        types.FunctionDeclaration(
            name="speak",
            description=(
                "Say the text aloud: the page hears it. Only when the task says to answer aloud."
            ),
            parameters=_schema(types, {"text": ("STRING", "the words to say")}),
        ),
        types.FunctionDeclaration(
            name="wait",
            description=(
                f"Let up to {MAX_WAIT_S:g} seconds pass, to see or hear more; the page goes on."
            ),
            parameters=_schema(types, {"seconds": ("NUMBER", f"0 to {MAX_WAIT_S:g}")}),
        ),
        types.FunctionDeclaration(
            name="done", description="End the task; the page's verdict then stands."
        ),
    ]
    if not native_tool:
        return [types.Tool(function_declarations=[*_computer_declarations(types), *custom])]
    return [
        types.Tool(
            computer_use=types.ComputerUse(
                environment=types.Environment.ENVIRONMENT_BROWSER,
                excluded_predefined_functions=list(EXCLUDED_FUNCTIONS),
            )
        ),
        types.Tool(function_declarations=custom),
    ]


def _needs_confirmation(call: GeminiCall) -> bool:
    decision = call.args.get("safety_decision")
    if isinstance(decision, Mapping):
        decision = decision.get("decision")
    return isinstance(decision, str) and decision.strip().lower() == "require_confirmation"


def _enum_name(value: Any) -> str:
    if value is None:
        return ""
    return str(getattr(value, "name", value))


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The SDK's HTTP clients' errors for a request that got no answer (refused, timed out)."""
    found: list[type[BaseException]] = []
    for name in ("httpx", "httpx2"):  # the SDK's synchronous client is either
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        error = getattr(module, "TransportError", None)
        if isinstance(error, type) and issubclass(error, BaseException):
            found.append(error)
    return tuple(found)


def _schema(
    types: Any,
    required: dict[str, tuple[str, str]],
    optional: dict[str, tuple[str, str]] | None = None,
) -> Any:
    """An object schema; each property is a (type name, description) pair."""
    properties = {**required, **(optional or {})}
    return types.Schema(
        type=types.Type.OBJECT,
        properties={
            key: types.Schema(type=types.Type(kind), description=description)
            for key, (kind, description) in properties.items()
        },
        required=list(required),
    )


def _computer_declarations(types: Any) -> list[Any]:
    """The computer-use functions as plain declarations, for an SDK without the tool."""
    x = ("INTEGER", f"0 (left edge) to {NORM_TOP} (right edge) of the screenshot")
    y = ("INTEGER", f"0 (top) to {NORM_TOP} (bottom) of the screenshot")
    direction = ("STRING", "up or down")
    flag = ("BOOLEAN", "default true")
    magnitude = ("INTEGER", f"1 to {NORM_TOP}, default {SCROLL_AT_MAGNITUDE}")

    def declare(name: str, description: str, parameters: Any = None) -> Any:
        return types.FunctionDeclaration(name=name, description=description, parameters=parameters)

    return [
        declare("click_at", "Click at (x, y).", _schema(types, {"x": x, "y": y})),
        declare(
            "type_text_at",
            "Click at (x, y), clear the field unless clear_before_typing is false, type the "
            "text, then press Enter unless press_enter is false.",
            _schema(
                types,
                {"x": x, "y": y, "text": ("STRING", "the text to type")},
                {"press_enter": flag, "clear_before_typing": flag},
            ),
        ),
        declare(
            "key_combination",
            "Press a key or a combination, such as Enter or Control+A.",
            _schema(types, {"keys": ("STRING", "the key or keys joined by +")}),
        ),
        declare(
            "scroll_document",
            "Scroll a screen's height up or down where the pointer last clicked.",
            _schema(types, {"direction": direction}),
        ),
        declare(
            "scroll_at",
            "Scroll up or down by magnitude thousandths of the screenshot's height (default "
            f"{SCROLL_AT_MAGNITUDE}), where the pointer last clicked.",
            _schema(types, {"x": x, "y": y, "direction": direction}, {"magnitude": magnitude}),
        ),
        declare("wait_5_seconds", "Let 5 seconds pass."),
    ]
