"""An agent that drives the benchmark through Anthropic's computer-use tool (Messages API).

The official ``anthropic`` SDK sends each step to ``client.beta.messages.create`` with two
tools: Anthropic's ``computer`` tool (``computer_20251124`` by default, or
``computer_20250124``, with its beta header), whose display is the fitted screenshot the model
is shown, and a custom ``benchmark`` tool for what a desktop lacks: ``speak`` (answer aloud),
``wait`` and ``done``. Every screenshot goes with the observation record beside it (the task,
prior actions, transcripts, keyframes, narration, page elements), so the record reaches the
model every step.

Layout: the tool versions and the tables of keys and actions; :func:`key_combos` and
:func:`computer_actions` / :func:`benchmark_actions`, which turn one tool call into the
benchmark's action dicts; :func:`system_prompt`; the turns and tool results of the Messages
API; then :class:`AnthropicComputerAgent`, on the step loop of
:class:`~dynacu_agents.computer_use.base.ComputerUseAgent`.

How a reply becomes actions:

- Coordinates are pixels of the fitted image (the declared display) and are mapped back to
  screen pixels with :meth:`CoordSpace.to_screen`; a point off the display is a mistake told
  to the model.
- An action the benchmark lacks (``double_click``, ``mouse_move``, dragging, ...) is answered
  with an ``is_error`` tool result naming what is available, and the model is asked once more
  within the same step; a reply with no tool call is asked once more too. A second unusable
  reply becomes ``{"type": "invalid_reply"}``, which the env reports as an agent mistake.
- Several tool calls in one reply run one per env step: the first is returned, the rest are
  queued and returned by the next ``act`` calls without a request. Text beside the calls is
  the first action's narration.
- A step's info (:meth:`~dynacu_agents.computer_use.base.ComputerUseAgent.act`) counts cache
  reads and writes among the ``input_tokens``; its ``reply`` is the tool calls as JSON, then
  the text; the info of a queued action repeats that reply and adds ``queued: True``.

``history=0`` sends every step as one fresh user message. ``history=K`` keeps the last K
exchanges (an assistant turn and the user turn that answers its tool calls); every tool call
gets its tool result (the last carries the screenshot and record), and only the newest turn
keeps its images.

A temperature is sent only when given (models after Claude Opus 4.6 refuse one), and a
reasoning effort becomes a thinking budget or, with ``thinking="adaptive"``, adaptive thinking
at that effort (what Claude 4.7 and later take).

A request the server refuses (HTTP 4xx but 408, 409 and 429) raises :class:`ModelRefused`,
the agent's failure; what the SDK retries (429, 5xx, a lost connection) raises
:class:`LLMError`, an infrastructure fault, once ``http_retries`` retries are spent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
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
    to_charset,
    validate_action,
)

# The computer tool's versions this agent speaks, each with the beta header it needs. Both
# take the same actions here (20251124 adds a zoom action, which is left disabled).
TOOL_VERSIONS = {
    "computer_20251124": "computer-use-2025-11-24",  # Claude Opus 4.5 and later
    "computer_20250124": "computer-use-2025-01-24",  # Claude Sonnet 4.5, Haiku 4.5, Claude 4
}
DEFAULT_TOOL_VERSION = "computer_20251124"
THINKING_MODES = ("budget", "adaptive")
# Our reasoning efforts as adaptive thinking's effort levels (it has no "minimal").
ADAPTIVE_EFFORTS = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}
COMPUTER_TOOL = "computer"
BENCHMARK_TOOL = "benchmark"
KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
DEFAULT_WAIT_S = 1.0  # a wait that names no duration, as the text form's bare "wait"
MAX_KEYS = 10  # keys in one key action's sequence ("Down Down Down"), each one env step
IMAGE_PLACEHOLDER = "(an earlier screenshot, no longer shown)"
EARLIER_TURNS_LEFT_OUT = (
    "(Earlier turns are left out. The observation record in each tool result lists every "
    "action so far.)"
)
NO_SDK = 'AnthropicComputerAgent needs the anthropic SDK: pip install "dynacu-gym[anthropic]"'
DONE_TEXT = "Done."
SKIPPED_TEXT = "Not performed: an earlier tool call of the same reply failed."

AVAILABLE = (
    "the computer tool's left_click (with a coordinate), type, key, scroll (up or down), wait "
    "and screenshot, and the benchmark tool's speak, wait and done"
)
# Computer-tool actions a desktop has and this benchmark does not.
UNSUPPORTED = frozenset(
    "mouse_move double_click triple_click right_click middle_click left_click_drag "
    "left_mouse_down left_mouse_up hold_key cursor_position zoom".split()
)

NO_TOOL_CALL = (
    "Your reply has no tool call, and a tool call is expected: the page only changes through "
    f"the tools. Call {AVAILABLE}."
)
NOTHING_PERFORMED = f"Nothing of that reply was performed. Call one of {AVAILABLE}."

# xdotool key names (what the computer tool's ``key`` action writes) that our key names
# spell otherwise; the rest (ctrl, Return, BackSpace, Escape, Up, F5, ...) normalize_key reads.
XDOTOOL_KEYS = {
    "kp_enter": "Enter", "kp_tab": "Tab", "kp_space": "Space", "iso_left_tab": "Shift+Tab",
    "page_up": "PageUp", "prior": "PageUp", "kp_prior": "PageUp", "kp_page_up": "PageUp",
    "page_down": "PageDown", "next": "PageDown", "kp_next": "PageDown",
    "kp_page_down": "PageDown", "kp_home": "Home", "kp_end": "End", "kp_insert": "Insert",
    "kp_delete": "Delete", "kp_up": "ArrowUp", "kp_down": "ArrowDown", "kp_left": "ArrowLeft",
    "kp_right": "ArrowRight", "caps_lock": "CapsLock", "menu": "ContextMenu",
    "control_l": "Control", "control_r": "Control", "shift_l": "Shift", "shift_r": "Shift",
    "alt_l": "Alt", "alt_r": "Alt", "meta_l": "Meta", "meta_r": "Meta", "super_l": "Meta",
    "super_r": "Meta", "win": "Meta",
    **{f"kp_{digit}": str(digit) for digit in range(10)},
    "kp_add": "+", "kp_subtract": "-", "kp_multiply": "*", "kp_divide": "/", "kp_decimal": ".",
    "kp_equal": "=", "plus": "+", "minus": "-", "equal": "=", "comma": ",", "period": ".",
    "slash": "/", "backslash": "\\", "semicolon": ";", "colon": ":", "apostrophe": "'",
    "quotedbl": '"', "grave": "`", "asciitilde": "~", "exclam": "!", "at": "@",
    "numbersign": "#", "dollar": "$", "percent": "%", "asciicircum": "^", "ampersand": "&",
    "asterisk": "*", "parenleft": "(", "parenright": ")", "bracketleft": "[",
    "bracketright": "]", "braceleft": "{", "braceright": "}", "underscore": "_", "bar": "|",
    "less": "<", "greater": ">", "question": "?",
}  # fmt: skip

BENCHMARK_TOOL_SPEC: dict[str, Any] = {
    "name": BENCHMARK_TOOL,
    "description": (
        "The benchmark's own actions, beside the computer: speak an answer aloud, wait, or "
        "end the task."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["speak", "wait", "done"],
                "description": (
                    "speak: say text aloud (only when the task says to answer aloud); "
                    "wait: let seconds pass; done: end the task."
                ),
            },
            "text": {"type": "string", "description": "speak: the words to say."},
            "seconds": {
                "type": "number",
                "minimum": 0,
                "maximum": MAX_WAIT_S,
                "description": "wait: how long, in seconds.",
            },
        },
        "required": ["action"],
    },
}


def key_combos(text: Any) -> list[str]:
    """The key combinations, in our names, of a computer-tool ``key`` action's ``text``.

    The text is in xdotool's syntax: a combination joins keys with ``+`` (``ctrl+a``,
    ``shift+Tab``) and several are pressed in turn when separated by spaces (``Down Down``).

    Raises:
        ActionError: no key, too many, or a part that is not a key.
    """
    if not isinstance(text, str) or not text.strip():
        raise ActionError(f"a key action needs text such as 'Return' or 'ctrl+a', got {text!r}")
    combos = text.split()
    if len(combos) > MAX_KEYS:
        raise ActionError(
            f"a key action presses at most {MAX_KEYS} keys in turn, got {len(combos)}"
        )
    out = []
    for combo in combos:
        parts = combo.split("+") if combo != "+" else ["+"]
        if combo.endswith("++"):
            parts = [*combo[:-2].split("+"), "+"]
        ours = [XDOTOOL_KEYS.get(part.lower(), part) for part in parts]
        out.append(normalize_key("+".join(ours)))
    return out


def _point(value: Any, coords: CoordSpace) -> tuple[int, int]:
    """The screen pixel of a tool call's ``coordinate`` ([x, y] in the display's pixels)."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ActionError(f"expected a coordinate [x, y], got {value!r}")
    return coords.to_screen(value[0], value[1])


def computer_actions(tool_input: dict[str, Any], coords: CoordSpace) -> list[dict[str, Any]]:
    """The benchmark actions of one computer-tool call (screen pixels).

    ``left_click`` is a click; ``type``, ``key`` (one action per combination of a sequence),
    ``scroll`` (up or down, one wheel click being one 100 px notch) and ``wait`` map onto
    ours; ``screenshot`` is a zero-second wait, since the next observation shows a fresh
    screenshot. A scroll turns the wheel where the mouse pointer is (the env has no pointer
    move), so its coordinate is ignored.

    Raises:
        ActionError: an action the benchmark lacks (the message names what is available), a
            click with keys held, a missing or malformed field, or a point off the display.
    """
    action = tool_input.get("action")
    if action in UNSUPPORTED:
        raise ActionError(f"the {action} action is not available here; available are {AVAILABLE}")
    if action == "left_click":
        if tool_input.get("text"):
            raise ActionError(
                f"clicking with keys held ({tool_input['text']!r}) is not available here; "
                "click without text"
            )
        if tool_input.get("coordinate") is None:
            raise ActionError(
                "left_click needs a coordinate [x, y] here: the pointer cannot be moved on its own"
            )
        x, y = _point(tool_input["coordinate"], coords)
        return [{"type": "click", "x": x, "y": y}]
    if action == "type":
        text = tool_input.get("text")
        if not isinstance(text, str):
            raise ActionError(f"a type action needs text, got {text!r}")
        return [{"type": "type", "text": text}]
    if action == "key":
        return [{"type": "key", "key": combo} for combo in key_combos(tool_input.get("text"))]
    if action == "scroll":
        direction = tool_input.get("scroll_direction")
        if direction not in ("up", "down"):
            raise ActionError(
                f"expected scroll_direction 'up' or 'down' (the page scrolls vertically only), "
                f"got {direction!r}"
            )
        if tool_input.get("text"):
            raise ActionError(
                f"scrolling with keys held ({tool_input['text']!r}) is not available here"
            )
        amount = tool_input.get("scroll_amount")
        if isinstance(amount, bool) or not isinstance(amount, int) or not 1 <= amount <= MAX_SCROLL:
            raise ActionError(
                f"expected scroll_amount in 1..{MAX_SCROLL} wheel clicks, got {amount!r}"
            )
        return [{"type": "scroll", "direction": direction, "amount": amount}]
    if action == "wait":
        return [{"type": "wait", "seconds": tool_input.get("duration", DEFAULT_WAIT_S)}]
    if action == "screenshot":
        return [{"type": "wait", "seconds": 0.0}]
    raise ActionError(f"unknown computer action {action!r}; available are {AVAILABLE}")


def benchmark_actions(tool_input: dict[str, Any]) -> list[dict[str, Any]]:
    """The benchmark action of one ``benchmark`` tool call: speak, wait or done.

    Raises:
        ActionError: another action, or a missing field.
    """
    action = tool_input.get("action")
    if action == "speak":
        return [{"type": "speak", "text": tool_input.get("text")}]
    if action == "wait":
        return [{"type": "wait", "seconds": tool_input.get("seconds", DEFAULT_WAIT_S)}]
    if action == "done":
        return [{"type": "done"}]
    raise ActionError(f"expected the benchmark tool's action speak, wait or done, got {action!r}")


def system_prompt(coords: CoordSpace) -> str:
    """The instructions of every request: the screen, the record, the tools and narration.

    ``coords`` is the computer tool's space: pixels of the fitted screenshot, which is the
    declared display.
    """
    (ox, oy), (cw, ch) = coords.fit.offset, coords.fit.content
    if coords.fit.size == (SCREEN_WIDTH, SCREEN_HEIGHT) and not coords.fit.padded:
        where = "Positions in the record (prior actions, page elements) are the same pixels."
    else:
        sx, sy = cw / SCREEN_WIDTH, ch / SCREEN_HEIGHT
        x = f"x * {sx:g}" + (f" + {ox}" if ox else "")
        y = f"y * {sy:g}" + (f" + {oy}" if oy else "")
        where = (
            f"Positions in the record (prior actions, page elements) are {SCREEN_WIDTH}x"
            f"{SCREEN_HEIGHT} screen pixels: the screen point (x, y) is the screenshot's pixel "
            f"({x}, {y})."
        )
    return f"""\
You operate a web page in a Chromium browser on a {SCREEN_WIDTH}x{SCREEN_HEIGHT} screen, as a \
person at a computer would, through the computer tool. The page runs in real time: sound \
plays, content changes and time passes while you think.

Each turn you receive the observation record (the task, your prior actions, any audio \
transcript, the list of keyframes, the page's elements where it has them, and your narration \
notes), the current screenshot, and the keyframes: frames of what the screen showed since your \
last action, each labelled with its time in seconds since the task started. \
{coords.describe()} The computer tool's display is that screenshot. {where}

The computer tool's actions available here:
- left_click with a coordinate: click there.
- type: type the text where the focus is (click a field first).
- key: press a key or combination, e.g. Return, Tab, Escape, BackSpace, ctrl+a.
- scroll with scroll_direction up or down and scroll_amount (1 to {MAX_SCROLL} wheel clicks \
of {SCROLL_NOTCH_PX} px): the wheel turns where the mouse pointer is, that is where you last \
clicked; a coordinate given with it is ignored.
- wait with a duration of up to {MAX_WAIT_S:g} seconds: let time pass, to hear or see more.
- screenshot: look again (the next turn shows the screen as it is then).
No other action is available: no mouse_move, double, triple, right or middle click, dragging, \
mouse button down or up, hold_key, cursor_position or zoom, and no click or scroll with keys \
held.

The benchmark tool:
- action speak with text: say the words aloud. Do this only when the task says to answer \
aloud.
- action wait with seconds: the same as the computer tool's wait.
- action done: end the task (the page's verdict then stands). Call it once the task is done.

Several tool calls in one reply are performed one after another, with no screenshot between \
them; the next turn shows the screen after the last.

Beside your tool call, write a short note of what you newly saw in the screenshot and keyframes \
that may matter later (numbers, names, messages that may vanish). The environment keeps these \
notes across steps and shows them back in the [NARRATION] section after the frames are gone; \
each frame is shown to you only once.
"""


@dataclass(frozen=True)
class _ToolCall:
    """One tool_use block of a reply."""

    id: str
    name: str
    input: dict[str, Any]

    def summary(self) -> str:
        return f"{self.name} {json.dumps(self.input, ensure_ascii=False)}"


@dataclass(frozen=True)
class _Reply:
    """A model reply: the assistant turn to keep, its tool calls, narration and summary."""

    message: dict[str, Any]
    calls: list[_ToolCall]
    narration: str
    summary: str


@dataclass(frozen=True)
class _Result:
    """What a tool call's tool result says: done, or why it was not performed."""

    call: _ToolCall
    text: str
    is_error: bool = False


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _blocks(parts: list[MessagePart]) -> list[dict[str, Any]]:
    """Message parts as Messages API content blocks (PNG images as base64 sources)."""
    return [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": p.png}}
        if p.png
        else _text(p.text)
        for p in parts
    ]


def _without_images(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with every image (tool results' too) replaced by a text placeholder."""
    if not isinstance(message["content"], list):
        return message

    def strip(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for block in blocks:
            if block.get("type") == "image":
                out.append(_text(IMAGE_PLACEHOLDER))
            elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                out.append({**block, "content": strip(block["content"])})
            else:
                out.append(block)
        return out

    return {**message, "content": strip(message["content"])}


def _tool_result(result: _Result, content: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": result.call.id,
        "content": [_text(result.text), *(content or [])],
    }
    if result.is_error:
        block["is_error"] = True
    return block


def _window(messages: list[dict[str, Any]], history: int) -> list[dict[str, Any]]:
    """The kept conversation: the last ``history`` exchanges of ``messages``, after a user turn."""
    exchanges = len(messages) // 2  # user turn, then (assistant, user) pairs
    if exchanges <= history:
        return list(messages)
    # The first kept assistant turn needs a user turn before it that answers nothing.
    opener = {"role": "user", "content": [_text(EARLIER_TURNS_LEFT_OUT)]}
    return [opener, *messages[-(2 * history - 1) :]]


def _observation_turn(
    blocks: list[dict[str, Any]], pending: list[_Result], history: int
) -> dict[str, Any]:
    """The user turn of a step: the record beside the screenshot and keyframes (``blocks``).

    When the conversation goes on, the turn opens with a tool result for each call of the
    last reply (the last one holding the observation); in a fresh turn, calls that were not
    performed are noted before it.
    """
    if not history or not pending:
        failed = [r for r in pending if r.is_error and r.text != SKIPPED_TEXT]
        notes = [_text(f"{r.text} ({r.call.summary()}, from your previous reply)") for r in failed]
        return {"role": "user", "content": notes + blocks}
    *earlier, last = pending
    content = [_tool_result(result) for result in earlier]
    if last.is_error:  # the observation follows the results, outside them
        content += [_tool_result(last), *blocks]
    else:
        content.append(_tool_result(last, blocks))
    return {"role": "user", "content": content}


def _retry_turn(plan: Plan) -> dict[str, Any]:
    """The user turn that answers an unusable reply and asks again."""
    if not plan.answers:
        return {"role": "user", "content": [_text(NO_TOOL_CALL)]}
    content = [_tool_result(result) for result in plan.answers]
    return {"role": "user", "content": [*content, _text(NOTHING_PERFORMED)]}


def _actions_of(call: _ToolCall, coords: CoordSpace) -> list[dict[str, Any]]:
    """The benchmark actions of one tool call, checked.

    Raises:
        ActionError: a call the benchmark cannot perform, or of an unknown tool.
    """
    if call.name == COMPUTER_TOOL:
        actions = computer_actions(call.input, coords)
    elif call.name == BENCHMARK_TOOL:
        actions = benchmark_actions(call.input)
    else:
        raise ActionError(
            f"unknown tool {call.name!r}; expected {COMPUTER_TOOL!r} or {BENCHMARK_TOOL!r}"
        )
    for action in actions:
        validate_action(action)
    return actions


def _server_message(error: Any) -> str:
    """The server's message in an SDK status error (``error.message`` of the body), cut short."""
    body = getattr(error, "body", None)
    message = body.get("error") if isinstance(body, dict) else None
    if isinstance(message, dict):
        message = message.get("message")
    text = str(message or getattr(error, "message", "") or "").strip()
    return text[:MAX_ERROR_CHARS] or "(no message)"


def _count_usage(cost: StepCost, usage: Any) -> None:
    """Add a reply's usage: input tokens (cache reads and writes included), output tokens."""

    def number(name: str, source: Any = usage) -> int:
        value = getattr(source, name, 0)
        return value if isinstance(value, int) and value > 0 else 0

    cost.input_tokens += number("input_tokens")
    cost.input_tokens += number("cache_creation_input_tokens")
    cost.input_tokens += number("cache_read_input_tokens")
    cost.output_tokens += number("output_tokens")
    details = getattr(usage, "output_tokens_details", None)
    if details is not None:
        cost.reasoning_tokens += number("thinking_tokens", details)


@dataclass
class _Step:
    """The messages of one step's request: the kept conversation, then the step's own turns."""

    window: list[dict[str, Any]]
    turns: list[dict[str, Any]]


# Long (~220 lines): 90 document and check its options; the rest are its hooks and SDK errors.
class AnthropicComputerAgent(ComputerUseAgent):
    """Drives the benchmark with Anthropic's computer-use tool (see the module docstring).

    Args:
        model: the model name, e.g. ``claude-opus-4-5`` (one that knows ``tool_version``).
        base_url: the server; defaults to ``ANTHROPIC_BASE_URL``, then to the SDK's default.
        api_key: the key; defaults to ``ANTHROPIC_API_KEY``.
        max_tokens: the longest reply, in tokens (thinking comes on top).
        temperature: the sampling temperature, sent only when given (models after Claude Opus
            4.6 refuse one, and the SDK has no argument for it: it goes in the body as is).
        timeout_s: seconds one HTTP request may take.
        image_size: the image the model sees (:meth:`ImageFit.parse`): ``"full"``, a long side
            (``"1024"``) or a size to pad into (``"1024x768"``). It is the display the
            computer tool declares; the model's coordinates are its pixels.
        max_keyframes: send only the last this many keyframes of a step (None: all).
        history: 0 sends each step as one fresh user message; K keeps the last K exchanges
            (assistant turn and the tool results answering it), images only in the newest.
        http_retries: retries of a request answered 408, 409, 429 or 5xx, or not answered
            (the SDK's ``max_retries``).
        tool_version: the computer tool's version, a key of :data:`TOOL_VERSIONS`.
        reasoning_effort: ``minimal``, ``low``, ``medium`` or ``high`` turns on extended
            thinking; None: off.
        thinking: how an effort is sent: ``"budget"`` (``thinking.type=enabled`` with the budget
            of :data:`~dynacu_agents.llm.THINKING_BUDGETS`: Claude 4.5 and earlier) or
            ``"adaptive"`` (``thinking.type=adaptive`` and ``output_config.effort``: Claude
            4.6 and later, which refuse a budget from 4.7 on).

    Raises:
        DependencyNotInstalled: the ``anthropic`` SDK is not installed.
        ValueError: a missing key or an out-of-range argument.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int = 1024,
        temperature: float | None = None,
        timeout_s: float = 120.0,
        image_size: str | ImageFit = "1024",
        max_keyframes: int | None = None,
        history: int = 0,
        http_retries: int = 2,
        tool_version: str = DEFAULT_TOOL_VERSION,
        reasoning_effort: str | None = None,
        thinking: str = "budget",
    ) -> None:
        check_model(model)
        if tool_version not in TOOL_VERSIONS:
            raise ValueError(
                f"expected tool_version in {', '.join(TOOL_VERSIONS)}, got {tool_version!r}"
            )
        check_reasoning_effort(reasoning_effort)
        if thinking not in THINKING_MODES:
            raise ValueError(f"expected thinking in {', '.join(THINKING_MODES)}, got {thinking!r}")
        if reasoning_effort is not None and temperature is not None:
            raise ValueError(
                "give temperature or reasoning_effort, not both: Anthropic's thinking takes no "
                "temperature"
            )
        for label, value, least in (("max_tokens", max_tokens, 1), ("history", history, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"expected {label} to be a whole number >= {least}, got {value!r}")
        check_max_keyframes(max_keyframes)
        check_http_retries(http_retries)
        if not timeout_s > 0:
            raise ValueError(f"expected timeout_s > 0 seconds, got {timeout_s!r}")
        self._sdk = import_sdk("anthropic", NO_SDK)
        key = given_or_env(api_key, KEY_ENV)
        if key is None:
            raise ValueError(f"the Anthropic API needs a key: set {KEY_ENV} or pass api_key")
        url = given_or_env(base_url, BASE_URL_ENV)
        super().__init__(
            model=model,
            max_tokens=max_tokens,
            temperature=temperature,
            timeout_s=timeout_s,
            coords=CoordSpace("image", image_fit(image_size)),
            max_keyframes=max_keyframes,
            http_retries=http_retries,
            reasoning_effort=reasoning_effort,
        )
        self.history = history
        self.tool_version = tool_version
        self.thinking = thinking
        self.system_prompt = system_prompt(self.coords)
        self._client: Any = self._sdk.Anthropic(
            api_key=key, base_url=url, max_retries=http_retries, timeout=timeout_s
        )

    @property
    def url(self) -> str:
        """Where requests go."""
        return f"{str(self._client.base_url).rstrip('/')}/v1/messages"

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tool definitions of every request: the computer tool and the benchmark tool."""
        width, height = self.coords.fit.size
        computer = {
            "type": self.tool_version,
            "name": COMPUTER_TOOL,
            "display_width_px": width,
            "display_height_px": height,
        }
        return [computer, BENCHMARK_TOOL_SPEC]

    def _clear_conversation(self) -> None:
        self._messages: list[dict[str, Any]] = []  # the conversation, images left out
        self._pending: list[_Result] = []  # tool results owed for the last reply's calls
        self._last_reply = ""

    def _queued_info(self) -> dict[str, Any]:
        """A queued action's info: the reply it came from, and ``queued``."""
        return {**self._info(StepCost(), StepProgress(reply=self._last_reply)), "queued": True}

    # ---- the conversation ---------------------------------------------------------------------

    def _open_step(self, observation: dict[str, Any]) -> _Step:
        blocks = _blocks(observation_parts(observation, self.coords.fit, self.max_keyframes))
        turn = _observation_turn(blocks, self._pending, self.history)
        return _Step(_window(self._messages, self.history), [turn])

    def _add_retry_turn(self, step: _Step, reply: _Reply, plan: Plan) -> None:
        step.turns += [reply.message, _retry_turn(plan)]

    def _close_step(self, step: _Step, reply: _Reply, plan: Plan) -> None:
        step.turns.append(reply.message)
        if self.history:
            self._messages += [_without_images(message) for message in step.turns]
        self._pending = plan.answers
        self._last_reply = reply.summary

    def _plan(self, reply: _Reply) -> Plan:
        """The actions of a reply's tool calls, up to the first that cannot be performed."""
        plan = Plan()
        if not reply.calls:
            plan.error = "the reply has no tool call"
            return plan
        for call in reply.calls:
            if plan.error:
                plan.answers.append(_Result(call, SKIPPED_TEXT, is_error=True))
                continue
            try:
                actions = _actions_of(call, self.coords)
            except ActionError as e:
                plan.error = f"{call.summary()}: {e}"
                plan.answers.append(_Result(call, f"Not performed: {e}", is_error=True))
                continue
            plan.actions += actions
            plan.answers.append(_Result(call, DONE_TEXT))
        if plan.actions and reply.narration:
            plan.actions[0]["narration"] = reply.narration
        return plan

    # ---- the wire -----------------------------------------------------------------------------

    def request(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The keyword arguments of ``client.beta.messages.create`` for these messages."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "system": self.system_prompt,
            "max_tokens": self.max_tokens,
            "messages": messages,
            "tools": self.tools,
            "betas": [TOOL_VERSIONS[self.tool_version]],
        }
        if self.reasoning_effort is not None and self.thinking == "adaptive":
            kwargs["thinking"] = {"type": "adaptive"}
            kwargs["output_config"] = {"effort": ADAPTIVE_EFFORTS[self.reasoning_effort]}
        elif self.reasoning_effort is not None:
            budget = THINKING_BUDGETS[self.reasoning_effort]
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": budget}
            kwargs["max_tokens"] = self.max_tokens + budget
        if self.temperature is not None:
            kwargs["extra_body"] = {"temperature": self.temperature}
        return kwargs

    def _send(self, step: _Step, cost: StepCost) -> _Reply:
        """Send the step's messages and read the reply, adding the call's cost to ``cost``.

        Raises:
            ModelRefused: a 4xx answer the SDK does not retry.
            LLMError: retries spent on 408/409/429/5xx, no connection, or no message.
        """
        sdk, url = self._sdk, self.url
        try:
            with timed(cost):
                raw = self._client.beta.messages.with_raw_response.create(
                    **self.request(step.window + step.turns)
                )
                message = raw.parse()
        except sdk.APIStatusError as e:
            status = int(e.status_code)
            cost.calls += 1 + (self.http_retries if sdk_retries(status) else 0)
            text = f"{url} answered HTTP {status}: {_server_message(e)}"
            fault = f"{text} (after {self.http_retries} retries)"
            raise http_error(text, status, retried=SDK_RETRY_STATUSES, fault=fault) from e
        except sdk.APITimeoutError as e:
            cost.calls += 1 + self.http_retries
            raise LLMError(
                f"the model server at {url} did not answer within {self.timeout_s:g} s"
            ) from e
        except sdk.APIConnectionError as e:
            cost.calls += 1 + self.http_retries
            reason = e.__cause__ or e
            raise LLMError(f"cannot reach the model server at {url}: {reason}") from e
        except sdk.AnthropicError as e:  # an answer that is not a message, say
            cost.calls += 1
            raise LLMError(f"{url} answered without a usable reply: {e}") from e
        cost.calls += 1 + int(getattr(raw, "retries_taken", 0) or 0)
        try:
            _count_usage(cost, getattr(message, "usage", None))
            return _read_reply(message)
        except (AttributeError, TypeError, ValueError) as e:
            shown = repr(message)[:MAX_ERROR_CHARS]
            raise LLMError(
                f"{url} answered without a message in the Messages format: {shown}"
            ) from e


def _read_reply(message: Any) -> _Reply:
    """A reply's assistant turn (as it must be sent back), tool calls, narration and summary.

    Thinking blocks are kept with their signatures, which a conversation that continues
    after a tool call must send back unchanged.
    """
    content: list[dict[str, Any]] = []
    calls: list[_ToolCall] = []
    texts: list[str] = []
    for block in message.content:
        kind = getattr(block, "type", "")
        if kind == "text" and block.text.strip():
            content.append(_text(block.text))
            texts.append(block.text.strip())
        elif kind == "tool_use":
            tool_input = dict(block.input) if isinstance(block.input, dict) else {}
            calls.append(_ToolCall(str(block.id), str(block.name), tool_input))
            content.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": tool_input}
            )
        elif kind == "thinking":
            content.append(
                {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
            )
        elif kind == "redacted_thinking":
            content.append({"type": "redacted_thinking", "data": block.data})
    if not any(block["type"] in ("text", "tool_use") for block in content):
        content.append(_text("(empty reply)"))  # the API takes no assistant turn without one
    text = "\n".join(texts)
    summary = "\n".join([*(call.summary() for call in calls), *texts])
    return _Reply(
        message={"role": "assistant", "content": content},
        calls=calls,
        narration=to_charset(text, MAX_NARRATION) if text else "",
        summary=summary or "(empty reply)",
    )
