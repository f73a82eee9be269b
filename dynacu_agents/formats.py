"""Reply formats: the way an open computer-use model writes its action, and how to read it.

A chat model trained for computer use answers in its own syntax. The chat agent prompts it in
that syntax and reads its reply back into the action dict ``env.step`` takes, in screen pixels:

- ``text``: the benchmark's own action lines (:func:`dynacu_agents.llm.parse_reply`);
- ``uitars``: UI-TARS's ``Thought: ...`` then ``Action: verb(args)``;
- ``qwen``: Qwen2.5-VL's (and Fara-7B's) ``<tool_call>`` JSON calling a ``computer_use``
  function declared in the Qwen-Agent style.

Layout: :class:`ReplyFormat` (the interface and each format's recommended coordinate space and
image size), the situation every prompt opens with, then :class:`UITarsFormat` and
:class:`QwenFormat` with their readers, and :func:`reply_format` to pick one by name.

Every point a model names is read in the agent's :class:`~dynacu_agents.coords.CoordSpace` and
mapped to the screen; a reply with no usable action (none at all, an unknown verb, a bad
argument, a point outside the space, an action the benchmark lacks such as a drag) raises
:class:`~dynacu_gym.actions.ActionError` naming the form expected and the actions there are.
What a model thinks before its action becomes the action's narration, the note the
environment keeps across steps.
"""

from __future__ import annotations

import ast
import json
import math
import re
from typing import Any, ClassVar

from dynacu_agents.coords import CoordSpace
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

REPLY_FORMATS = ("text", "uitars", "qwen")
UITARS_SCROLL_NOTCHES = 5  # UI-TARS's own runner turns the wheel 5 clicks per scroll()
UITARS_WAIT_S = 5.0  # UI-TARS's wait(): "sleep for 5s and take a screenshot"
QWEN_FUNCTION = "computer_use"
MAX_QUOTED = 80  # characters of a reply an error message quotes


class ReplyFormat:
    """A reply format: the prompt that asks for it and the reader of its replies.

    Attributes:
        name: one of :data:`REPLY_FORMATS`.
        default_coords: the coordinate space the models of this format are trained on (a name
            in :data:`dynacu_agents.coords.COORDS`).
        default_image_size: the image size they expect (:meth:`ImageFit.parse` form), or None
            for the full screen.
        retry_hint: the form a reply must take, for the message that asks a model again.
    """

    name: ClassVar[str]
    default_coords: ClassVar[str]
    default_image_size: ClassVar[str | None]
    retry_hint: ClassVar[str]

    def prompt(self, coords: CoordSpace, images: bool, grammar_prompt: str) -> str:
        """The system prompt asking for this format.

        Args:
            coords: the space the model's numbers are read in, over the image it is shown.
            images: whether the model is shown the screenshot and keyframes.
            grammar_prompt: the text format's prompt (``llm.system_prompt``), which only the
                text format uses.
        """
        raise NotImplementedError

    def parse(self, reply: str, coords: CoordSpace) -> dict[str, Any]:
        """The action in ``reply`` as the dict ``env.step`` takes, in screen pixels.

        Raises:
            ActionError: the reply holds no usable action; the message names the form expected.
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"reply_format({self.name!r})"


class TextFormat(ReplyFormat):
    """The benchmark's own action lines, as :mod:`dynacu_agents.llm` prompts for and reads them."""

    name = "text"
    default_coords = "screen"
    default_image_size = None
    retry_hint = (
        'exactly one action line, one of: click X Y, click [N], type "text", key Combo, '
        'scroll up|down N, speak "text", wait SECONDS, done'
    )

    def prompt(self, coords: CoordSpace, images: bool, grammar_prompt: str) -> str:
        """``grammar_prompt`` unchanged: ``llm.system_prompt`` builds this format's prompt."""
        return grammar_prompt

    def parse(self, reply: str, coords: CoordSpace) -> dict[str, Any]:
        """The action line of ``reply``, by :func:`dynacu_agents.llm.parse_reply`."""
        # Imported here: the chat agent's module imports this one to pick its format.
        from dynacu_agents.llm import parse_reply

        return parse_reply(reply, coords)


# ---- what every prompt says ------------------------------------------------------------------


def _situation(coords: CoordSpace, images: bool) -> str:
    """The page, what each turn brings and what the model's numbers mean."""
    if images:
        seeing = (
            "Each turn you receive the observation record (the task, your prior actions, any "
            "audio transcript, the list of keyframes, your narration notes and, where the page "
            "has them, a [PAGE ELEMENTS] list), the current screenshot, and the keyframes: "
            "frames of what the screen showed since your last action, each labelled with its "
            "time in seconds since the task started."
        )
    else:
        seeing = (
            "Each turn you receive the observation record (the task, your prior actions, any "
            "audio transcript, the list of keyframes, your narration notes and, where the page "
            "has them, a [PAGE ELEMENTS] list); you are shown no images, so find what to click "
            "in the [PAGE ELEMENTS] list."
        )
    where = (
        ""
        if coords.name == "screen"
        else f" Positions in the record (prior actions, page elements) are {SCREEN_WIDTH}x"
        f"{SCREEN_HEIGHT} screen pixels; the points you write are in the coordinates above."
    )
    return (
        f"You operate a web page in a Chromium browser on a {SCREEN_WIDTH}x{SCREEN_HEIGHT} "
        "screen, as a person at a computer would. The page runs in real time: sound plays, "
        "content changes and time passes while you think.\n\n"
        f"{seeing} {coords.describe()}{where}"
    )


def _example_point(coords: CoordSpace) -> tuple[str, str]:
    """A point in ``coords`` (the screen's (640, 400)), written as a model would write it."""
    x, y = coords.from_screen(640, 400)
    if coords.name == "norm1":
        return f"{x:.3f}", f"{y:.3f}"
    return str(int(round(x))), str(int(round(y)))


def _narration(*parts: str) -> str:
    """The narration note of an action: ``parts`` on one line, within the narration's bounds."""
    text = " ".join(" ".join(part.split()) for part in parts if part and part.strip())
    return to_charset(text, MAX_NARRATION)


def _quoted(text: str) -> str:
    """``text`` as an error message quotes it: its repr, cut short."""
    shown = repr(text)
    return shown if len(shown) <= MAX_QUOTED else shown[: MAX_QUOTED - 1] + "\u2026"


def _key_combo(keys: list[str], expected: str) -> str:
    """Key names a model wrote (``ctrl``, ``page_down``, ``Return``) as one Playwright combo.

    Raises:
        ActionError: no keys, or one that is not a key; the message names ``expected``.
    """
    parts = [key.strip() for key in keys if isinstance(key, str) and key.strip()]
    if not parts or len(parts) != len(keys):
        raise ActionError(f"expected key names such as {expected}, got {_quoted(str(keys))}")
    # xdotool spellings (Page_Down, caps_lock) lose their underscore to match the key names.
    names = [part.replace("_", "") if len(part) > 1 else part for part in parts]
    return normalize_key("+".join(names))


def _finish(action: dict[str, Any], narration: str) -> dict[str, Any]:
    """``action`` with its narration (when there is one), checked as ``env.step`` checks it."""
    if narration:
        action["narration"] = narration
    validate_action(action)
    return action


# ---- UI-TARS ---------------------------------------------------------------------------------

_UITARS_USAGE = {
    "click": "click(start_box='<|box_start|>(x1,y1)<|box_end|>')",
    "element": "click(element=N)",
    "hotkey": "hotkey(key='ctrl c')",
    "type": "type(content='xxx')",
    "scroll": "scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up')",
    "wait": "wait() or wait(seconds=N)",
    "speak": "speak(content='xxx')",
    "finished": "finished(content='xxx')",
}
_UITARS_ALIASES = {"left_single": "click", "press": "hotkey"}
_UITARS_LACKS = {
    "left_double": "double click",
    "right_single": "right click",
    "drag": "drag",
    "select": "drag to select",
    "hover": "mouse move without a click",
    "long_press": "long press",
}
_ACTION_LABEL = re.compile(r"^[ \t>*`]*Action[ \t]*:[ \t]*", re.IGNORECASE | re.MULTILINE)
_THOUGHT_LABEL = re.compile(r"^\s*Thought\s*:\s*", re.IGNORECASE)
_CALL_LINE = re.compile(r"^[ \t`]*[A-Za-z_]\w*[ \t]*\(", re.MULTILINE)
_CALL_START = re.compile(r"\s*`*\s*([A-Za-z_]\w*)\s*\(")
_ARG_NAME = re.compile(r"([A-Za-z_]\w*)\s*=\s*")
# A quote closes a value where the call goes on (", name=" or ")") or the reply ends, so an
# apostrophe the model forgot to escape (type(content='It's 5')) stays in the text.
_VALUE_END = re.compile(r"\s*(?:,\s*[A-Za-z_]\w*\s*=|\)|$)")
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"'}
_BOX_TOKENS = re.compile(r"<\|box_start\|>|<\|box_end\|>|</?point>|</?bbox>")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)")


def _uitars_actions() -> str:
    return ", ".join(_UITARS_USAGE.values())


class UITarsFormat(ReplyFormat):
    r"""UI-TARS and UI-TARS-1.5: ``Thought: ...`` then ``Action: verb(args)``.

    The verbs and what they become:

    - ``click(start_box='(x,y)')`` (also ``<|box_start|>(x,y)<|box_end|>``, ``point='<point>x
      y</point>'``, a box ``(x1,y1,x2,y2)`` for its centre; ``left_single`` alike) -> click;
      ``click(element=N)`` -> a click on page element N;
    - ``hotkey(key='ctrl c')`` (keys split by spaces; ``press`` alike) -> key ``Control+c``;
    - ``type(content='...')`` -> type; a closing ``\n`` (UI-TARS's "submit") is typed, and a
      typed newline presses Enter;
    - ``scroll(start_box=..., direction='down')`` -> scroll 5 notches, as UI-TARS's runner
      does; the env scrolls where the mouse pointer is, so the point is checked but not used;
    - ``wait()`` -> 5 s, as UI-TARS means it; ``wait(seconds=N)`` -> N s;
    - ``speak(content='...')`` -> speak (the benchmark's own verb, in the same syntax);
    - ``finished(content='...')`` -> done, the content joining the narration.

    ``left_double``, ``right_single``, ``drag``, ``hover`` and ``call_user`` (there is no user
    to call) are refused, naming the verbs there are. The Thought becomes the narration; of
    several actions in one reply the first is taken.

    Coordinates: UI-TARS (1.0) writes thousandths of the image (``norm1000``, this format's
    default). The open UI-TARS-1.5 weights write pixels of the image their processor resized
    (1288x728 for this screen): run them with coords ``image`` and image size
    ``1288x728:stretch``.
    """

    name = "uitars"
    default_coords = "norm1000"
    default_image_size = None
    retry_hint = "Thought: ... then Action: one of " + ", ".join(_UITARS_USAGE.values())

    def prompt(self, coords: CoordSpace, images: bool, grammar_prompt: str) -> str:
        """The UI-TARS prompt: output format, action space (with the benchmark's verbs), notes."""
        x, y = _example_point(coords)
        return f"""\
You are a GUI agent. You are given a task, your action history and what the page showed; you \
perform the next action to complete the task.

{_situation(coords, images)}

## Output Format
```
Thought: ...
Action: ...
```

## Action Space
click(start_box='<|box_start|>(x1,y1)<|box_end|>')
click(element=N) # Click the centre of element [N] of the [PAGE ELEMENTS] list, where the record \
has one (its numbers change every step).
hotkey(key='ctrl c') # Split keys with a space and use lowercase, e.g. 'enter', 'tab', 'esc', \
'backspace', 'ctrl a'.
type(content='xxx') # Type where the focus is: click the field first. Use escape characters \\', \
\\" and \\n in content. If you want to submit your input, use \\n at the end of content.
scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up') # Turn the mouse \
wheel {UITARS_SCROLL_NOTCHES} notches ({SCROLL_NOTCH_PX} px each) where the mouse pointer is: \
click in a panel first to scroll it.
wait() # Sleep for {UITARS_WAIT_S:g}s and look again, to see or hear more.
wait(seconds=N) # Let N seconds pass (0 to {MAX_WAIT_S:g}).
speak(content='xxx') # Say the words aloud. This works only when the task says to answer aloud.
finished(content='xxx') # End the task; the page's verdict then stands. Put any answer the task \
asks for on the page (or speak it) first: content is only kept as a note.

## Note
- Write one action per reply.
- Your Thought is kept as your narration note: the environment shows it back in the \
[NARRATION] section of later records, after the frames are gone (each frame is shown to you \
only once). Write in it what you newly saw in the screenshot and keyframes that may matter \
later (numbers, names, messages that may vanish), then your next action in one sentence.
- There is no double click, right click, drag, hover or user to call.

## Example
Thought: A toast said the order code is E-4012. I click the Confirm button.
Action: click(start_box='<|box_start|>({x},{y})<|box_end|>')
"""

    def parse(self, reply: str, coords: CoordSpace) -> dict[str, Any]:
        """The action of a UI-TARS reply, in screen pixels (see the class docstring).

        Raises:
            ActionError: no ``Action:``, an unknown or missing verb, a bad argument, a point
                outside ``coords``, or an action the benchmark lacks.
        """
        if not isinstance(reply, str):
            raise ActionError(f"expected the reply as text, got {type(reply).__name__}")
        reply = re.sub(r"^[ \t]*```[^\n]*$", "", reply, flags=re.MULTILINE)
        labels = list(_ACTION_LABEL.finditer(reply))
        if labels:
            thought, action_text = reply[: labels[-1].start()], reply[labels[-1].end() :]
        else:
            lines = list(_CALL_LINE.finditer(reply))
            if not lines:
                raise ActionError(
                    "expected 'Thought: ...' then 'Action: ...' with one of: "
                    f"{_uitars_actions()}; got no Action in {_quoted(reply.strip())}"
                )
            thought, action_text = reply[: lines[-1].start()], reply[lines[-1].start() :]
        verb, args = _read_call(action_text)
        return _uitars_action(verb, args, _THOUGHT_LABEL.sub("", thought), coords)


def _read_call(text: str) -> tuple[str, dict[str, Any]]:
    r"""The verb and keyword arguments of the first ``verb(name='value', ...)`` in ``text``.

    Values are quoted strings (with Python's escapes ``\n``, ``\t``, ``\'``, ``\"``,
    ``\\``) or bare numbers; a missing closing parenthesis is tolerated.

    Raises:
        ActionError: no call, or arguments that are not ``name=value``.
    """
    match = _CALL_START.match(text)
    if match is None:
        raise ActionError(
            f"expected an action such as {_UITARS_USAGE['click']} after 'Action:', "
            f"got {_quoted(text.strip())}"
        )
    verb = match.group(1).lower()
    args: dict[str, Any] = {}
    i, n = match.end(), len(text)
    while True:
        while i < n and (text[i].isspace() or text[i] == ","):
            i += 1
        if i >= n or text[i] == ")":
            return verb, args
        name = _ARG_NAME.match(text, i)
        if name is None:
            raise ActionError(
                f"expected arguments written name='value' in {verb}(...), "
                f"got {_quoted(text.strip())}"
            )
        i = name.end()
        if i < n and text[i] in "'\"":
            value, i = _read_quoted(text, i, verb)
            args[name.group(1)] = value
            continue
        end = i
        if i < n and text[i] in "([":  # an unquoted point or box: start_box=(100,200)
            end = text.find(")" if text[i] == "(" else "]", i)
            end = n if end < 0 else end + 1
        while end < n and text[end] not in ",)":
            end += 1
        bare = text[i:end].strip()
        try:
            args[name.group(1)] = float(bare)
        except ValueError:
            args[name.group(1)] = bare
        i = end


def _read_quoted(text: str, start: int, verb: str) -> tuple[str, int]:
    """The string value quoted at ``text[start]`` and the index after its closing quote."""
    quote, i, out = text[start], start + 1, []
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append(_ESCAPES.get(nxt, ch + nxt))
            i += 2
        elif ch == quote and _VALUE_END.match(text, i + 1):
            return "".join(out), i + 1
        else:
            out.append(ch)
            i += 1
    raise ActionError(f"unclosed quote in {verb}(...): {_quoted(text.strip())}")


def _uitars_point(args: dict[str, Any], verb: str, coords: CoordSpace) -> tuple[int, int] | None:
    """The screen pixel of a call's ``start_box`` (or ``point``); None when it names none.

    Raises:
        ActionError: a value that is neither a point ``(x,y)`` nor a box ``(x1,y1,x2,y2)``, or
            a point outside ``coords``.
    """
    value = next((args[k] for k in ("start_box", "point", "start_point") if k in args), None)
    if value is None:
        return None
    numbers = [float(v) for v in _NUMBER.findall(_BOX_TOKENS.sub(" ", str(value)))]
    if len(numbers) == 2:
        x, y = numbers
    elif len(numbers) == 4:
        x, y = (numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2
    else:
        raise ActionError(
            f"expected start_box as a point '(x1,y1)' or a box '(x1,y1,x2,y2)' in {verb}(...), "
            f"got {_quoted(str(value))}"
        )
    return coords.to_screen(x, y)


def _uitars_action(
    verb: str, args: dict[str, Any], thought: str, coords: CoordSpace
) -> dict[str, Any]:
    """The action dict of one UI-TARS call."""
    verb = _UITARS_ALIASES.get(verb, verb)
    if verb in _UITARS_LACKS:
        raise ActionError(
            f"{verb}: the benchmark has no {_UITARS_LACKS[verb]}; the actions are: "
            f"{_uitars_actions()}"
        )
    if verb == "call_user":
        raise ActionError(
            "call_user: there is no user to call here; carry on, or end with "
            f"{_UITARS_USAGE['finished']}; the actions are: {_uitars_actions()}"
        )
    if verb not in _UITARS_USAGE:
        raise ActionError(f"unknown action {verb!r}; expected one of: {_uitars_actions()}")
    narration = _narration(thought)

    def text_arg() -> str:
        value = args.get("content", args.get("text"))
        if not isinstance(value, str) or not value:
            raise ActionError(
                f"expected {_UITARS_USAGE[verb]} with the text in content, got {verb}({args})"
            )
        return value

    if verb == "click":
        if "element" in args:
            return _finish({"type": "click", "element": _element(args["element"])}, narration)
        point = _uitars_point(args, verb, coords)
        if point is None:
            raise ActionError(
                f"expected {_UITARS_USAGE['click']} or {_UITARS_USAGE['element']}, "
                f"got click({args}) with no start_box"
            )
        return _finish({"type": "click", "x": point[0], "y": point[1]}, narration)
    if verb == "hotkey":
        combo = args.get("key", args.get("hotkey"))
        if not isinstance(combo, str) or not combo.strip():
            raise ActionError(f"expected {_UITARS_USAGE['hotkey']}, got hotkey({args})")
        return _finish({"type": "key", "key": _key_combo(combo.split(), "'ctrl c'")}, narration)
    if verb in ("type", "speak"):
        return _finish({"type": verb, "text": text_arg()}, narration)
    if verb == "scroll":
        direction = str(args.get("direction", "")).strip().lower()
        if direction not in ("up", "down"):
            raise ActionError(
                f"expected {_UITARS_USAGE['scroll']} (the page scrolls up or down), "
                f"got direction {_quoted(str(args.get('direction', '')))}"
            )
        _uitars_point(args, verb, coords)  # checked; the env scrolls at the pointer
        action = {"type": "scroll", "direction": direction, "amount": UITARS_SCROLL_NOTCHES}
        return _finish(action, narration)
    if verb == "wait":
        seconds = args.get("seconds", args.get("time", UITARS_WAIT_S))
        try:
            seconds = float(seconds)
        except ValueError:
            raise ActionError(
                f"expected {_UITARS_USAGE['wait']} with N a number, got wait({args})"
            ) from None
        return _finish({"type": "wait", "seconds": seconds}, narration)
    content = args.get("content")
    note = f"Finished: {content}" if isinstance(content, str) and content.strip() else ""
    return _finish({"type": "done"}, _narration(thought, note))


def _element(value: Any) -> int:
    """A page element's number as a model wrote it: ``3``, ``'3'`` or ``'[3]'``.

    Raises:
        ActionError: not a whole number.
    """
    if isinstance(value, str):
        match = re.fullmatch(r"\s*\[?\s*(\d+)\s*\]?\s*", value)
        value = float(match.group(1)) if match else value
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value != int(value)
    ):
        raise ActionError(
            f"expected a page element's number N from the [PAGE ELEMENTS] list, got {value!r}"
        )
    return int(value)


# ---- Qwen2.5-VL / Fara-7B ---------------------------------------------------------------------

_QWEN_ACTIONS = ("key", "type", "left_click", "scroll", "wait", "speak", "terminate")
_QWEN_USAGE = {
    "key": '{"action": "key", "keys": ["ctrl", "a"]}',
    "type": '{"action": "type", "text": "..."}',
    "left_click": '{"action": "left_click", "coordinate": [x, y]} (or "element": N)',
    "scroll": '{"action": "scroll", "pixels": -500}',
    "wait": '{"action": "wait", "time": 2}',
    "speak": '{"action": "speak", "text": "..."}',
    "terminate": '{"action": "terminate", "status": "success"}',
}
_QWEN_LACKS = {
    "mouse_move": "mouse move without a click",
    "right_click": "right click",
    "middle_click": "middle click",
    "double_click": "double click",
    "triple_click": "triple click",
    "left_click_drag": "drag",
    "hscroll": "horizontal scroll",
    "answer": (
        "answer action: give an answer the way the task asks (type it into the page, or speak "
        "it when the task says to answer aloud)"
    ),
    "visit_url": "address bar: the task is this one page",
    "web_search": "web search: the task is this one page",
    "history_back": "back button: the task is this one page",
    "refresh": "reload: the task is this one page",
}
_QWEN_EXAMPLE = (
    f'{{"name": "{QWEN_FUNCTION}", "arguments": {{"action": "left_click", "coordinate": [x, y]}}}}'
)
_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_JSON_FENCE = re.compile(r"```[ \t]*(?:json)?[ \t]*\n?(.*?)(?:```|$)", re.DOTALL | re.IGNORECASE)
_THINK_TAGS = re.compile(r"</?think(?:ing)?>", re.IGNORECASE)


def _qwen_actions() -> str:
    return ", ".join(_QWEN_ACTIONS)


def _qwen_tool(coords: CoordSpace) -> dict[str, Any]:
    """The ``computer_use`` function, declared as Qwen-Agent declares its tools."""
    top_x, top_y = coords.bounds
    resolution = {"image": coords.fit.size, "screen": (SCREEN_WIDTH, SCREEN_HEIGHT)}.get(
        coords.name
    )
    description = [
        "Use a mouse and keyboard to interact with a web page in a browser, and take screenshots.",
        "* This is one web page on a screen: there is no address bar, terminal or other "
        "application.",
        "* The page runs in real time: content changes and sound plays while you think, so you "
        "may need to wait and look at the next screenshot to see the results of your actions.",
    ]
    if resolution is not None:
        description.append(f"* The screen's resolution is {resolution[0]}x{resolution[1]}.")
    description.append(
        "* Make sure to click any buttons, links, icons, etc with the cursor tip in the center "
        "of the element. Don't click boxes on their edges."
    )
    actions = f"""\
The action to perform. The available actions are:
* `key`: Press a key or a combination: the keys are pressed in order, then released in reverse \
order, e.g. ["ctrl", "a"] or ["Enter"].
* `type`: Type a string of text where the focus is (left_click the field first). End the text \
with "\\n" to press Enter after it.
* `left_click`: Click the left mouse button at the (x, y) `coordinate`, or at the centre of \
element `element` of the [PAGE ELEMENTS] list.
* `scroll`: Turn the mouse wheel where the mouse pointer is, by `pixels` ({SCROLL_NOTCH_PX} px a \
notch, at most {MAX_SCROLL} notches).
* `wait`: Wait `time` seconds (0 to {MAX_WAIT_S:g}) for the page to change, or to hear more.
* `speak`: Say `text` aloud. This works only when the task says to answer aloud.
* `terminate`: End the task and report its completion status; the page's verdict then stands."""
    return {
        "type": "function",
        "function": {
            "name_for_human": QWEN_FUNCTION,
            "name": QWEN_FUNCTION,
            "description": "\n".join(description),
            "parameters": {
                "properties": {
                    "action": {
                        "description": actions,
                        "enum": list(_QWEN_ACTIONS),
                        "type": "string",
                    },
                    "keys": {"description": "Required only by `action=key`.", "type": "array"},
                    "text": {
                        "description": "Required only by `action=type` and `action=speak`.",
                        "type": "string",
                    },
                    "coordinate": {
                        "description": f"(x, y): the point, in the coordinates stated in the "
                        f"prompt: x from 0 (left) to {top_x:g}, y from 0 (top) to {top_y:g}. "
                        "Required by `action=left_click` unless `element` is given.",
                        "type": "array",
                    },
                    "element": {
                        "description": "The number N of an element [N] of the [PAGE ELEMENTS] "
                        "list, to click its centre. Only for `action=left_click`.",
                        "type": "integer",
                    },
                    "pixels": {
                        "description": "The amount of scrolling to perform. Positive values "
                        "scroll up, negative values scroll down. Required only by "
                        "`action=scroll`.",
                        "type": "number",
                    },
                    "time": {
                        "description": "The seconds to wait. Required only by `action=wait`.",
                        "type": "number",
                    },
                    "status": {
                        "description": "The status of the task. Required only by "
                        "`action=terminate`.",
                        "type": "string",
                        "enum": ["success", "failure"],
                    },
                },
                "required": ["action"],
                "type": "object",
            },
            "args_format": "Format the arguments as a JSON object.",
        },
    }


class QwenFormat(ReplyFormat):
    """Qwen2.5-VL and Fara-7B: a ``<tool_call>`` of the ``computer_use`` function.

    The reply is ``<tool_call>{"name": "computer_use", "arguments": {"action": ...}}</tool_call>``
    (a missing closing tag, a fenced JSON block or a bare object are read too); the text before
    it becomes the narration. The actions and what they become:

    - ``left_click`` with ``coordinate`` [x, y] -> click, or with ``element`` N -> a click on
      page element N;
    - ``type`` with ``text`` -> type (a typed newline presses Enter; Fara's ``press_enter``
      adds one); a ``coordinate`` is checked but not clicked: the text goes where the focus is;
    - ``key`` with ``keys`` ["ctrl", "a"] -> key ``Control+a``;
    - ``scroll`` with ``pixels`` (positive up, negative down, as Qwen documents) -> that many
      pixels in 100 px notches, at least 1 and at most 20; a ``coordinate`` is checked, unused;
    - ``wait`` with ``time`` -> wait;
    - ``speak`` with ``text`` -> speak (the benchmark's own action);
    - ``terminate`` with ``status`` -> done, the status joining the narration;
    - Fara's ``pause_and_memorize_fact`` with ``fact`` -> a wait of 0 s whose narration keeps
      the fact.

    ``mouse_move``, ``right_click``, ``double_click``, ``triple_click``, ``left_click_drag``,
    ``answer`` and Fara's browser actions (``visit_url``, ``web_search``, ``history_back``,
    ``refresh``) are refused, naming the actions there are.

    Coordinates are pixels of the image the model is shown (this format's default: ``image``
    over ``1288x728:stretch``, the size Qwen2.5-VL's processor resizes this screen to).
    """

    name = "qwen"
    default_coords = "image"
    default_image_size = "1288x728:stretch"
    retry_hint = (
        'one <tool_call>{"name": "computer_use", "arguments": {"action": ...}}</tool_call>, '
        f"the action one of: {', '.join(_QWEN_ACTIONS)}"
    )

    def prompt(self, coords: CoordSpace, images: bool, grammar_prompt: str) -> str:
        """The Qwen-Agent function-calling prompt declaring ``computer_use``, with our notes."""
        x, y = _example_point(coords)
        tool = json.dumps(_qwen_tool(coords), ensure_ascii=False)
        return f"""\
{_situation(coords, images)}

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{tool}
</tools>

For each function call, return a json object with function name and arguments within \
<tool_call></tool_call> XML tags:
<tool_call>
{{"name": <function-name>, "arguments": <args-json-object>}}
</tool_call>

# Notes

- Call {QWEN_FUNCTION} exactly once per reply; the actions are: {_qwen_actions()}. There is no \
double click, right click, drag or mouse move.
- Before the <tool_call>, write what you newly saw in the screenshot and keyframes that may \
matter later (numbers, names, messages that may vanish) and your next step in a sentence. The \
environment keeps this text as your narration note and shows it back in the [NARRATION] \
section of later records, after the frames are gone: each frame is shown to you only once.
- To answer aloud (only when the task says so), use the speak action; to end the task, \
terminate.

Example:
A toast said the order code is E-4012. I click the Confirm button.
<tool_call>
{{"name": "{QWEN_FUNCTION}", "arguments": {{"action": "left_click", "coordinate": [{x}, {y}]}}}}
</tool_call>
"""

    def parse(self, reply: str, coords: CoordSpace) -> dict[str, Any]:
        """The action of a Qwen tool-call reply, in screen pixels (see the class docstring).

        Raises:
            ActionError: no tool call, JSON that does not parse, another function, an unknown
                or unsupported action, a bad argument or a point outside ``coords``.
        """
        if not isinstance(reply, str):
            raise ActionError(f"expected the reply as text, got {type(reply).__name__}")
        before, body = _tool_call_text(reply)
        arguments = _call_arguments(body)
        thought = _THINK_TAGS.sub(" ", before)
        return _qwen_action(arguments, thought, coords)


def _tool_call_text(reply: str) -> tuple[str, str]:
    """The text before the first tool call and the call's JSON text.

    Raises:
        ActionError: the reply holds no tool call.
    """
    for pattern in (_TOOL_CALL, _JSON_FENCE):
        match = pattern.search(reply)
        if match and "{" in match.group(1):
            body = match.group(1)
            fenced = _JSON_FENCE.search(body)  # a fence inside the tags
            return reply[: match.start()], fenced.group(1) if fenced else body
    start = reply.find("{")
    if start >= 0 and '"action"' in reply[start:]:
        return reply[:start], reply[start:]
    raise ActionError(
        f"expected a tool call such as <tool_call>{_QWEN_EXAMPLE}</tool_call>; got none in "
        f"{_quoted(reply.strip())}"
    )


def _call_arguments(body: str) -> dict[str, Any]:
    """The ``arguments`` object of a tool call's JSON (JSON, or a Python-style dict).

    Raises:
        ActionError: the text is not an object, names another function, or has no arguments.
    """
    start, end = body.find("{"), body.rfind("}")
    call: Any = None
    if start >= 0:
        try:
            call, _ = json.JSONDecoder().raw_decode(body[start:])
        except (ValueError, RecursionError):
            try:
                call = ast.literal_eval(body[start : end + 1])
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                call = None
    if not isinstance(call, dict):
        raise ActionError(
            f'expected the tool call as a JSON object {{"name": "{QWEN_FUNCTION}", "arguments": '
            f'{{"action": ...}}}}, got {_quoted(body.strip())}'
        )
    if "arguments" not in call and "action" in call:
        arguments: Any = call  # the arguments alone
    else:
        name = call.get("name", QWEN_FUNCTION)
        if name != QWEN_FUNCTION:
            raise ActionError(f"expected a call of the {QWEN_FUNCTION} function, got {name!r}")
        arguments = call.get("arguments")
    if isinstance(arguments, str):  # arguments sent as a JSON string, the OpenAI way
        try:
            arguments = json.loads(arguments)
        except ValueError:
            arguments = None
    if not isinstance(arguments, dict) or not isinstance(arguments.get("action"), str):
        raise ActionError(
            f'expected "arguments": {{"action": ...}} with the action one of: '
            f"{_qwen_actions()}; got {_quoted(json.dumps(arguments, default=str))}"
        )
    return arguments


def _qwen_point(args: dict[str, Any], action: str, coords: CoordSpace) -> tuple[int, int] | None:
    """The screen pixel of a call's ``coordinate``; None when it gives none.

    Raises:
        ActionError: not two numbers, or a point outside ``coords``.
    """
    point = args.get("coordinate")
    if point is None:
        return None
    if not isinstance(point, (list, tuple)) or len(point) != 2:
        raise ActionError(
            f'expected "coordinate": [x, y] for {action}, got {_quoted(json.dumps(point))}'
        )
    return coords.to_screen(point[0], point[1])


def _qwen_action(args: dict[str, Any], thought: str, coords: CoordSpace) -> dict[str, Any]:
    """The action dict of one ``computer_use`` call's arguments."""
    action = args["action"].strip().lower()
    if action in _QWEN_LACKS:
        raise ActionError(
            f"{action}: the benchmark has no {_QWEN_LACKS[action]}; the actions are: "
            f"{_qwen_actions()}"
        )
    narration = _narration(thought)
    if action == "pause_and_memorize_fact":  # Fara's note to itself: a narration
        fact = args.get("fact")
        if not isinstance(fact, str) or not fact.strip():
            raise ActionError('expected pause_and_memorize_fact with "fact": "..."')
        return _finish({"type": "wait", "seconds": 0.0}, _narration(thought, fact))
    if action not in _QWEN_USAGE:
        raise ActionError(
            f"unknown action {action!r}; expected one of: {', '.join(_QWEN_USAGE.values())}"
        )

    def need(name: str, kinds: type | tuple[type, ...]) -> Any:
        value = args.get(name)
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise ActionError(f"expected {_QWEN_USAGE[action]}, got {_quoted(json.dumps(args))}")
        return value

    if action == "left_click":
        if "element" in args:
            return _finish({"type": "click", "element": _element(args["element"])}, narration)
        point = _qwen_point(args, action, coords)
        if point is None:
            raise ActionError(f"expected {_QWEN_USAGE[action]}, got {_quoted(json.dumps(args))}")
        return _finish({"type": "click", "x": point[0], "y": point[1]}, narration)
    if action == "type":
        text = need("text", str)
        _qwen_point(args, action, coords)  # checked; the text goes where the focus is
        if args.get("press_enter") is True and not text.endswith("\n"):
            text += "\n"
        return _finish({"type": "type", "text": text}, narration)
    if action == "speak":
        return _finish({"type": "speak", "text": need("text", str)}, narration)
    if action == "key":
        keys = need("keys", (list, str))
        keys = [keys] if isinstance(keys, str) else keys
        return _finish({"type": "key", "key": _key_combo(keys, '["ctrl", "a"]')}, narration)
    if action == "scroll":
        pixels = need("pixels", (int, float))
        try:
            pixels = float(pixels)
        except OverflowError:  # an int past any float
            pixels = math.inf
        if not pixels or not math.isfinite(pixels):
            raise ActionError(
                f"expected {_QWEN_USAGE['scroll']}: pixels positive to scroll up, negative to "
                f"scroll down, got {_quoted(str(args['pixels']))}"
            )
        _qwen_point(args, action, coords)  # checked; the env scrolls at the pointer
        notches = max(1, min(MAX_SCROLL, round(abs(pixels) / SCROLL_NOTCH_PX)))
        direction = "up" if pixels > 0 else "down"
        return _finish({"type": "scroll", "direction": direction, "amount": notches}, narration)
    if action == "wait":
        return _finish({"type": "wait", "seconds": need("time", (int, float))}, narration)
    status = args.get("status")
    note = f"Terminated: {status}" if isinstance(status, str) and status.strip() else ""
    return _finish({"type": "done"}, _narration(thought, note))


# ---- choosing one ----------------------------------------------------------------------------

_FORMATS: dict[str, ReplyFormat] = {f.name: f for f in (TextFormat(), UITarsFormat(), QwenFormat())}


def reply_format(name: str) -> ReplyFormat:
    """The reply format called ``name``.

    Raises:
        ValueError: ``name`` is not one of :data:`REPLY_FORMATS`.
    """
    if not isinstance(name, str) or name not in _FORMATS:
        raise ValueError(f"expected a reply format in {', '.join(REPLY_FORMATS)}, got {name!r}")
    return _FORMATS[name]
