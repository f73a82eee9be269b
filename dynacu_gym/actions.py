"""Actions: their types, the Dict action space, and their text form.

Text form, one action per line (an optional narration follows ``#``)::

    click 640 400
    click [3]
    type "April 28"
    key Control+a
    scroll down 3
    speak "The launch moved to April 28."
    wait 2.5
    done
    click 100 200  # narration: the toast said E-4012

As a dict (what ``env.step`` takes): ``{"type": "click", "x": 640, "y": 400}``; ``type`` may be
the name or the index in :class:`ActionType`. ``click [3]`` (``{"type": "click", "element": 3}``)
clicks the centre of element 3 of the page elements the latest observation listed (the
elements channel); ``element`` 0 means the click's ``x`` and ``y``. Fields an action does not
use are ignored; a field no action has (a misspelt name) is an error. Text to type or speak is
printable: control characters other than newline and tab are refused (keys are pressed with
``key``).
"""

from __future__ import annotations

import difflib
import enum
import math
import re
import string
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from gymnasium import spaces

from dynacu_gym.errors import ActionError

SCREEN_WIDTH = 1280
SCREEN_HEIGHT = 720
MAX_TEXT = 4096  # characters in one type/speak action
MAX_NARRATION = 2000  # characters of narration on one action
MAX_KEY = 64  # characters in one key combination
MAX_SCROLL = 20  # wheel notches in one scroll action
SCROLL_NOTCH_PX = 100  # pixels one notch scrolls
MAX_WAIT_S = 30.0  # seconds in one wait action; wait again to wait longer
MAX_SHOWN = 60  # characters of a bad value an error message quotes
MAX_ELEMENTS = 200  # page elements one observation lists; a click may name [1]..[200]

# Printable characters of the Basic Multilingual Plane up to the CJK blocks, plus newline and
# tab: Latin, Greek, Cyrillic, Hebrew, Arabic, Indic scripts, punctuation, arrows, symbols. Text
# in observations is mapped into this set (see ``to_charset``) so it always lies in the space.
TEXT_CHARSET = (
    "".join(ch for ch in map(chr, range(0x20, 0x3000)) if ch.isprintable()) + "\n\t\ufffd"
)
_CHARSET = frozenset(TEXT_CHARSET)


class ActionType(enum.IntEnum):
    """The kinds of action; the value is the index in the ``type`` Discrete space."""

    CLICK = 0
    TYPE = 1
    KEY = 2
    SCROLL = 3
    SPEAK = 4
    WAIT = 5
    DONE = 6


@dataclass(frozen=True)
class Action:
    """One validated action.

    Attributes:
        type: what to do.
        x: click column in screen pixels, 0..1279.
        y: click row in screen pixels, 0..719.
        text: the text to type or speak.
        key: a key combination in Playwright's names, e.g. ``Enter`` or ``Control+a``.
        direction: ``up`` or ``down`` for scroll.
        amount: wheel notches for scroll, 1..20 (one notch is 100 px).
        seconds: how long to wait, 0..30.
        element: for a click, the index ``n`` of a listed page element (``[n]`` in the
            record) whose centre to click, resolved by the env; 0: click at ``x``, ``y``.
        narration: the agent's note on what it saw; persists in later observations.
    """

    type: ActionType
    x: int = 0
    y: int = 0
    text: str = ""
    key: str = ""
    direction: str = "down"
    amount: int = 1
    seconds: float = 0.0
    element: int = 0
    narration: str = ""


ACTION_FIELDS = tuple(f.name for f in fields(Action))  # the keys an action dict may have


def to_charset(text: str, max_length: int | None = None) -> str:
    """Map ``text`` into :data:`TEXT_CHARSET` (others become U+FFFD), cut to ``max_length``."""
    if not all(ch in _CHARSET for ch in text):
        text = "".join(ch if ch in _CHARSET else "\ufffd" for ch in text)
    if max_length is not None and len(text) > max_length:
        text = text[: max_length - 1] + "\u2026"
    return text


def _shown(value: Any) -> str:
    """``value`` as an error message quotes it: its repr, cut short (an agent may send anything)."""
    if isinstance(value, int) and value.bit_length() > 4 * MAX_SHOWN:  # str() refuses the longest
        return f"<an integer of {value.bit_length()} bits>"
    text = repr(value)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "\u2026"


def action_space() -> spaces.Dict:
    """The Dict action space: ``type`` plus the fields each action type needs."""
    return spaces.Dict(
        {
            "type": spaces.Discrete(len(ActionType)),
            "x": spaces.Discrete(SCREEN_WIDTH),
            "y": spaces.Discrete(SCREEN_HEIGHT),
            "text": spaces.Text(MAX_TEXT, min_length=0, charset=TEXT_CHARSET),
            "key": spaces.Discrete(len(KEY_VOCABULARY)),
            "direction": spaces.Discrete(2),  # 0 up, 1 down
            "amount": spaces.Discrete(MAX_SCROLL, start=1),
            "seconds": spaces.Box(0.0, MAX_WAIT_S, shape=(), dtype=np.float32),
            "element": spaces.Discrete(MAX_ELEMENTS + 1),  # 0: click at x, y
            "narration": spaces.Text(MAX_NARRATION, min_length=0, charset=TEXT_CHARSET),
        }
    )


# Key names Playwright understands (KeyboardEvent.key values), and friendly aliases.
_NAMED_KEYS = {
    "Enter", "Tab", "Escape", "Backspace", "Delete", "Insert", "Home", "End", "PageUp",
    "PageDown", "ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Space", "CapsLock",
    "ContextMenu", "Shift", "Control", "Alt", "Meta", "ControlOrMeta",
    *(f"F{i}" for i in range(1, 13)),
}  # fmt: skip
_KEY_ALIASES = {
    "enter": "Enter", "return": "Enter", "tab": "Tab", "esc": "Escape", "escape": "Escape",
    "backspace": "Backspace", "delete": "Delete", "del": "Delete", "insert": "Insert",
    "home": "Home", "end": "End", "pageup": "PageUp", "pagedown": "PageDown",
    "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight",
    "arrowup": "ArrowUp", "arrowdown": "ArrowDown", "arrowleft": "ArrowLeft",
    "arrowright": "ArrowRight", "space": "Space", "spacebar": "Space", "shift": "Shift",
    "ctrl": "Control", "control": "Control", "alt": "Alt", "option": "Alt", "meta": "Meta",
    "cmd": "Meta", "command": "Meta", "super": "Meta", "capslock": "CapsLock",
}  # fmt: skip


# The keys and combinations the Dict space indexes (``key`` may also be any valid combination
# as a string): named keys, printable ASCII characters, and the usual editing shortcuts.
KEY_VOCABULARY: tuple[str, ...] = (
    *sorted(_NAMED_KEYS),
    *(ch for ch in string.printable if ch.isprintable() and ch not in " "),
    *(f"Control+{k}" for k in "acvxzyf"),
    "Control+Shift+z", "Shift+Tab", "Alt+Tab", "Control+Enter", "Shift+Enter",
    "Control+Backspace", "Control+ArrowLeft", "Control+ArrowRight", "Shift+ArrowLeft",
    "Shift+ArrowRight", "Shift+Home", "Shift+End",
)  # fmt: skip


def normalize_key(combo: str) -> str:
    """Check a key combination and return it in Playwright's spelling.

    Raises:
        ActionError: a part of the combination is not a key.
    """
    if not combo or combo.strip() != combo:
        raise ActionError(f"expected a key such as 'Enter' or 'Control+a', got {_shown(combo)}")
    parts = combo.split("+") if combo != "+" else ["+"]
    if combo.endswith("++"):
        parts = [*combo[:-2].split("+"), "+"]
    out = []
    for part in parts:
        if len(part) == 1 and part.isprintable():
            out.append(part)
        elif part in _NAMED_KEYS:
            out.append(part)
        elif part.lower() in _KEY_ALIASES:
            out.append(_KEY_ALIASES[part.lower()])
        elif re.fullmatch(r"[fF]([1-9]|1[0-2])", part):
            out.append(part.upper())
        else:
            raise ActionError(
                f"unknown key {_shown(part)} in {_shown(combo)}; expected a single character or "
                f"one of {', '.join(sorted(_NAMED_KEYS))}"
            )
    return "+".join(out)


def _as_int(value: Any, name: str) -> int:
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer, float)):
        raise ActionError(f"expected an integer for {name!r}, got {_shown(value)}")
    if isinstance(value, float) and not value.is_integer():
        raise ActionError(f"expected an integer for {name!r}, got {_shown(value)}")
    return int(value)


def _as_float(value: Any, name: str) -> float:
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise ActionError(f"expected a number of seconds for {name!r}, got {_shown(value)}")
    try:
        number = float(value)
    except OverflowError:  # an int past any float
        number = math.inf
    if not math.isfinite(number):
        raise ActionError(f"expected a finite number for {name!r}, got {_shown(value)}")
    return number


def _as_text(value: Any, name: str, max_length: int) -> str:
    if not isinstance(value, str):
        raise ActionError(f"expected a string for {name!r}, got {type(value).__name__}")
    if len(value) > max_length:
        raise ActionError(
            f"{name!r} is {len(value)} characters; at most {max_length} are allowed per action"
        )
    return value


def _is_control(ch: str) -> bool:
    """Whether ``ch`` is a control character other than newline and tab (not typeable text)."""
    return ch not in "\n\t" and unicodedata.category(ch) == "Cc"


def _action_type(value: Any) -> ActionType:
    if isinstance(value, ActionType):
        return value
    if isinstance(value, str):
        try:
            return ActionType[value.strip().upper()]
        except KeyError:
            pass
    else:
        try:
            return ActionType(_as_int(value, "type"))
        except (ActionError, ValueError):
            pass
    names = ", ".join(t.name.lower() for t in ActionType)
    raise ActionError(f"expected an action type in ({names}) or its index, got {_shown(value)}")


def validate_action(raw: Mapping[str, Any] | Action) -> Action:
    """Turn a step argument into a checked :class:`Action`.

    Raises:
        ActionError: the action is malformed or out of range; the message says what was
            expected.
    """
    if isinstance(raw, Action):
        raw = raw.__dict__
    if not isinstance(raw, Mapping):
        raise ActionError(
            f"expected an action dict such as {{'type': 'click', 'x': 10, 'y': 20}} or the "
            f"result of parse_action(), got {type(raw).__name__}"
        )
    if "type" not in raw:
        raise ActionError("the action has no 'type'")
    kind = _action_type(raw["type"])
    unknown = [name for name in raw if name not in ACTION_FIELDS]
    if unknown:
        name = unknown[0]
        close = difflib.get_close_matches(name, ACTION_FIELDS, n=1) if isinstance(name, str) else []
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ActionError(
            f"unknown field {_shown(name)} in the action{hint} (fields: {', '.join(ACTION_FIELDS)})"
        )
    narration = _as_text(raw.get("narration", ""), "narration", MAX_NARRATION)

    def need(name: str) -> Any:
        if name not in raw:
            raise ActionError(f"a {kind.name.lower()} action needs {name!r}")
        return raw[name]

    if kind == ActionType.CLICK:
        element = _as_int(raw.get("element", 0), "element")
        if not 0 <= element <= MAX_ELEMENTS:
            raise ActionError(
                f"expected a page element's index in 1..{MAX_ELEMENTS} (or 0 to click at x, y), "
                f"got {_shown(element)}"
            )
        if element:
            return Action(kind, element=element, narration=narration)
        if "x" not in raw or "y" not in raw:
            raise ActionError(
                "a click action needs 'x' and 'y' (screen pixels) or 'element' (the index n of "
                "a page element listed as [n])"
            )
        x, y = _as_int(raw["x"], "x"), _as_int(raw["y"], "y")
        if not (0 <= x < SCREEN_WIDTH and 0 <= y < SCREEN_HEIGHT):
            raise ActionError(
                f"click ({_shown(x)}, {_shown(y)}) is off the screen; expected "
                f"0 <= x < {SCREEN_WIDTH} and 0 <= y < {SCREEN_HEIGHT}"
            )
        return Action(kind, x=x, y=y, narration=narration)
    if kind in (ActionType.TYPE, ActionType.SPEAK):
        text = _as_text(need("text"), "text", MAX_TEXT)
        control = next((ch for ch in text if _is_control(ch)), None)
        if control is not None:
            raise ActionError(
                f"'text' holds the control character U+{ord(control):04X} at index "
                f"{text.index(control)}; {kind.name.lower()} takes printable text, newlines and "
                "tabs (press keys with the key action)"
            )
        if kind == ActionType.SPEAK and not text.strip():
            raise ActionError("speak needs some words to say")
        return Action(kind, text=text, narration=narration)
    if kind == ActionType.KEY:
        key = need("key")
        if not isinstance(key, str):
            index = _as_int(key, "key")
            if not 0 <= index < len(KEY_VOCABULARY):
                raise ActionError(
                    f"expected a key name or an index in 0..{len(KEY_VOCABULARY) - 1}, "
                    f"got {_shown(index)}"
                )
            key = KEY_VOCABULARY[index]
        key = normalize_key(_as_text(key, "key", MAX_KEY))
        return Action(kind, key=key, narration=narration)
    if kind == ActionType.SCROLL:
        direction: Any = raw.get("direction", "down")
        if not isinstance(direction, str):
            index = _as_int(direction, "direction")
            direction = {0: "up", 1: "down"}.get(index, index)
        if direction not in ("up", "down"):
            raise ActionError(f"expected scroll direction 'up' or 'down', got {_shown(direction)}")
        amount = _as_int(raw.get("amount", 1), "amount")
        if not 1 <= amount <= MAX_SCROLL:
            raise ActionError(f"expected a scroll amount in 1..{MAX_SCROLL}, got {_shown(amount)}")
        return Action(kind, direction=direction, amount=amount, narration=narration)
    if kind == ActionType.WAIT:
        seconds = _as_float(need("seconds"), "seconds")
        if not 0.0 <= seconds <= MAX_WAIT_S:
            raise ActionError(
                f"expected wait seconds in [0, {MAX_WAIT_S:g}], got {seconds:g}; "
                "wait again to wait longer"
            )
        return Action(kind, seconds=seconds, narration=narration)
    return Action(kind, narration=narration)


def _tokenize(line: str) -> tuple[list[str], str]:
    r"""Split an action line into tokens and a narration (after a '#' outside quotes).

    Tokens are separated by spaces; a double-quoted token may hold spaces, ``\\"`` and ``\\\\``.
    """
    tokens: list[str] = []
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch.isspace():
            i += 1
        elif ch == "#":
            narration = line[i + 1 :].strip()
            if narration.lower().startswith("narration:"):
                narration = narration[len("narration:") :].strip()
            return tokens, narration
        elif ch == '"':
            i += 1
            buf = []
            while True:
                if i >= n:
                    raise ActionError(
                        f'unclosed quote in {_shown(line)}; write text as "like this"'
                    )
                if line[i] == "\\" and i + 1 < n and line[i + 1] in '"\\':
                    buf.append(line[i + 1])
                    i += 2
                elif line[i] == '"':
                    i += 1
                    break
                else:
                    buf.append(line[i])
                    i += 1
            tokens.append("".join(buf))
        else:
            j = i
            while j < n and not line[j].isspace():
                j += 1
            tokens.append(line[i:j])
            i = j
    return tokens, ""


def parse_action(text: str) -> dict[str, Any]:
    """Parse one action in text form into the dict ``env.step`` takes.

    Raises:
        ActionError: the text is not an action; the message names the expected form.
    """
    if not isinstance(text, str):
        raise ActionError(f"expected an action as text, got {type(text).__name__}")
    tokens, narration = _tokenize(text.strip())
    if not tokens:
        raise ActionError("expected an action such as 'click 640 400' or 'wait 2', got nothing")
    verb, args = tokens[0].lower(), tokens[1:]
    usage = {
        "click": "click X Y | click [N]",
        "type": 'type "text"',
        "key": "key Combo",
        "scroll": "scroll up|down N",
        "speak": 'speak "text"',
        "wait": "wait SECONDS",
        "done": "done",
    }
    if verb not in usage:
        raise ActionError(
            f"unknown action {_shown(verb)}; expected one of: {', '.join(usage.values())}"
        )

    def fail() -> ActionError:
        return ActionError(f"expected '{usage[verb]}', got {_shown(text.strip())}")

    action: dict[str, Any]
    if verb == "click" and args and args[0].startswith("["):
        match = re.fullmatch(r"\[(\d+)\]", "".join(args))  # "[12]" or "[ 12 ]"
        if not match:
            raise fail()
        action = {"type": "click", "element": int(match.group(1))}
        if not action["element"]:
            raise ActionError(f"page elements are numbered from [1]; got {_shown(text.strip())}")
    elif verb == "click":
        if len(args) != 2:
            raise fail()
        try:
            x, y = (float(a) for a in args)
        except ValueError as e:
            raise fail() from e
        action = {"type": "click", "x": int(round(x)), "y": int(round(y))}
    elif verb in ("type", "speak"):
        if len(args) != 1:
            raise fail()
        action = {"type": verb, "text": args[0]}
    elif verb == "key":
        if len(args) != 1:
            raise fail()
        action = {"type": "key", "key": normalize_key(args[0])}
    elif verb == "scroll":
        if len(args) not in (1, 2) or args[0].lower() not in ("up", "down"):
            raise fail()
        try:
            amount = int(args[1]) if len(args) == 2 else 1
        except ValueError as e:
            raise fail() from e
        action = {"type": "scroll", "direction": args[0].lower(), "amount": amount}
    elif verb == "wait":
        if len(args) > 1:
            raise fail()
        try:
            seconds = float(args[0].rstrip("s")) if args else 1.0
        except ValueError as e:
            raise fail() from e
        action = {"type": "wait", "seconds": seconds}
    else:
        if args:
            raise fail()
        action = {"type": "done"}
    if narration:
        action["narration"] = narration
    validate_action(action)
    return action


def format_action(action: Mapping[str, Any] | Action) -> str:
    """The text form of an action; ``parse_action(format_action(a))`` gives ``a`` back."""
    act = validate_action(action)
    kind = act.type
    if kind == ActionType.CLICK:
        out = f"click [{act.element}]" if act.element else f"click {act.x} {act.y}"
    elif kind in (ActionType.TYPE, ActionType.SPEAK):
        out = f"{kind.name.lower()} {_quote(act.text)}"
    elif kind == ActionType.KEY:
        out = f"key {act.key}"
    elif kind == ActionType.SCROLL:
        out = f"scroll {act.direction} {act.amount}"
    elif kind == ActionType.WAIT:
        out = f"wait {act.seconds:g}"
    else:
        out = "done"
    if act.narration:
        out += f"  # {act.narration}"
    return out


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
