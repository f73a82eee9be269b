"""Reply formats of open computer-use models: prompts and replies read into actions (pure logic)."""

from __future__ import annotations

import json
import re

import pytest

from dynacu_agents.coords import CoordSpace, ImageFit
from dynacu_agents.formats import REPLY_FORMATS, reply_format
from dynacu_agents.llm import parse_reply, system_prompt
from dynacu_gym.actions import MAX_NARRATION, ActionError, validate_action

NORM = CoordSpace("norm1000")
NORM1 = CoordSpace("norm1")
SCREEN = CoordSpace("screen")
QWEN_IMAGE = CoordSpace("image", ImageFit.parse("1288x728:stretch"))
# The screen padded into a square: the image's 1000x562 pixels at (0, 219) are the screen.
SQUARE = CoordSpace("norm1000", ImageFit.parse("1000x1000"))
SPACES = [NORM, NORM1, SCREEN, QWEN_IMAGE, SQUARE, CoordSpace("image", ImageFit.parse("1024"))]

UITARS = reply_format("uitars")
QWEN = reply_format("qwen")


def tool_call(arguments: dict, before: str = "") -> str:
    call = json.dumps({"name": "computer_use", "arguments": arguments})
    return f"{before}<tool_call>\n{call}\n</tool_call>"


# ---- choosing a format ---------------------------------------------------------------------


def test_the_formats_and_their_defaults() -> None:
    assert REPLY_FORMATS == ("text", "uitars", "qwen")
    assert [reply_format(name).name for name in REPLY_FORMATS] == list(REPLY_FORMATS)
    defaults = {
        name: (reply_format(name).default_coords, reply_format(name).default_image_size)
        for name in REPLY_FORMATS
    }
    assert defaults == {
        "text": ("screen", None),
        "uitars": ("norm1000", None),
        "qwen": ("image", "1288x728:stretch"),
    }
    # The defaults make a working coordinate space.
    for name in REPLY_FORMATS:
        fmt = reply_format(name)
        fit = ImageFit.parse(fmt.default_image_size or "full")
        assert CoordSpace(fmt.default_coords, fit).name == fmt.default_coords


@pytest.mark.parametrize("name", ["UI-TARS", "", "Text", None])
def test_an_unknown_format_names_the_choices(name: object) -> None:
    with pytest.raises(ValueError, match=r"expected a reply format in text, uitars, qwen, got"):
        reply_format(name)  # type: ignore[arg-type]


# ---- text: the benchmark's own lines -------------------------------------------------------


def test_text_returns_the_grammar_prompt_unchanged() -> None:
    grammar = system_prompt(NORM, True)
    assert reply_format("text").prompt(NORM, True, grammar) is grammar
    assert reply_format("text").prompt(SCREEN, False, "anything") == "anything"


@pytest.mark.parametrize(
    ("reply", "coords"),
    [
        ("click 500 500  # narration: a toast", NORM),
        ('I will type it.\n```\ntype "April 28"\n```', SCREEN),
        ("Action: scroll down 3", QWEN_IMAGE),
        ("done", SCREEN),
    ],
)
def test_text_delegates_to_parse_reply(reply: str, coords: CoordSpace) -> None:
    assert reply_format("text").parse(reply, coords) == parse_reply(reply, coords)


def test_text_reads_points_in_its_space_and_raises_as_parse_reply() -> None:
    click = {"type": "click", "x": 640, "y": 360}
    assert reply_format("text").parse("click 500 500", NORM) == click
    with pytest.raises(ActionError) as ours:
        reply_format("text").parse("click 1200 10", NORM)
    with pytest.raises(ActionError) as theirs:
        parse_reply("click 1200 10", NORM)
    assert str(ours.value) == str(theirs.value)
    assert "outside the norm1000 coordinate space" in str(ours.value)


# ---- UI-TARS ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "coords", "expected"),
    [
        (
            "Thought: The search box is at the top. I click it.\n"
            "Action: click(start_box='<|box_start|>(500,500)<|box_end|>')",
            NORM,
            {"type": "click", "x": 640, "y": 360, "narration": "The search box is at the top. I "
             "click it."},
        ),
        ("Thought: t\nAction: click(start_box='(500,500)')", NORM,
         {"type": "click", "x": 640, "y": 360, "narration": "t"}),
        ("Thought: t\nAction: click(start_box='(0,0)')", NORM,
         {"type": "click", "x": 0, "y": 0, "narration": "t"}),
        ("Thought: t\nAction: click(start_box='(1000,1000)')", NORM,
         {"type": "click", "x": 1279, "y": 719, "narration": "t"}),
        # UI-TARS-1.5's form, and its pixels of the smart-resized 1288x728 image.
        ("Thought: t\nAction: click(point='<point>250 750</point>')", NORM,
         {"type": "click", "x": 320, "y": 540, "narration": "t"}),
        ("Thought: t\nAction: click(start_box='(644,364)')", QWEN_IMAGE,
         {"type": "click", "x": 640, "y": 360, "narration": "t"}),
        # A box clicks its centre: (200, 300) of 1000.
        ("Thought: t\nAction: click(start_box='[100, 200, 300, 400]')", NORM,
         {"type": "click", "x": 256, "y": 216, "narration": "t"}),
        ("Thought: t\nAction: click(start_box='(100,200,300,400)')", NORM,
         {"type": "click", "x": 256, "y": 216, "narration": "t"}),
        ("Thought: t\nAction: click(start_box='(0.5,0.25)')", NORM1,
         {"type": "click", "x": 640, "y": 180, "narration": "t"}),
        # Thousandths of a padded square image: y 400 is 181 of the screen's 562 rows.
        ("Thought: t\nAction: click(start_box='(250,400)')", SQUARE,
         {"type": "click", "x": 320, "y": 231, "narration": "t"}),
        ("Thought: t\nAction: left_single(start_box='(500,500)')", NORM,
         {"type": "click", "x": 640, "y": 360, "narration": "t"}),
        ("Thought: t\nAction: click(start_box=(500,500))", NORM,
         {"type": "click", "x": 640, "y": 360, "narration": "t"}),
        ("Thought: The list has it as [3].\nAction: click(element=3)", NORM,
         {"type": "click", "element": 3, "narration": "The list has it as [3]."}),
        ("Thought: t\nAction: click(element='[12]')", NORM,
         {"type": "click", "element": 12, "narration": "t"}),
        ("Thought: Select all.\nAction: hotkey(key='ctrl a')", NORM,
         {"type": "key", "key": "Control+a", "narration": "Select all."}),
        ("Thought: t\nAction: hotkey(key='enter')", NORM,
         {"type": "key", "key": "Enter", "narration": "t"}),
        ("Thought: t\nAction: hotkey(key='ctrl shift tab')", NORM,
         {"type": "key", "key": "Control+Shift+Tab", "narration": "t"}),
        ("Thought: t\nAction: hotkey(key='page_down')", NORM,
         {"type": "key", "key": "PageDown", "narration": "t"}),
        ("Thought: t\nAction: press(key='esc')", NORM,
         {"type": "key", "key": "Escape", "narration": "t"}),
        ("Thought: t\nAction: type(content='April 28')", NORM,
         {"type": "type", "text": "April 28", "narration": "t"}),
        # A closing \n submits: it is typed, and a typed newline presses Enter.
        ("Thought: t\nAction: type(content='weather in Oslo\\n')", NORM,
         {"type": "type", "text": "weather in Oslo\n", "narration": "t"}),
        ("Thought: t\nAction: type(content='It\\'s \"5\" \\\\ ok')", NORM,
         {"type": "type", "text": "It's \"5\" \\ ok", "narration": "t"}),
        # An apostrophe left unescaped stays in the text.
        ("Thought: t\nAction: type(content='It's 5, or so')", NORM,
         {"type": "type", "text": "It's 5, or so", "narration": "t"}),
        ('Thought: t\nAction: type(content="double quoted")', NORM,
         {"type": "type", "text": "double quoted", "narration": "t"}),
        ("Thought: t\nAction: scroll(start_box='(500,500)', direction='down')", NORM,
         {"type": "scroll", "direction": "down", "amount": 5, "narration": "t"}),
        ("Thought: t\nAction: scroll(direction='up')", NORM,
         {"type": "scroll", "direction": "up", "amount": 5, "narration": "t"}),
        ("Thought: The toast may come back.\nAction: wait()", NORM,
         {"type": "wait", "seconds": 5.0, "narration": "The toast may come back."}),
        ("Thought: t\nAction: wait(seconds=2.5)", NORM,
         {"type": "wait", "seconds": 2.5, "narration": "t"}),
        ("Thought: t\nAction: wait(seconds='3')", NORM,
         {"type": "wait", "seconds": 3.0, "narration": "t"}),
        ("Thought: The task says to answer aloud.\nAction: speak(content='It is Canberra.')", NORM,
         {"type": "speak", "text": "It is Canberra.",
          "narration": "The task says to answer aloud."}),
        ("Thought: Saved.\nAction: finished(content='The order is E-4012')", NORM,
         {"type": "done", "narration": "Saved. Finished: The order is E-4012"}),
        ("Thought: Saved.\nAction: finished()", NORM, {"type": "done", "narration": "Saved."}),
        # No Thought: no narration.
        ("Action: finished()", NORM, {"type": "done"}),
        # No "Action:" label: the last call line is the action.
        ("click(start_box='(500,500)')", NORM, {"type": "click", "x": 640, "y": 360}),
    ],
)  # fmt: skip
def test_uitars_replies_become_screen_actions(
    reply: str, coords: CoordSpace, expected: dict
) -> None:
    action = UITARS.parse(reply, coords)
    assert action == expected
    validate_action(action)


def test_uitars_multi_line_thought_becomes_one_line_of_narration() -> None:
    reply = (
        "Thought: The banner said the code is SAVE-20.\n"
        "It will vanish soon.\n\n"
        "  I type it into the coupon field.\n"
        "Action: type(content='SAVE-20')"
    )
    assert UITARS.parse(reply, NORM) == {
        "type": "type",
        "text": "SAVE-20",
        "narration": "The banner said the code is SAVE-20. It will vanish soon. I type it into "
        "the coupon field.",
    }


def test_uitars_reads_a_fenced_reply_and_takes_the_last_action_label() -> None:
    reply = "```\nThought: t\nAction: hotkey(key='tab')\n```"
    assert UITARS.parse(reply, NORM) == {"type": "key", "key": "Tab", "narration": "t"}
    # Of several actions in one reply, the first after the last label is taken.
    reply = "Thought: t\nAction: click(start_box='(500,500)')\n\ntype(content='x')"
    assert UITARS.parse(reply, NORM)["type"] == "click"


def test_uitars_narration_is_capped() -> None:
    reply = "Thought: " + "word " * 1000 + "\nAction: wait()"
    narration = UITARS.parse(reply, NORM)["narration"]
    assert len(narration) == MAX_NARRATION
    assert narration.endswith("\u2026")


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("I will click the search button.", r"expected 'Thought: \.\.\.' then 'Action: \.\.\.'"),
        ("", r"got no Action"),
        ("Thought: t\nAction: open_app(app_name='Chrome')", r"unknown action 'open_app'; "
         r"expected one of: click\(start_box="),
        ("Thought: t\nAction: left_double(start_box='(1,2)')", r"no double click; the actions "
         r"are: click\(start_box=.*finished\(content='xxx'\)"),
        ("Thought: t\nAction: right_single(start_box='(1,2)')", r"no right click"),
        ("Thought: t\nAction: drag(start_box='(1,2)', end_box='(3,4)')", r"no drag; the actions"),
        ("Thought: t\nAction: call_user()", r"no user to call.*finished\(content='xxx'\)"),
        ("Thought: t\nAction: click(start_box='(1200,5)')",
         r"the point \(1200, 5\) is outside the norm1000 coordinate space; expected "
         r"0 <= x <= 1000"),
        ("Thought: t\nAction: click(start_box='(12)')",
         r"expected start_box as a point '\(x1,y1\)' or a box '\(x1,y1,x2,y2\)'"),
        ("Thought: t\nAction: click()", r"expected click\(start_box=.* or click\(element=N\)"),
        ("Thought: t\nAction: click(element='the button')", r"expected a page element's number"),
        ("Thought: t\nAction: click(start_box '(1,2)')", r"expected arguments written "
         r"name='value'"),
        ("Thought: t\nAction: type(content='unclosed)", r"unclosed quote in type"),
        ("Thought: t\nAction: type(content='')", r"expected type\(content='xxx'\)"),
        ("Thought: t\nAction: hotkey(key='')", r"expected hotkey\(key='ctrl c'\)"),
        ("Thought: t\nAction: hotkey(key='ctrl flurb')", r"unknown key 'flurb'"),
        ("Thought: t\nAction: scroll(start_box='(5,5)', direction='left')",
         r"the page scrolls up or down\), got direction 'left'"),
        ("Thought: t\nAction: wait(seconds=soon)", r"expected wait\(\) or wait\(seconds=N\)"),
        ("Thought: t\nAction: wait(seconds=90)", r"expected wait seconds in \[0, 30\]"),
        ("Thought: t\nAction: speak(content='')", r"expected speak\(content='xxx'\)"),
        ("Thought: t\nAction: 42", r"expected an action such as click\(start_box="),
    ],
)  # fmt: skip
def test_uitars_replies_without_a_usable_action_say_what_was_expected(
    reply: str, message: str
) -> None:
    with pytest.raises(ActionError, match=message):
        UITARS.parse(reply, NORM)


def test_uitars_points_on_the_padding_are_refused() -> None:
    with pytest.raises(ActionError, match=r"lies on the image's padding"):
        UITARS.parse("Thought: t\nAction: click(start_box='(500,100)')", SQUARE)
    # A scroll's point is checked too, though the env scrolls at the pointer.
    with pytest.raises(ActionError, match=r"outside the norm1000 coordinate space"):
        UITARS.parse("Thought: t\nAction: scroll(start_box='(5,1500)', direction='up')", NORM)


# ---- Qwen2.5-VL / Fara-7B --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "coords", "expected"),
    [
        (tool_call({"action": "left_click", "coordinate": [644, 364]}), QWEN_IMAGE,
         {"type": "click", "x": 640, "y": 360}),
        (tool_call({"action": "left_click", "coordinate": [0, 0]}), QWEN_IMAGE,
         {"type": "click", "x": 0, "y": 0}),
        (tool_call({"action": "left_click", "coordinate": [1287, 727]}), QWEN_IMAGE,
         {"type": "click", "x": 1279, "y": 719}),
        (tool_call({"action": "left_click", "coordinate": [100, 200]}), SCREEN,
         {"type": "click", "x": 100, "y": 200}),
        (tool_call({"action": "left_click", "coordinate": [500, 500]}), NORM,
         {"type": "click", "x": 640, "y": 360}),
        (tool_call({"action": "left_click", "element": 7}), QWEN_IMAGE,
         {"type": "click", "element": 7}),
        # Fara's habit: its thoughts, then the call on lines of its own.
        (tool_call({"action": "left_click", "coordinate": [644, 364]},
                   before="The Confirm button is in the dialog. I click it.\n"), QWEN_IMAGE,
         {"type": "click", "x": 640, "y": 360,
          "narration": "The Confirm button is in the dialog. I click it."}),
        (tool_call({"action": "type", "text": "April 28"}), QWEN_IMAGE,
         {"type": "type", "text": "April 28"}),
        (tool_call({"action": "type", "text": "Oslo\n"}), QWEN_IMAGE,
         {"type": "type", "text": "Oslo\n"}),
        # Fara types at a point and may press Enter: the text goes where the focus is.
        (tool_call({"action": "type", "text": "Oslo", "coordinate": [100, 100],
                    "press_enter": True}), QWEN_IMAGE, {"type": "type", "text": "Oslo\n"}),
        (tool_call({"action": "key", "keys": ["ctrl", "a"]}), QWEN_IMAGE,
         {"type": "key", "key": "Control+a"}),
        (tool_call({"action": "key", "keys": ["Return"]}), QWEN_IMAGE,
         {"type": "key", "key": "Enter"}),
        (tool_call({"action": "key", "keys": ["Page_Down"]}), QWEN_IMAGE,
         {"type": "key", "key": "PageDown"}),
        (tool_call({"action": "key", "keys": "Escape"}), QWEN_IMAGE,
         {"type": "key", "key": "Escape"}),
        # Negative pixels scroll down, positive up, in 100 px notches.
        (tool_call({"action": "scroll", "pixels": -500}), QWEN_IMAGE,
         {"type": "scroll", "direction": "down", "amount": 5}),
        (tool_call({"action": "scroll", "pixels": 300, "coordinate": [10, 10]}), QWEN_IMAGE,
         {"type": "scroll", "direction": "up", "amount": 3}),
        (tool_call({"action": "scroll", "pixels": -3}), QWEN_IMAGE,
         {"type": "scroll", "direction": "down", "amount": 1}),
        (tool_call({"action": "scroll", "pixels": -10000}), QWEN_IMAGE,
         {"type": "scroll", "direction": "down", "amount": 20}),
        (tool_call({"action": "wait", "time": 2}), QWEN_IMAGE, {"type": "wait", "seconds": 2}),
        (tool_call({"action": "speak", "text": "It is Canberra."}), QWEN_IMAGE,
         {"type": "speak", "text": "It is Canberra."}),
        (tool_call({"action": "terminate", "status": "success"}, before="All saved.\n"),
         QWEN_IMAGE, {"type": "done", "narration": "All saved. Terminated: success"}),
        (tool_call({"action": "terminate", "status": "failure"}), QWEN_IMAGE,
         {"type": "done", "narration": "Terminated: failure"}),
        (tool_call({"action": "pause_and_memorize_fact", "fact": "The code is E-4012."}),
         QWEN_IMAGE, {"type": "wait", "seconds": 0.0, "narration": "The code is E-4012."}),
        # A missing closing tag, a ```json fence, a bare object, <think> tags, arguments as a
        # JSON string, the arguments alone, single quotes.
        ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "wait", "time": 1}}',
         QWEN_IMAGE, {"type": "wait", "seconds": 1}),
        ('I wait.\n```json\n{"name": "computer_use", "arguments": {"action": "wait", '
         '"time": 1}}\n```', QWEN_IMAGE, {"type": "wait", "seconds": 1, "narration": "I wait."}),
        ('I wait. {"name": "computer_use", "arguments": {"action": "wait", "time": 1}}',
         QWEN_IMAGE, {"type": "wait", "seconds": 1, "narration": "I wait."}),
        ('<think>\nThe page is loading.\n</think>\n<tool_call>\n{"name": "computer_use", '
         '"arguments": {"action": "wait", "time": 3}}\n</tool_call>', QWEN_IMAGE,
         {"type": "wait", "seconds": 3, "narration": "The page is loading."}),
        ('<tool_call>{"name": "computer_use", "arguments": "{\\"action\\": \\"wait\\", '
         '\\"time\\": 1}"}</tool_call>', QWEN_IMAGE, {"type": "wait", "seconds": 1}),
        ('<tool_call>{"action": "wait", "time": 1}</tool_call>', QWEN_IMAGE,
         {"type": "wait", "seconds": 1}),
        ("<tool_call>{'name': 'computer_use', 'arguments': {'action': 'wait', 'time': 1}}"
         "</tool_call>", QWEN_IMAGE, {"type": "wait", "seconds": 1}),
        ('<tool_call>\n```json\n{"name": "computer_use", "arguments": {"action": "wait", '
         '"time": 1}}\n```\n</tool_call>', QWEN_IMAGE, {"type": "wait", "seconds": 1}),
    ],
)  # fmt: skip
def test_qwen_tool_calls_become_screen_actions(
    reply: str, coords: CoordSpace, expected: dict
) -> None:
    action = QWEN.parse(reply, coords)
    assert action == expected
    validate_action(action)


def test_qwen_takes_the_first_of_several_calls() -> None:
    reply = tool_call({"action": "key", "keys": ["Tab"]}) + tool_call(
        {"action": "type", "text": "x"}
    )
    assert QWEN.parse(reply, QWEN_IMAGE) == {"type": "key", "key": "Tab"}


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("I will click the button.", r"expected a tool call such as <tool_call>\{\"name\": "
         r"\"computer_use\", \"arguments\": \{\"action\": \"left_click\""),
        ("", r"expected a tool call"),
        ("<tool_call>\n{\"name\": \"computer_use\", \"arguments\": {\"action\": \"left_click\",\n"
         "</tool_call>", r"expected the tool call as a JSON object"),
        (tool_call({"action": "fly"}), r"unknown action 'fly'; expected one of: "
         r"\{\"action\": \"key\""),
        ('<tool_call>{"name": "browser", "arguments": {"action": "left_click"}}</tool_call>',
         r"expected a call of the computer_use function, got 'browser'"),
        ('<tool_call>{"name": "computer_use", "arguments": {"coordinate": [1, 2]}}</tool_call>',
         r"expected \"arguments\": \{\"action\": \.\.\.\} with the action one of: key, type, "
         r"left_click"),
        (tool_call({"action": "double_click", "coordinate": [1, 2]}),
         r"double_click: the benchmark has no double click; the actions are: key, type, "
         r"left_click, scroll, wait, speak, terminate"),
        (tool_call({"action": "right_click", "coordinate": [1, 2]}), r"no right click"),
        (tool_call({"action": "triple_click", "coordinate": [1, 2]}), r"no triple click"),
        (tool_call({"action": "mouse_move", "coordinate": [1, 2]}), r"no mouse move"),
        (tool_call({"action": "left_click_drag", "coordinate": [1, 2]}), r"no drag"),
        (tool_call({"action": "answer", "text": "42"}), r"no answer action: give an answer the "
         r"way the task asks"),
        (tool_call({"action": "visit_url", "url": "https://example.com"}), r"no address bar"),
        (tool_call({"action": "left_click", "coordinate": [1300, 2]}),
         r"the point \(1300, 2\) is outside the image coordinate space; expected "
         r"0 <= x <= 1287 and 0 <= y <= 727"),
        (tool_call({"action": "left_click", "coordinate": "644, 364"}),
         r"expected \"coordinate\": \[x, y\] for left_click"),
        (tool_call({"action": "left_click", "coordinate": ["a", "b"]}),
         r"expected numbers for a point's x and y"),
        (tool_call({"action": "left_click"}), r"expected \{\"action\": \"left_click\", "
         r"\"coordinate\": \[x, y\]\}"),
        (tool_call({"action": "type"}), r"expected \{\"action\": \"type\", \"text\": "),
        (tool_call({"action": "key", "keys": []}), r"expected key names such as \[\"ctrl\", "
         r"\"a\"\]"),
        (tool_call({"action": "key", "keys": ["ctrl", "flurb"]}), r"unknown key 'flurb'"),
        (tool_call({"action": "scroll", "pixels": 0}), r"pixels positive to scroll up, "
         r"negative to scroll down, got '0'"),
        ('<tool_call>{"action": "scroll", "pixels": -1e999}</tool_call>',
         r"pixels positive to scroll up, negative to scroll down, got '-inf'"),
        ('<tool_call>{"action": "scroll", "pixels": 1' + "0" * 400 + '}</tool_call>',
         r"pixels positive to scroll up, negative to scroll down"),
        ('<tool_call>{"action": "left_click", "element": 1e999}</tool_call>',
         r"expected a page element's number"),
        ('<tool_call>{"action": "left_click", "element": 500}</tool_call>',
         r"expected a page element's index in 1\.\.200"),
        ('<tool_call>{"action": ' + "[" * 100000 + "</tool_call>",
         r"expected the tool call as a JSON object"),
        (tool_call({"action": "scroll", "pixels": "down"}), r"expected \{\"action\": "
         r"\"scroll\", \"pixels\": -500\}"),
        (tool_call({"action": "wait", "time": 99}), r"expected wait seconds in \[0, 30\]"),
        (tool_call({"action": "wait", "time": True}), r"expected \{\"action\": \"wait\""),
        (tool_call({"action": "speak", "text": "  "}), r"speak needs some words"),
    ],
)  # fmt: skip
def test_qwen_replies_without_a_usable_action_say_what_was_expected(
    reply: str, message: str
) -> None:
    with pytest.raises(ActionError, match=message):
        QWEN.parse(reply, QWEN_IMAGE)


# ---- the prompts -----------------------------------------------------------------------------

UITARS_VERBS = (
    "click(start_box='<|box_start|>(x1,y1)<|box_end|>')",
    "click(element=N)",
    "hotkey(key='ctrl c')",
    "type(content='xxx')",
    "scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up')",
    "wait()",
    "wait(seconds=N)",
    "speak(content='xxx')",
    "finished(content='xxx')",
)
QWEN_ACTIONS = {"key", "type", "left_click", "scroll", "wait", "speak", "terminate"}


@pytest.mark.parametrize("coords", SPACES, ids=lambda c: f"{c.name}-{c.fit.size}")
@pytest.mark.parametrize("name", ["uitars", "qwen"])
def test_prompts_state_the_coordinates_and_the_situation(name: str, coords: CoordSpace) -> None:
    prompt = reply_format(name).prompt(coords, True, "unused grammar")
    assert coords.describe() in prompt
    assert "unused grammar" not in prompt
    for part in ("1280x720 screen", "real time", "[PAGE ELEMENTS]", "[NARRATION]", "keyframes",
                 "narration note", "answer aloud"):  # fmt: skip
        assert part in prompt, part
    assert ("screen pixels; the points you write" in prompt) == (coords.name != "screen")


def test_prompts_for_a_model_shown_no_images() -> None:
    for name in ("uitars", "qwen"):
        prompt = reply_format(name).prompt(NORM, False, "")
        assert "you are shown no images" in prompt
        assert "the current screenshot" not in prompt
        assert NORM.describe() in prompt


def test_the_uitars_prompt_promises_every_verb_it_reads() -> None:
    prompt = UITARS.prompt(NORM, True, "")
    for verb in UITARS_VERBS:
        assert verb in prompt, verb
    assert "Thought: ...\nAction: ..." in prompt
    for lacking in ("double click", "right click", "drag", "user to call"):
        assert lacking in prompt
    # Each promised verb, written as the prompt shows it, is read.
    replies = [
        "click(start_box='<|box_start|>(10,20)<|box_end|>')", "click(element=2)",
        "hotkey(key='ctrl c')", "type(content='xxx')",
        "scroll(start_box='<|box_start|>(10,20)<|box_end|>', direction='down')", "wait()",
        "wait(seconds=2)", "speak(content='xxx')", "finished(content='xxx')",
    ]  # fmt: skip
    kinds = [UITARS.parse(f"Thought: t\nAction: {reply}", NORM)["type"] for reply in replies]
    assert kinds == ["click", "click", "key", "type", "scroll", "wait", "wait", "speak", "done"]


@pytest.mark.parametrize("coords", SPACES, ids=lambda c: f"{c.name}-{c.fit.size}")
@pytest.mark.parametrize("name", ["uitars", "qwen"])
def test_the_prompt_example_is_a_valid_reply(name: str, coords: CoordSpace) -> None:
    prompt = reply_format(name).prompt(coords, True, "")
    example = prompt[prompt.rindex("Example") :].split("\n", 1)[1]
    action = reply_format(name).parse(example, coords)
    assert action["type"] == "click"
    assert abs(action["x"] - 640) <= 2 and abs(action["y"] - 400) <= 2
    assert "E-4012" in action["narration"]


def test_the_qwen_prompt_declares_computer_use_in_the_qwen_agent_style() -> None:
    prompt = QWEN.prompt(QWEN_IMAGE, True, "")
    tools = re.search(r"<tools>\n(.*)\n</tools>", prompt, re.DOTALL)
    assert tools is not None
    tool = json.loads(tools.group(1))
    assert tool["type"] == "function"
    function = tool["function"]
    assert function["name"] == "computer_use"
    properties = function["parameters"]["properties"]
    assert set(properties["action"]["enum"]) == QWEN_ACTIONS
    for action in QWEN_ACTIONS:
        assert f"* `{action}`:" in properties["action"]["description"], action
    assert set(properties) >= {"keys", "text", "coordinate", "element", "pixels", "time", "status"}
    assert (
        "Positive values scroll up, negative values scroll down"
        in properties["pixels"]["description"]
    )
    assert "The screen's resolution is 1288x728." in function["description"]
    assert "x from 0 (left) to 1287" in properties["coordinate"]["description"]
    call_form = '{"name": <function-name>, "arguments": <args-json-object>}'
    assert f"<tool_call>\n{call_form}\n</tool_call>" in prompt
    # Every declared action, called as declared, is read.
    calls = [
        {"action": "key", "keys": ["Tab"]}, {"action": "type", "text": "x"},
        {"action": "left_click", "coordinate": [5, 5]}, {"action": "scroll", "pixels": -100},
        {"action": "wait", "time": 1}, {"action": "speak", "text": "x"},
        {"action": "terminate", "status": "success"},
    ]  # fmt: skip
    kinds = {call["action"]: QWEN.parse(tool_call(call), QWEN_IMAGE)["type"] for call in calls}
    assert kinds == {
        "key": "key", "type": "type", "left_click": "click", "scroll": "scroll", "wait": "wait",
        "speak": "speak", "terminate": "done",
    }  # fmt: skip


def test_the_qwen_prompt_states_no_resolution_for_relative_coordinates() -> None:
    prompt = QWEN.prompt(NORM, True, "")
    assert "resolution" not in prompt
    assert "x from 0 (left) to 1000, y from 0 (top) to 1000" in prompt
