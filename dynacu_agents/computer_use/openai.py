"""An agent that drives the benchmark through OpenAI's computer-use tool (the Responses API).

The model gets the ``computer_use_preview`` tool, declared at the size of the image it is
shown, and a function tool, ``benchmark``, for what a computer tool cannot do here: speak,
wait a given time, and end the task. It answers with output items: ``computer_call`` (one
action, or a batch in ``actions``), ``function_call``, ``message`` (its text is kept as the
action's narration) and ``reasoning``. Every call is answered when the conversation goes on:
a ``computer_call_output`` with the screenshot seen after the call (its pending safety checks
acknowledged: the page is a sandbox), a ``function_call_output`` with what was done.

Layout of what follows:

- the mapping of the model's actions onto the benchmark's (:func:`cua_action`,
  :func:`cua_key`, :func:`benchmark_action`);
- the instructions and the tools of every request;
- :class:`OpenAIComputerAgent`, on the step loop of
  :class:`~dynacu_agents.computer_use.base.ComputerUseAgent`: one request per step (a second
  one when the reply is unusable), the calls of a reply run one per env step, and the history
  kept in one of two ways, ``"server"`` (``previous_response_id``) or the last K exchanges
  sent again (``store`` off, reasoning carried as encrypted content);
- the input items of a step (the user message, the calls' outputs, the history sent again)
  and the reading of a response's output.

Every request carries the observation record (the task, the prior actions, transcripts, the
keyframe list, narration, page elements) beside the screenshot, so the record's channels reach
this model too. Coordinates are pixels of the image sent (:class:`~dynacu_agents.coords.ImageFit`)
and are mapped back to screen pixels; a point outside it is a mistake told to the model.

A step's info (:meth:`~dynacu_agents.computer_use.base.ComputerUseAgent.act`) always holds
``reasoning_tokens``, and its ``reply`` is the output items in a line.

A refused request (HTTP 4xx but 429) raises :class:`~dynacu_agents.llm.ModelRefused`, the
agent's failure; 429 and 5xx are retried by the SDK, and a server that cannot be reached, or
retries that run out, raise :class:`~dynacu_agents.llm.LLMError`, an infrastructure fault.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dynacu_agents.computer_use.base import (
    SDK_RETRY_STATUSES,
    ComputerUseAgent,
    Plan,
    StepProgress,
    check_http_retries,
    check_max_keyframes,
    check_model,
    check_reasoning_effort,
    given_or_env,
    http_error,
    image_fit,
    import_sdk,
    sdk_retries,
    timed,
)
from dynacu_agents.coords import CoordSpace, ImageFit
from dynacu_agents.llm import (
    MAX_ERROR_CHARS,
    LLMError,
    MessagePart,
    StepCost,
    add_usage,
    observation_parts,
    png_of,
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
    to_charset,
    validate_action,
)

DEFAULT_MODEL = "computer-use-preview"
KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
NO_KEY = "unused"  # the SDK wants some key; a local server given by base_url may ignore it
REASONING_SUMMARIES = ("auto", "concise", "detailed")
FUNCTION_NAME = "benchmark"  # the function tool that speaks, waits and ends the task
COMPUTER_CALL = "computer_call"
FUNCTION_CALL = "function_call"
# The type of a computer_call_output's screenshot, as the API reference and the SDK's types
# name it (early versions of the guide sent "input_image").
SCREENSHOT_TYPE = "computer_screenshot"
IMAGE_DETAIL = "high"  # images in user messages: full resolution, so coordinates stay exact
# The computer tool's wait names no duration. Two seconds is about the pause a person takes for
# a page to settle; a longer one is the benchmark function's wait, which names its seconds.
CUA_WAIT_S = 2.0
SDK_RETRIED = SDK_RETRY_STATUSES  # the statuses below 500 the SDK retries
MAX_REPLY_CHARS = 1000  # characters of the reply summary kept in the step's info
QUEUED = "(queued: the next call of the last reply)"  # the reply of a step that asked nothing
NO_SDK = 'the OpenAI computer-use agent needs the openai SDK: pip install "dynacu-gym[openai]"'
UNAVAILABLE = {
    "double_click": "double_click",
    "drag": "drag",
    "move": "move (the mouse is moved only by clicks)",
}
AVAILABLE = (
    "the computer actions click (left button, no keys held), type, keypress, scroll (vertical), "
    "wait and screenshot, and the benchmark function: speak (say text aloud), wait (a number "
    "of seconds) and done (end the task)"
)
# Keys the computer tool names that normalize_key does not know.
_CUA_KEYS = {
    "win": "Meta",
    "windows": "Meta",
    "pgup": "PageUp",
    "pgdn": "PageDown",
    "ins": "Insert",
    " ": "Space",
}


# ---- the model's actions as the benchmark's -------------------------------------------------


def _number(value: Any, name: str) -> float:
    """``value`` as a finite float, or the mistake of a value that is none."""
    number = math.nan
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an int past any float
            pass
    if not math.isfinite(number):
        raise ActionError(f"expected a finite number for {name!r}, got {value!r:.60}")
    return number


def cua_key(keys: Any) -> str:
    """The benchmark's key combination for a ``keypress``'s keys, e.g. ``["CTRL", "A"]``.

    The computer tool spells keys in capitals (``CTRL``, ``ENTER``, ``PAGEDOWN``, ``A``): a
    single letter is taken as its key, lower case (an upper case letter is typed with ``type``
    or pressed with ``SHIFT`` in the combination).

    Raises:
        ActionError: not a non-empty list of key names, or a name that is no key.
    """
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k for k in keys):
        raise ActionError(
            f"expected keypress keys as a list of key names such as ['CTRL', 'A'], got {keys!r:.60}"
        )
    names = []
    for key in keys:
        name = _CUA_KEYS.get(str(key).lower(), str(key))
        if len(name) == 1 and name.isalpha():
            name = name.lower()
        names.append(name)
    return normalize_key("+".join(names))


def cua_action(action: Any, coords: CoordSpace) -> dict[str, Any]:
    """The benchmark action (screen pixels) for one action of a ``computer_call``.

    - ``click`` with the left button: a click at the point mapped from ``coords``;
    - ``type``: type the text; ``keypress``: the key combination (:func:`cua_key`);
    - ``scroll``: ``scroll_y`` pixels rounded to wheel notches of ``SCROLL_NOTCH_PX`` (at
      least one, at most ``MAX_SCROLL``), down when positive. The env scrolls where the mouse
      is and has no mouse move, so the action's point is ignored;
    - ``wait``: ``CUA_WAIT_S`` seconds (the action names no duration);
    - ``screenshot``: a wait of 0 s (every observation brings a fresh screenshot).

    Raises:
        ActionError: an action the benchmark lacks (``double_click``, ``drag``, ``move``, a
            button other than the left, keys held, a horizontal scroll) or a bad value (a
            point outside ``coords``, a key that is no key); the message says what is wrong.
    """
    if not isinstance(action, Mapping):
        raise ActionError(f"expected a computer action object, got {action!r:.60}")
    kind = action.get("type")
    if kind in ("click", "scroll") and action.get("keys"):
        raise ActionError(f"{kind} with keys held ({action['keys']!r:.40}) is not available")
    if kind == "click":
        button = action.get("button", "left")
        if button != "left":
            raise ActionError(f"a {button!r:.20} click is not available; only the left button")
        x: Any = action.get("x")
        y: Any = action.get("y")
        x, y = coords.to_screen(x, y)
        return {"type": "click", "x": x, "y": y}
    if kind == "type":
        text = action.get("text")
        if not isinstance(text, str):
            raise ActionError(f"expected the text to type as a string, got {text!r:.60}")
        return {"type": "type", "text": text}
    if kind == "keypress":
        return {"type": "key", "key": cua_key(action.get("keys"))}
    if kind == "scroll":
        dy = _number(action.get("scroll_y", 0), "scroll_y")
        dx = _number(action.get("scroll_x", 0), "scroll_x")
        if dy == 0:
            what = "horizontal scrolling is" if dx else "a scroll of 0 pixels is"
            raise ActionError(f"{what} not available; give scroll_y (pixels, positive: down)")
        notches = min(MAX_SCROLL, max(1, round(abs(dy) / SCROLL_NOTCH_PX)))
        return {"type": "scroll", "direction": "down" if dy > 0 else "up", "amount": notches}
    if kind == "wait":
        return {"type": "wait", "seconds": CUA_WAIT_S}
    if kind == "screenshot":
        return {"type": "wait", "seconds": 0.0}
    if kind in UNAVAILABLE:
        raise ActionError(f"{UNAVAILABLE[kind]} is not available")
    raise ActionError(f"unknown computer action type {kind!r:.40}")


def benchmark_action(arguments: Any) -> dict[str, Any]:
    """The benchmark action for a call of the ``benchmark`` function (its JSON arguments).

    ``{"action": "speak", "text": ...}``, ``{"action": "wait", "seconds": ...}`` or
    ``{"action": "done"}``.

    Raises:
        ActionError: arguments that are not a JSON object naming one of these.
    """
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        args = None
    if not isinstance(args, Mapping):
        raise ActionError(
            f"expected the {FUNCTION_NAME} function's arguments as a JSON object, "
            f"got {arguments!r:.80}"
        )
    what = args.get("action")
    if what == "speak":
        text = args.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ActionError(f"speak needs the words to say in 'text', got {text!r:.60}")
        return {"type": "speak", "text": text}
    if what == "wait":
        return {"type": "wait", "seconds": _number(args.get("seconds"), "seconds")}
    if what == "done":
        return {"type": "done"}
    raise ActionError(
        f"expected the {FUNCTION_NAME} function's 'action' to be speak, wait or done, "
        f"got {what!r:.40}"
    )


def _call_actions(item: Mapping[str, Any], coords: CoordSpace) -> list[dict[str, Any]]:
    """The benchmark actions of one call of a reply (a computer call may hold a batch).

    Raises:
        ActionError: an action that cannot be performed, or a function other than ours.
    """
    if item.get("type") == FUNCTION_CALL:
        if item.get("name") != FUNCTION_NAME:
            raise ActionError(
                f"there is no function {item.get('name')!r:.40}; the one function is "
                f"{FUNCTION_NAME!r}"
            )
        return [benchmark_action(item.get("arguments"))]
    batch = item["actions"] if item.get("actions") is not None else [item.get("action")]
    if not isinstance(batch, list) or not batch:
        raise ActionError("a computer call with no action")
    return [cua_action(action, coords) for action in batch]


# ---- the instructions and the tools ---------------------------------------------------------


def instructions(coords: CoordSpace) -> str:
    """The instructions of every request: the screen, the record, the tools and the rules."""
    width, height = coords.fit.size
    where = (
        ""
        if coords.fit.size == (SCREEN_WIDTH, SCREEN_HEIGHT)
        else f" Positions in the record (prior actions, page elements) are {SCREEN_WIDTH}x"
        f"{SCREEN_HEIGHT} screen pixels; the computer tool's are pixels of the {width}x{height} "
        "display."
    )
    return f"""\
You operate a web page in a Chromium browser, as a person at a computer would. The page runs \
in real time: sound plays, content changes and time passes while you think.

The computer tool's display is {width}x{height} pixels. {coords.describe()}{where}

Each turn brings the observation record (the task, your prior actions, any audio transcript, \
the list of keyframes, the page's elements where it has them, and your narration notes), the \
current screenshot (in your last computer call's output, or in the message), and the \
keyframes: frames of what the screen showed since your last action, each labelled with its \
time in seconds since the task started.

What the computer tool can do here: click (the left button; no keys held), type (into the \
focused field: click it first), keypress, scroll (vertically, at the mouse: the point you give \
is ignored; {SCROLL_NOTCH_PX} px a notch), wait ({CUA_WAIT_S:g} seconds) and screenshot. \
double_click, other buttons, drag and move are not available.

Call the {FUNCTION_NAME} function for the rest:
- speak: say the text aloud. Answer aloud only when the task says so.
- wait: let up to {MAX_WAIT_S:g} seconds pass, to hear or see more.
- done: end the task; the page's verdict then stands.

Every turn needs a tool call. Beside it, write one short message noting what you newly saw in \
the screenshot and keyframes that may matter later (numbers, names, messages that may vanish): \
it is kept as your narration and shown back in the [NARRATION] section after the frames are \
gone; each frame is shown to you only once.
"""


def tools(fit: ImageFit) -> list[dict[str, Any]]:
    """The computer tool at the size of the image sent, and the ``benchmark`` function."""
    width, height = fit.size
    return [
        {
            "type": "computer_use_preview",
            "display_width": width,
            "display_height": height,
            "environment": "browser",
        },
        {
            "type": "function",
            "name": FUNCTION_NAME,
            "description": (
                "Speak aloud (only when the task says to answer aloud), wait a number of "
                "seconds, or end the task (done)."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ["speak", "wait", "done"]},
                    "text": {"type": "string", "description": "speak: the words to say"},
                    "seconds": {
                        "type": "number",
                        "minimum": 0,
                        "maximum": MAX_WAIT_S,
                        "description": "wait: how long",
                    },
                },
                "required": ["action"],
                "additionalProperties": False,
            },
            "strict": False,
        },
    ]


# ---- the agent ------------------------------------------------------------------------------


@dataclass(eq=False)  # a call is itself: two calls alike are still two
class _Call:
    """A call of the model's, answered when the conversation goes on.

    Attributes:
        call_id: the id its output names.
        kind: ``computer_call`` or ``function_call``.
        safety_checks: the pending safety checks to acknowledge (computer calls).
        screenshot: base64 PNG of the screen after its last action; "" while it is the action
            being performed, or when it was not performed (answered with the screen now).
        performed: whether its actions were performed.
    """

    call_id: str
    kind: str
    safety_checks: list[dict[str, Any]] = field(default_factory=list)
    screenshot: str = ""
    performed: bool = False


@dataclass
class _Planned:
    """One benchmark action of a reply, and the call it came from."""

    action: dict[str, Any]
    call: _Call


@dataclass
class _Reply:
    """What one response's output means: the actions in order, or why it is unusable."""

    calls: list[_Call]
    planned: list[_Planned]
    narration: str
    error: str  # "" when the reply is usable
    summary: str


@dataclass
class _Step:
    """One step's exchange with the server, as it goes.

    Attributes:
        record: the observation record of the step.
        screenshot: base64 PNG of the screen now.
        answered: how many items of ``turn`` answer the last reply's calls.
        history: the items sent before the step's own (history K).
        turn: the step's items: the answers, the message, the outputs, any re-ask.
        items: the input items of the next request.
        previous_id: the response it goes on from (history "server").
        response: the last response, as JSON.
    """

    record: str
    screenshot: str
    answered: int
    history: list[dict[str, Any]]
    turn: list[dict[str, Any]]
    items: list[dict[str, Any]]
    previous_id: str | None
    response: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Exchange:
    """One step of explicit history: the record sent and what came of it.

    Attributes:
        record: the observation record of the step.
        items: the step's items, sent again verbatim while it is the latest exchange: its user
            message without images, the model's output items and any re-ask with its answers.
        summary: the step's final reply in words, sent as an assistant message once older.
    """

    record: str
    items: list[dict[str, Any]]
    summary: str


def _text(text: str) -> dict[str, Any]:
    return {"type": "input_text", "text": text}


def _image(png: str) -> dict[str, Any]:
    return {
        "type": "input_image",
        "image_url": f"data:image/png;base64,{png}",
        "detail": IMAGE_DETAIL,
    }


def _user(content: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": content}


def _message_text(item: Mapping[str, Any]) -> str:
    parts = item.get("content")
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return ""
    texts = []
    for part in parts:
        if isinstance(part, Mapping):
            text = part.get("text") if part.get("type") == "output_text" else part.get("refusal")
            if isinstance(text, str):
                texts.append(text)
    return "\n".join(texts)


def _summary(output: list[Any]) -> str:
    """The output items in a line: what the model did and said."""
    out = []
    for item in output:
        if not isinstance(item, Mapping):
            out.append(f"{item!r:.60}")
            continue
        kind = item.get("type")
        if kind == COMPUTER_CALL:
            actions = item["actions"] if "actions" in item else [item.get("action")]
            out.append(f"{COMPUTER_CALL} {json.dumps(actions, separators=(',', ':'))}")
        elif kind == FUNCTION_CALL:
            out.append(f"{FUNCTION_CALL} {item.get('name')}({item.get('arguments')})")
        elif kind == "message":
            out.append(f"message {_message_text(item)!r}")
        elif kind != "reasoning":
            out.append(str(kind))
    text = "; ".join(out) or "(no output items)"
    return text if len(text) <= MAX_REPLY_CHARS else text[: MAX_REPLY_CHARS - 1] + "\u2026"


# Long (~280 lines): 100 document and check its options; the rest serve two kinds of history.
class OpenAIComputerAgent(ComputerUseAgent):
    """Drives the benchmark through OpenAI's computer-use tool (see the module docstring).

    Args:
        model: the model, ``computer-use-preview`` by default.
        base_url: the server; defaults to ``OPENAI_BASE_URL``, then to the SDK's (the public
            API).
        api_key: the key; defaults to ``OPENAI_API_KEY``. A server given by ``base_url`` may
            need none.
        max_tokens: the longest reply, in tokens (``max_output_tokens``).
        temperature: the sampling temperature, sent only when given (the computer-use model
            takes none).
        timeout_s: seconds one HTTP request may take.
        image_size: the image the model sees (:meth:`ImageFit.parse`): ``"full"``, a long
            side (``"1024"``) or a size to pad into (``"1024x768"``). The computer tool's
            display is declared at its size and the model's points are its pixels.
        max_keyframes: send only the last this many keyframes of a step (None: all).
        history: ``"server"``: the server keeps the conversation (each request names the
            previous response and sends only the new items); an int K: the last K exchanges
            are sent again with every request (``store`` off; the newest verbatim, with the
            reasoning as encrypted content, older ones as text; images only in the new turn,
            and in the answers of a step whose first reply was asked again); 0: every step is
            a fresh conversation of one message (a reply asked again goes on from it).
        http_retries: retries of a request answered 429 or 5xx (the SDK's ``max_retries``).
        reasoning_effort: ``minimal``, ``low``, ``medium`` or ``high``; None sends none.
        reasoning_summary: ``auto``, ``concise`` or ``detailed`` to have the reasoning
            summarised; None asks for none.

    Raises:
        DependencyNotInstalled: the ``openai`` package is missing.
        ValueError: a missing key, or an argument out of range.
    """

    queued_reply = QUEUED

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int = 1024,
        temperature: float | None = None,
        timeout_s: float = 120.0,
        image_size: str | ImageFit = "full",
        max_keyframes: int | None = None,
        history: str | int = 0,
        http_retries: int = 2,
        reasoning_effort: str | None = None,
        reasoning_summary: str | None = None,
    ) -> None:
        openai = import_sdk("openai", NO_SDK)
        check_model(model)
        if isinstance(history, bool) or not (
            history == "server" or (isinstance(history, int) and history >= 0)
        ):
            raise ValueError(
                f"expected history 'server' or a number of exchanges >= 0, got {history!r}"
            )
        check_reasoning_effort(reasoning_effort)
        if reasoning_summary is not None and reasoning_summary not in REASONING_SUMMARIES:
            raise ValueError(
                f"expected reasoning_summary in {', '.join(REASONING_SUMMARIES)} or None, "
                f"got {reasoning_summary!r}"
            )
        check_max_keyframes(max_keyframes)
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"expected max_tokens >= 1, got {max_tokens!r}")
        if not timeout_s > 0:
            raise ValueError(f"expected timeout_s > 0, got {timeout_s!r}")
        check_http_retries(http_retries)
        url = given_or_env(base_url, BASE_URL_ENV)
        key = given_or_env(api_key, KEY_ENV)
        if key is None and url is None:
            raise ValueError(
                f"the OpenAI API needs a key: set {KEY_ENV} or pass api_key (a local server "
                "given by base_url may need none)"
            )
        if not isinstance(image_size, (str, ImageFit)):
            raise TypeError(
                f"expected image_size as a string such as 'full' or '1024', or an ImageFit, "
                f"got {type(image_size).__name__}"
            )
        fit = image_fit(image_size)
        super().__init__(
            model=model,
            max_tokens=max_tokens,
            temperature=temperature,
            timeout_s=timeout_s,
            coords=CoordSpace("image", fit),
            max_keyframes=max_keyframes,
            http_retries=http_retries,
            reasoning_effort=reasoning_effort,
        )
        self.base_url = url
        self.fit = fit
        self.history = history
        self.reasoning_summary = reasoning_summary
        self.instructions = instructions(self.coords)
        self.tools = tools(fit)
        self._openai = openai
        self._client = openai.OpenAI(
            api_key=key or NO_KEY, base_url=url, timeout=timeout_s, max_retries=http_retries
        )

    def _clear_conversation(self) -> None:
        self._current: _Call | None = None  # the call of the action returned last
        self._pending: list[_Call] = []  # the last reply's calls, to answer
        self._note = ""  # told to the model with the next observation
        self._previous_id: str | None = None  # history "server": the last response
        self._exchanges: list[_Exchange] = []  # history K: the last K steps

    # ---- a step ------------------------------------------------------------------------------

    def _take(self, planned: _Planned, observation: dict[str, Any]) -> dict[str, Any]:
        """``planned``'s action, to return now; its call becomes the current one."""
        self._finish_current(observation, planned.call)
        self._current = planned.call
        planned.call.performed = True
        return dict(planned.action)

    def _finish_current(self, observation: dict[str, Any], next_call: _Call | None) -> None:
        """Keep the screen after the current call's last action as that call's output.

        The screen after the call performed last is the one a request sends anyway: it is
        kept only when another call's action comes next.
        """
        call, self._current = self._current, None
        if call is None or call.kind != COMPUTER_CALL:
            return
        if next_call is not None and next_call is not call:
            call.screenshot = png_of(observation["screenshot"], self.fit)

    def _open_step(self, observation: dict[str, Any]) -> _Step:
        """The observation, after the answers to the last reply's calls where it goes on."""
        self._finish_current(observation, None)
        parts = observation_parts(observation, self.fit, self.max_keyframes)
        screenshot = parts[2].png  # the record, the screenshot's label and image, the keyframes
        continues = self._continues()
        answers, carried = _answers(self._pending, screenshot) if continues else ([], False)
        turn = [*answers, _message(observation, parts, carried, self._note)]
        history = _history_items(self._exchanges)  # none with history "server"
        previous = self._previous_id if continues else None
        items = [*history, *turn]
        return _Step(parts[0].text, screenshot, len(answers), history, turn, items, previous)

    def _add_retry_turn(self, step: _Step, reply: _Reply, plan: Plan) -> None:
        """Answer the reply's calls and ask again, going on from the response."""
        again, _ = _answers(reply.calls, step.screenshot)
        again.append(_user([_text(_reask(reply))]))
        if self.history == "server":
            step.items, step.previous_id = again, step.response["id"]
        else:
            step.items, step.previous_id = [*step.history, *step.turn, *again], None
        step.turn += again

    def _close_step(self, step: _Step, reply: _Reply, plan: Plan) -> None:
        """Keep what the next step goes on from, and the note of an unusable reply."""
        if self.history == "server":
            self._previous_id = step.response["id"]
        elif self.history:
            items = [_user([_text(step.record)]), *step.turn[step.answered + 1 :]]
            self._exchanges.append(_Exchange(step.record, items, reply.summary))
            del self._exchanges[: -int(self.history)]
        self._pending = reply.calls
        self._note = ""
        if reply.error:
            self._note = f"Nothing of your last reply was performed: {reply.error}"

    def _continues(self) -> bool:
        """Whether the next request goes on from the last one (its calls then need answers)."""
        if self.history == "server":
            return self._previous_id is not None
        return bool(self.history) and bool(self._exchanges)

    # ---- the reply ---------------------------------------------------------------------------

    def _plan(self, reply: _Reply) -> Plan:
        """The reply's actions, the first with its narration; none when a call is unusable."""
        if reply.error:
            return Plan([], reply.calls, reply.error)
        first, *rest = reply.planned
        if reply.narration:
            first = _Planned({**first.action, "narration": reply.narration}, first.call)
        return Plan([first, *rest], reply.calls)

    # ---- the wire ----------------------------------------------------------------------------

    def request(self, items: list[dict[str, Any]], previous_id: str | None) -> dict[str, Any]:
        """The arguments of ``responses.create`` for these input items."""
        body: dict[str, Any] = {
            "model": self.model,
            "instructions": self.instructions,
            "tools": self.tools,
            "input": items,
            "truncation": "auto",
            "max_output_tokens": self.max_tokens,
        }
        if self.history == "server":
            body["store"] = True
            if previous_id is not None:
                body["previous_response_id"] = previous_id
        else:
            # Nothing is kept on the server: the reasoning travels with the items sent again.
            body["store"] = False
            body["include"] = ["reasoning.encrypted_content"]
        if self.temperature is not None:
            body["temperature"] = self.temperature
        reasoning: dict[str, str] = {}
        if self.reasoning_effort is not None:
            reasoning["effort"] = self.reasoning_effort
        if self.reasoning_summary is not None:
            reasoning["summary"] = self.reasoning_summary
        if reasoning:
            body["reasoning"] = reasoning
        return body

    def _send(self, step: _Step, cost: StepCost) -> _Reply:
        """The step's next response, read; the items it output join the step's turn."""
        step.response = self._create(step.items, step.previous_id, cost)
        step.turn += step.response["output"]
        return _read_reply(step.response["output"], self.coords)

    def _create(
        self, items: list[dict[str, Any]], previous_id: str | None, cost: StepCost
    ) -> dict[str, Any]:
        """One response (the SDK retries 429 and 5xx), as JSON; its cost added to ``cost``."""
        openai = self._openai
        where = self.base_url or "the OpenAI API"
        try:
            with timed(cost):
                raw = self._client.responses.with_raw_response.create(
                    **self.request(items, previous_id)
                )
        except openai.APIStatusError as e:
            cost.calls += 1 + (self.http_retries if sdk_retries(e.status_code) else 0)
            text = f"{where} answered HTTP {e.status_code}: {_error_message(e)}"
            raise http_error(text, e.status_code, retried=SDK_RETRY_STATUSES) from e
        except openai.APIConnectionError as e:
            cost.calls += 1 + self.http_retries
            raise LLMError(f"cannot reach the model server at {where}: {e}") from e
        except openai.OpenAIError as e:
            cost.calls += 1
            raise LLMError(f"{where}: {type(e).__name__}: {e}") from e
        cost.calls += 1 + raw.retries_taken
        try:
            answer = raw.parse(to=dict)
        except (ValueError, TypeError, openai.OpenAIError) as e:
            raise LLMError(f"{where} answered with something that is not JSON: {e}") from e
        if not isinstance(answer, dict) or not isinstance(answer.get("output"), list):
            raise LLMError(
                f"{where} answered without a response's output: "
                f"{json.dumps(answer, default=str)[:MAX_ERROR_CHARS]}"
            )
        if answer.get("status") == "failed" or answer.get("error"):
            error = answer.get("error")
            message = error.get("message") if isinstance(error, Mapping) else error
            raise LLMError(f"{where} answered with a failed response: {message!r:.300}")
        if self.history == "server" and not isinstance(answer.get("id"), str):
            raise LLMError(f"{where} answered with a response without an id to continue from")
        usage = answer.get("usage")
        add_usage(cost, usage if isinstance(usage, dict) else {})
        return answer

    def _info(self, cost: StepCost, progress: StepProgress) -> dict[str, Any]:
        """A step's info, its reasoning tokens always among them."""
        return {
            "calls": cost.calls,
            "input_tokens": cost.input_tokens,
            "output_tokens": cost.output_tokens,
            "reasoning_tokens": cost.reasoning_tokens,
            "latency_s": round(cost.latency_s, 4),
            "retried": progress.retried,
            "reply": progress.reply,
            "parse_error": progress.parse_error,
        }

    def _refusal_info(self, cost: StepCost, progress: StepProgress) -> dict[str, Any]:
        """A refusal's info: the step's, as far as it got."""
        return self._info(cost, progress)


# ---- the input items and the output ---------------------------------------------------------


def _message(
    observation: dict[str, Any], parts: list[MessagePart], carried: bool, note: str
) -> dict[str, Any]:
    """The user message of a step.

    The record, any note, the screenshot (unless a computer call's output carries it) and
    the keyframes.
    """
    content = [_text(parts[0].text)]
    if note:
        content.append(_text(note))
    if carried:
        elapsed = float(observation.get("elapsed", 0.0))
        content.append(
            _text(
                "The screenshot in your computer call's output is the screen now "
                f"(t = {elapsed:.1f}s)."
            )
        )
    else:
        content += [_text(parts[1].text), _image(parts[2].png)]
    content += [_image(p.png) if p.png else _text(p.text) for p in parts[3:]]
    return _user(content)


def _answers(calls: list[_Call], screenshot: str) -> tuple[list[dict[str, Any]], bool]:
    """The outputs of ``calls``, and whether the screen now is among them.

    A computer call answers with the screen after its last action; the one performed last,
    and any not performed, with ``screenshot`` (the screen now).
    """
    out: list[dict[str, Any]] = []
    carried = False
    for call in calls:
        if call.kind == COMPUTER_CALL:
            png = call.screenshot or screenshot
            carried = carried or not call.screenshot
            out.append(
                {
                    "type": "computer_call_output",
                    "call_id": call.call_id,
                    "output": {
                        "type": SCREENSHOT_TYPE,
                        "image_url": f"data:image/png;base64,{png}",
                    },
                    "acknowledged_safety_checks": call.safety_checks,
                }
            )
        else:
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": call.call_id,
                    "output": "performed" if call.performed else "not performed",
                }
            )
    return out, carried


def _history_items(exchanges: list[_Exchange]) -> list[dict[str, Any]]:
    """History K: the older exchanges as text, the latest one verbatim (none kept: nothing).

    The latest exchange holds the calls the request answers, and their reasoning.
    """
    if not exchanges:
        return []
    items: list[dict[str, Any]] = []
    for exchange in exchanges[:-1]:
        items.append(_user([_text(exchange.record)]))
        items.append({"type": "message", "role": "assistant", "content": exchange.summary})
    return [*items, *exchanges[-1].items]


def _reask(reply: _Reply) -> str:
    """The prompt that asks again after an unusable reply, saying what is available."""
    if not reply.calls:
        return (
            f"{reply.error}. Every turn needs a tool call: a computer action, or the "
            f"{FUNCTION_NAME} function to speak, wait or end the task (done). Available: "
            f"{AVAILABLE}."
        )
    return (
        f"Nothing of your last reply was performed: {reply.error}. Available here: "
        f"{AVAILABLE}. Reply again with one of them."
    )


def _read_reply(output: list[Any], coords: CoordSpace) -> _Reply:
    """The benchmark actions of one response's output, or why there are none."""
    calls: list[_Call] = []
    planned: list[_Planned] = []
    problems: list[str] = []
    texts: list[str] = []
    for item in output:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type")
        if kind == "message":
            texts.append(_message_text(item))
            continue
        if kind not in (COMPUTER_CALL, FUNCTION_CALL):
            continue
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            problems.append(f"a {kind} without a call_id")
            continue
        checks = item.get("pending_safety_checks") or []
        call = _Call(call_id, kind, [dict(c) for c in checks if isinstance(c, Mapping)])
        calls.append(call)
        try:
            for action in _call_actions(item, coords):
                validate_action(action)
                planned.append(_Planned(action, call))
        except ActionError as e:
            problems.append(f"{_summary([item])}: {e}")
    summary = _summary(output)
    if problems:
        error = "; ".join(problems)
    elif not calls:
        error = "the reply has no tool call"
    else:
        error = ""
    narration = to_charset(" ".join(t.strip() for t in texts if t.strip()), MAX_NARRATION)
    return _Reply(calls, planned, narration, error, summary)


def _error_message(error: Any) -> str:
    """The server's message of an SDK status error, cut short."""
    body = getattr(error, "body", None)
    message: Any = body
    if isinstance(body, Mapping):
        message = body.get("message") or body.get("error") or body
    if isinstance(message, Mapping):
        message = message.get("message") or json.dumps(message, default=str)
    text = str(message if message is not None else getattr(error, "message", "")).strip()
    return text[:MAX_ERROR_CHARS] or "(no message)"
