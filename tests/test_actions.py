"""Actions: parsing, formatting and validation (pure logic)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from dynacu_gym.actions import (
    ActionError,
    ActionType,
    action_space,
    format_action,
    normalize_key,
    parse_action,
    to_charset,
    validate_action,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("click 640 400", {"type": "click", "x": 640, "y": 400}),
        ('type "April 28"', {"type": "type", "text": "April 28"}),
        ("key Enter", {"type": "key", "key": "Enter"}),
        ("key ctrl+a", {"type": "key", "key": "Control+a"}),
        ("scroll down 3", {"type": "scroll", "direction": "down", "amount": 3}),
        ("scroll up", {"type": "scroll", "direction": "up", "amount": 1}),
        ('speak "It is Canberra."', {"type": "speak", "text": "It is Canberra."}),
        ("wait 2.5", {"type": "wait", "seconds": 2.5}),
        ("wait 3s", {"type": "wait", "seconds": 3.0}),
        ("done", {"type": "done"}),
        ("CLICK 1 2", {"type": "click", "x": 1, "y": 2}),
        (
            'type "a \\"quoted\\" # word"  # narration: saw the code E-4012',
            {"type": "type", "text": 'a "quoted" # word', "narration": "saw the code E-4012"},
        ),
    ],
)
def test_parse_action(text, expected):
    assert parse_action(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "click 640 400",
        'type "with \\"quotes\\" and \\\\ backslash"',
        "key Control+Shift+K",
        "scroll down 20",
        'speak "hello"',
        "wait 0",
        "done  # all finished",
    ],
)
def test_format_round_trip(text):
    action = parse_action(text)
    assert parse_action(format_action(action)) == action


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "got nothing"),
        ("jump 3", "unknown action 'jump'"),
        ("click 640", "expected 'click X Y | click [N]'"),
        ("click a b", "expected 'click X Y | click [N]'"),
        ("click 1280 10", "off the screen"),
        ("click -1 10", "off the screen"),
        ('type "unclosed', "unclosed quote"),
        ("type two words", "expected 'type \"text\"'"),
        ("scroll sideways 2", "scroll up|down N"),
        ("scroll down 21", "scroll amount in 1..20"),
        ("wait 31", "wait seconds in [0, 30]"),
        ("wait -1", "wait seconds in [0, 30]"),
        ("wait soon", "expected 'wait SECONDS'"),
        ("key Hyper+q", "unknown key 'Hyper'"),
        ('speak ""', "speak needs some words"),
        ("done now", "expected 'done'"),
    ],
)
def test_parse_errors_say_what_was_expected(text, message):
    with pytest.raises(
        ActionError,
        match=message.replace("(", r"\(")
        .replace("[", r"\[")
        .replace("|", r"\|")
        .replace(")", r"\)")
        .replace("]", r"\]"),
    ):
        parse_action(text)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("click 1 2", "expected an action dict"),
        ({}, "no 'type'"),
        ({"type": "fly"}, "expected an action type"),
        ({"type": 99}, "expected an action type"),
        ({"type": "click", "x": 1}, "needs 'x' and 'y'"),
        ({"type": "click", "x": "1", "y": 2}, "expected an integer for 'x'"),
        ({"type": "click", "x": 1.5, "y": 2}, "expected an integer for 'x'"),
        ({"type": "click", "x": True, "y": 2}, "expected an integer for 'x'"),
        ({"type": "type", "text": 5}, "expected a string for 'text'"),
        ({"type": "type", "text": "x" * 100_000}, "at most 4096"),
        ({"type": "wait", "seconds": float("nan")}, "finite"),
        ({"type": "scroll", "direction": 7}, "scroll direction"),
        ({"type": "done", "narration": ["a"]}, "expected a string for 'narration'"),
    ],
)
def test_validate_rejects_malformed(raw, message):
    with pytest.raises(ActionError, match=message):
        validate_action(raw)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"type": 10**5000}, "or its index, got <an integer of 16610 bits>"),
        ({"type": "click", "x": 10**5000, "y": 2}, "click (<an integer of 16610 bits>, 2) is off"),
        ({"type": "key", "key": 10**5000}, "an index in 0..146, got <an integer of 16610 bits>"),
        ({"type": "scroll", "amount": -(10**5000)}, "amount in 1..20, got <an integer of 16610"),
        ({"type": "scroll", "direction": 10**5000}, "'up' or 'down', got <an integer of 16610"),
        ({"type": "scroll", "direction": 2}, "'up' or 'down', got 2"),
        ({"type": "wait", "seconds": 10**400}, "finite number for 'seconds', got <an integer"),
        ({"type": "click", "x": "9" * 100_000, "y": 2}, "for 'x', got '999"),
        ({"type": "type", "text": ["x" * 100_000]}, "expected a string for 'text', got list"),
        ({"type": "scroll", "directon": "up"}, "unknown field 'directon' in the action; did you"),
        ({"type": "click", "x": 1, "y": 2, "button": "right"}, "unknown field 'button'"),
        ({"type": "done", 3: 4}, "unknown field 3 in the action (fields: type, x, y, text"),
        ({"type": "type", "text": "a\x00b"}, "control character U+0000 at index 1; type takes"),
        ({"type": "type", "text": "line\r"}, "control character U+000D at index 4"),
        ({"type": "speak", "text": "hello\x1b"}, "U+001B at index 5; speak takes printable"),
        ({"type": "speak", "text": "\x85"}, "U+0085"),
    ],
)
def test_bad_values_get_a_short_clear_error(raw, message):
    """Whatever an agent sends, the error says what was wrong in a line, quoting little of it."""
    with pytest.raises(ActionError) as info:
        validate_action(raw)
    assert message in str(info.value)
    assert len(str(info.value)) < 300


def test_text_in_any_script_with_newlines_and_tabs_is_valid():
    text = "Grüße, Привет, مرحبا, ελληνικά, 日本語, 😀\n\tnext line"
    for kind in ("type", "speak"):
        assert validate_action({"type": kind, "text": text}).text == text


def test_space_samples_are_valid_actions():
    space = action_space()
    space.seed(0)
    for _ in range(200):
        sample = space.sample()
        assert space.contains(sample)
        action = validate_action(sample)
        assert action.type == ActionType(int(sample["type"]))


def test_numpy_fields_are_accepted():
    action = validate_action({"type": np.int64(0), "x": np.int64(3), "y": np.array(4)})
    assert (action.x, action.y) == (3, 4)


@pytest.mark.parametrize(
    ("combo", "expected"),
    [
        ("enter", "Enter"),
        ("Esc", "Escape"),
        ("cmd+c", "Meta+c"),
        ("F5", "F5"),
        ("f12", "F12"),
        ("Shift+Tab", "Shift+Tab"),
        ("a", "a"),
        ("Control++", "Control++"),
    ],
)
def test_key_names(combo, expected):
    assert normalize_key(combo) == expected


def test_to_charset_maps_unknown_characters_and_cuts():
    assert to_charset("héllo — ok") == "héllo — ok"
    assert to_charset("emoji 😀") == "emoji \ufffd"
    assert to_charset("x" * 10, max_length=5) == "xxxx\u2026"


# ---- clicks on page elements ------------------------------------------------------------------


def test_click_on_an_element_parses_validates_and_formats():
    assert parse_action("click [3]") == {"type": "click", "element": 3}
    assert parse_action("click [ 12 ]  # the Join button") == {
        "type": "click",
        "element": 12,
        "narration": "the Join button",
    }
    act = validate_action({"type": "click", "element": 3, "x": 5})  # x, y are ignored
    assert (act.element, act.x, act.y) == (3, 0, 0)
    assert format_action({"type": "click", "element": 3}) == "click [3]"
    assert parse_action(format_action(parse_action("click [7]  # note"))) == parse_action(
        "click [7]  # note"
    )
    # element 0 is the coordinates' click
    assert validate_action({"type": "click", "element": 0, "x": 4, "y": 5}).element == 0


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("click [0]", "numbered from [1]"),
        ("click [x]", "expected 'click X Y | click [N]'"),
        ("click [3] 4", "expected 'click X Y | click [N]'"),
        ("click [201]", "index in 1..200"),
        ({"type": "click", "element": -1}, "index in 1..200"),
        ({"type": "click", "element": "3"}, "expected an integer for 'element'"),
        ({"type": "click", "element": 0}, "or 'element'"),
    ],
)
def test_bad_element_clicks_say_what_was_expected(raw, message):
    with pytest.raises(ActionError, match=re.escape(message)):
        parse_action(raw) if isinstance(raw, str) else validate_action(raw)


def test_the_action_space_holds_element_clicks():
    space = action_space()
    assert space["element"].n == 201  # 0: at x, y; 1..200: the listed elements
    sample = space.sample()
    validate_action({k: v for k, v in sample.items() if k != "key"} | {"type": "click"})
