"""The Anthropic computer-use agent, through the real SDK, against a local Messages API server."""

from __future__ import annotations

import base64
import socket
import struct
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from computer_use_servers import Answer, Request, local_server

from dynacu_agents.protocols import llm_agent

pytest.importorskip("anthropic")

from gymnasium.error import DependencyNotInstalled  # noqa: E402

from dynacu_agents.computer_use.anthropic import (  # noqa: E402
    BENCHMARK_TOOL_SPEC,
    DONE_TEXT,
    EARLIER_TURNS_LEFT_OUT,
    IMAGE_PLACEHOLDER,
    NO_TOOL_CALL,
    NOTHING_PERFORMED,
    SKIPPED_TEXT,
    AnthropicComputerAgent,
    computer_actions,
    key_combos,
)
from dynacu_agents.coords import CoordSpace, ImageFit  # noqa: E402
from dynacu_agents.llm import LLMError, ModelRefused  # noqa: E402
from dynacu_gym.actions import ActionError, validate_action  # noqa: E402
from dynacu_gym.episode import AgentFailure  # noqa: E402

KEY = "sk-ant-test"
MODEL = "claude-test"
INPUT_TOKENS = 1000  # the fake server's input tokens for request n are INPUT_TOKENS + n
OUTPUT_TOKENS = 7
RECORD = "Observation Record — Step 1 (t = 3.5s)\n[TASK] Save the report."


@dataclass
class Error:
    """A scripted error answer."""

    status: int
    message: str = "scripted failure"
    kind: str = "api_error"


@dataclass
class Reply:
    """A scripted message: content blocks and, if given, its usage."""

    content: list[dict[str, Any]]
    usage: dict[str, Any] | None = None


@dataclass
class FakeMessagesServer:
    """Answers ``POST /v1/messages`` with scripted replies; remembers every request."""

    url: str
    script: list[Reply | Error] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    delay_s: float = 0.0

    def answer(self, path: str) -> tuple[int, dict[str, Any]]:
        n = len(self.requests)
        if path != "/v1/messages":
            return 404, {"type": "error", "error": {"type": "not_found", "message": path}}
        item = self.script.pop(0) if self.script else Reply([wait_call(1)])
        if isinstance(item, Error):
            return item.status, {
                "type": "error",
                "error": {"type": item.kind, "message": item.message},
            }
        stop = "tool_use" if any(b["type"] == "tool_use" for b in item.content) else "end_turn"
        return 200, {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": item.content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": item.usage
            or {"input_tokens": INPUT_TOKENS + n, "output_tokens": OUTPUT_TOKENS},
        }

    def body(self, index: int) -> dict[str, Any]:
        return self.requests[index].body


@pytest.fixture
def server() -> Iterator[FakeMessagesServer]:
    state: FakeMessagesServer

    def respond(request: Request) -> Answer:
        status, answer = state.answer(request.path)
        state.requests.append(request)
        if state.delay_s:
            time.sleep(state.delay_s)
        return Answer(status, answer, {"retry-after-ms": "1"})  # retries in tests need not wait

    with local_server(respond) as port:
        state = FakeMessagesServer(url=f"http://127.0.0.1:{port}")
        yield state


@pytest.fixture
def no_env_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)


_ids = iter(range(1, 1_000_000))


def computer_call(action: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": f"toolu_{next(_ids):04d}",
        "name": "computer",
        "input": {"action": action, **fields},
    }


def benchmark_call(action: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": f"toolu_{next(_ids):04d}",
        "name": "benchmark",
        "input": {"action": action, **fields},
    }


def wait_call(seconds: float) -> dict[str, Any]:
    return computer_call("wait", duration=seconds)


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words}


def agent_for(server: FakeMessagesServer, **kwargs: Any) -> AnthropicComputerAgent:
    return AnthropicComputerAgent(model=MODEL, base_url=server.url, api_key=KEY, **kwargs)


def observation(record: str = RECORD, keyframe_count: int = 0) -> dict[str, Any]:
    screenshot = np.zeros((720, 1280, 3), dtype=np.uint8)
    screenshot[:, :640, 0] = 200
    keyframes = np.zeros((3, 720, 1280, 3), dtype=np.uint8)
    keyframes[0, :, :, 1] = 100
    keyframes[1, :, :, 2] = 50
    return {
        "record": record,
        "screenshot": screenshot,
        "keyframes": keyframes,
        "keyframe_times": np.array([1.0, 2.5, 0.0], dtype=np.float32),
        "keyframe_count": np.int64(keyframe_count),
        "elapsed": np.float32(3.5),
        "instruction": "Save the report.",
    }


def png_size(data_b64: str) -> tuple[int, int]:
    """(width, height) from a base64 PNG's IHDR."""
    png = base64.b64decode(data_b64)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def sent_key(headers: dict[str, str]) -> str:
    """The API key a request carried: ``x-api-key``, or a bearer token (the SDK since 2.x)."""
    if "x-api-key" in headers:
        return headers["x-api-key"]
    scheme, _, key = headers["authorization"].partition(" ")
    assert scheme == "Bearer"
    return key


def images_in(message: dict[str, Any]) -> list[str]:
    """The base64 data of every image in a message, tool results' included."""
    out = []
    for block in message["content"]:
        if block["type"] == "image":
            assert block["source"]["type"] == "base64"
            assert block["source"]["media_type"] == "image/png"
            out.append(block["source"]["data"])
        elif block["type"] == "tool_result":
            out += images_in({"content": block["content"]})
    return out


# ---- the request ------------------------------------------------------------------------------


def test_a_click_with_narration_and_the_request_the_sdk_sends(server) -> None:
    click = computer_call("left_click", coordinate=[512, 288])
    server.script = [Reply([text("The Save button is in the middle."), click])]
    agent = agent_for(server)
    agent.reset("Save the report.")

    action, info = agent.act(observation())

    # Display pixel (512, 288) of the 1024x576 image is the screen pixel (640, 360).
    assert action == {
        "type": "click",
        "x": 640,
        "y": 360,
        "narration": "The Save button is in the middle.",
    }
    validate_action(action)
    assert info == {
        "calls": 1,
        "input_tokens": INPUT_TOKENS,
        "output_tokens": OUTPUT_TOKENS,
        "latency_s": info["latency_s"],
        "retried": False,
        "reply": 'computer {"action": "left_click", "coordinate": [512, 288]}\n'
        "The Save button is in the middle.",
        "parse_error": "",
    }
    assert 0 < info["latency_s"] < 30
    [request] = server.requests
    assert request.path == "/v1/messages"
    assert request.headers["anthropic-beta"] == "computer-use-2025-11-24"
    assert sent_key(request.headers) == KEY
    assert request.headers["anthropic-version"]
    body = request.body
    assert body["model"] == MODEL
    assert body["max_tokens"] == 1024
    assert "temperature" not in body  # newer models refuse one; sent only when given
    assert "thinking" not in body and "output_config" not in body
    assert body["tools"] == [
        {
            "type": "computer_20251124",
            "name": "computer",
            "display_width_px": 1024,
            "display_height_px": 576,
        },
        BENCHMARK_TOOL_SPEC,
    ]
    assert body["tools"][1]["input_schema"]["properties"]["action"]["enum"] == [
        "speak",
        "wait",
        "done",
    ]
    assert body["system"] == agent.system_prompt
    assert "The screenshot you are shown is 1024x576 pixels." in body["system"]
    assert "the screenshot's pixel (x * 0.8, y * 0.8)" in body["system"]
    [user] = body["messages"]
    assert user["role"] == "user"
    assert user["content"][0] == {"type": "text", "text": RECORD}
    assert user["content"][1] == {"type": "text", "text": "Screenshot now (t = 3.5s):"}
    assert len(user["content"]) == 3
    [image] = images_in(user)
    assert png_size(image) == (1024, 576)
    assert agent.total_calls == 1
    assert agent.total_input_tokens == INPUT_TOKENS


def test_keyframes_go_labelled_beside_the_screenshot(server) -> None:
    server.script = [Reply([wait_call(1)]), Reply([wait_call(1)])]
    agent = agent_for(server, image_size="full")
    agent.act(observation(keyframe_count=2))
    content = server.body(0)["messages"][0]["content"]
    texts = [b["text"] for b in content if b["type"] == "text"]
    assert texts == [
        RECORD,
        "Screenshot now (t = 3.5s):",
        "Keyframe 1 at 1.0s:",
        "Keyframe 2 at 2.5s:",
    ]
    assert [png_size(b64) for b64 in images_in(server.body(0)["messages"][0])] == [(1280, 720)] * 3
    assert server.body(0)["tools"][0]["display_width_px"] == 1280
    assert (
        "Positions in the record (prior actions, page elements) are the same pixels."
        in (server.body(0)["system"])
    )

    agent = agent_for(server, image_size="full", max_keyframes=1)
    agent.act(observation(keyframe_count=2))
    texts = [b["text"] for b in server.body(1)["messages"][0]["content"] if b["type"] == "text"]
    assert texts == [RECORD, "Screenshot now (t = 3.5s):", "Keyframe 2 at 2.5s:"]


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (computer_call("type", text="Q3 report"), [{"type": "type", "text": "Q3 report"}]),
        (computer_call("key", text="ctrl+a"), [{"type": "key", "key": "Control+a"}]),
        (computer_call("key", text="Return"), [{"type": "key", "key": "Enter"}]),
        (computer_call("key", text="KP_Enter"), [{"type": "key", "key": "Enter"}]),
        (computer_call("key", text="Page_Down"), [{"type": "key", "key": "PageDown"}]),
        (
            computer_call("key", text="Down Down"),
            [{"type": "key", "key": "ArrowDown"}, {"type": "key", "key": "ArrowDown"}],
        ),
        (
            computer_call(
                "scroll", coordinate=[100, 100], scroll_direction="down", scroll_amount=3
            ),
            [{"type": "scroll", "direction": "down", "amount": 3}],
        ),
        (
            computer_call("scroll", scroll_direction="up", scroll_amount=20),
            [{"type": "scroll", "direction": "up", "amount": 20}],
        ),
        (computer_call("screenshot"), [{"type": "wait", "seconds": 0.0}]),
        (computer_call("wait", duration=2.5), [{"type": "wait", "seconds": 2.5}]),
        (
            benchmark_call("speak", text="The code is E-4012."),
            [{"type": "speak", "text": "The code is E-4012."}],
        ),
        (benchmark_call("wait", seconds=12), [{"type": "wait", "seconds": 12}]),
        (benchmark_call("done"), [{"type": "done"}]),
    ],
)
def test_each_tool_call_maps_onto_the_benchmark_action(server, call, expected) -> None:
    server.script = [Reply([call])]
    agent = agent_for(server)
    actions = [agent.act(observation())[0] for _ in expected]
    assert actions == expected
    assert len(server.requests) == 1
    for action in actions:
        validate_action(action)


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ("ctrl+a", ["Control+a"]),
        ("Return", ["Enter"]),
        ("KP_Enter", ["Enter"]),
        ("Page_Down", ["PageDown"]),
        ("Prior", ["PageUp"]),
        ("Next", ["PageDown"]),
        ("BackSpace", ["Backspace"]),
        ("Escape", ["Escape"]),
        ("space", ["Space"]),
        ("shift+Tab", ["Shift+Tab"]),
        ("ISO_Left_Tab", ["Shift+Tab"]),
        ("ctrl+shift+t", ["Control+Shift+t"]),
        ("super+l", ["Meta+l"]),
        ("alt+F4", ["Alt+F4"]),
        ("ctrl+plus", ["Control++"]),
        ("ctrl++", ["Control++"]),
        ("KP_5", ["5"]),
        ("Up Up Right", ["ArrowUp", "ArrowUp", "ArrowRight"]),
        ("Caps_Lock", ["CapsLock"]),
        ("Control_L+c", ["Control+c"]),
    ],
)
def test_xdotool_key_names_become_ours(keys: str, expected: list[str]) -> None:
    assert key_combos(keys) == expected


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ("", "a key action needs text such as 'Return' or 'ctrl+a', got ''"),
        (None, "a key action needs text such as 'Return' or 'ctrl+a', got None"),
        ("Tab " * 11, "a key action presses at most 10 keys in turn, got 11"),
        ("Hyper_Q", "unknown key 'Hyper_Q' in 'Hyper_Q'"),
    ],
)
def test_bad_keys_say_what_was_expected(keys: Any, message: str) -> None:
    with pytest.raises(ActionError, match="^" + message.replace("+", r"\+").replace("(", r"\(")):
        key_combos(keys)


@pytest.mark.parametrize(
    ("tool_input", "message"),
    [
        (
            {"action": "scroll", "scroll_direction": "left", "scroll_amount": 2},
            "expected scroll_direction 'up' or 'down' (the page scrolls vertically only), "
            "got 'left'",
        ),
        (
            {"action": "scroll", "scroll_direction": "down", "scroll_amount": 21},
            "expected scroll_amount in 1..20 wheel clicks, got 21",
        ),
        (
            {"action": "scroll", "scroll_direction": "down", "scroll_amount": 2, "text": "ctrl"},
            "scrolling with keys held ('ctrl') is not available here",
        ),
        (
            {"action": "left_click", "coordinate": [5, 5], "text": "shift"},
            "clicking with keys held ('shift') is not available here; click without text",
        ),
        (
            {"action": "left_click"},
            "left_click needs a coordinate [x, y] here: the pointer cannot be moved on its own",
        ),
        ({"action": "left_click", "coordinate": [5]}, "expected a coordinate [x, y], got [5]"),
        ({"action": "type"}, "a type action needs text, got None"),
        ({"action": "paste"}, "unknown computer action 'paste'; available are the computer"),
    ],
)
def test_malformed_computer_calls_say_what_was_expected(tool_input, message) -> None:
    coords = CoordSpace("image", ImageFit.long_side(1024))
    with pytest.raises(ActionError) as caught:
        computer_actions(tool_input, coords)
    assert str(caught.value).startswith(message)


# ---- several calls in one reply ----------------------------------------------------------------


def test_several_calls_run_one_per_step_without_a_request(server) -> None:
    calls = [
        computer_call("left_click", coordinate=[100, 100]),
        computer_call("type", text="hello"),
        computer_call("key", text="Return"),
    ]
    server.script = [Reply([text("Filling in the name."), *calls]), Reply([wait_call(1)])]
    agent = agent_for(server)

    steps = [agent.act(observation()) for _ in range(3)]

    assert [action for action, _ in steps] == [
        {"type": "click", "x": 125, "y": 125, "narration": "Filling in the name."},
        {"type": "type", "text": "hello"},
        {"type": "key", "key": "Enter"},
    ]
    assert [info["calls"] for _, info in steps] == [1, 0, 0]
    assert [info["input_tokens"] for _, info in steps] == [INPUT_TOKENS, 0, 0]
    assert steps[1][1]["queued"] is True and steps[1][1]["reply"] == steps[0][1]["reply"]
    assert len(server.requests) == 1
    action, info = agent.act(observation("Step 4"))
    assert (action, info["calls"]) == ({"type": "wait", "seconds": 1}, 1)
    # Stateless: the next request is one fresh user turn, the record first.
    [user] = server.body(1)["messages"]
    assert user["content"][0] == {"type": "text", "text": "Step 4"}
    assert all(block["type"] in ("text", "image") for block in user["content"])


def test_the_conversation_answers_every_call_and_keeps_images_in_the_newest_turn(server) -> None:
    calls = [
        computer_call("left_click", coordinate=[100, 100]),
        computer_call("type", text="hello"),
        computer_call("key", text="Return"),
    ]
    server.script = [Reply([text("Filling in the name."), *calls]), Reply([wait_call(1)])]
    agent = agent_for(server, history=2)
    for _ in range(3):
        agent.act(observation())
    agent.act(observation("Step 4"))

    first, assistant, answer = server.body(1)["messages"]
    assert first["role"] == "user" and first["content"][0] == {"type": "text", "text": RECORD}
    assert first["content"][2] == {"type": "text", "text": IMAGE_PLACEHOLDER}
    assert images_in(first) == []
    assert assistant == {"role": "assistant", "content": [text("Filling in the name."), *calls]}
    assert answer["role"] == "user"
    results = answer["content"]
    assert [r["type"] for r in results] == ["tool_result"] * 3
    assert [r["tool_use_id"] for r in results] == [call["id"] for call in calls]
    assert results[0] == {
        "type": "tool_result",
        "tool_use_id": calls[0]["id"],
        "content": [{"type": "text", "text": DONE_TEXT}],
    }
    assert results[1]["content"] == [{"type": "text", "text": DONE_TEXT}]
    assert "is_error" not in results[2]
    last = results[2]["content"]
    assert last[:3] == [
        {"type": "text", "text": DONE_TEXT},
        {"type": "text", "text": "Step 4"},
        {"type": "text", "text": "Screenshot now (t = 3.5s):"},
    ]
    [image] = images_in(answer)
    assert png_size(image) == (1024, 576)


def test_history_keeps_the_last_exchanges_after_a_user_turn(server) -> None:
    replies = [Reply([computer_call("wait", duration=n)]) for n in (1, 2, 3)]
    ids = [reply.content[0]["id"] for reply in replies]
    server.script = list(replies)
    agent = agent_for(server, history=1)
    for step in range(3):
        agent.act(observation(f"Step {step + 1}"))

    # Step 2: the whole conversation still fits.
    first, assistant, answer = server.body(1)["messages"]
    assert first["content"][0] == {"type": "text", "text": "Step 1"}
    assert assistant["content"] == replies[0].content
    assert answer["content"][0]["tool_use_id"] == ids[0]
    # Step 3: the oldest exchange is left out; a user turn still opens the conversation.
    opener, assistant, answer = server.body(2)["messages"]
    assert opener == {"role": "user", "content": [{"type": "text", "text": EARLIER_TURNS_LEFT_OUT}]}
    assert assistant == {"role": "assistant", "content": replies[1].content}
    [result] = answer["content"]
    assert result["tool_use_id"] == ids[1]
    assert result["content"][1] == {"type": "text", "text": "Step 3"}
    assert [len(images_in(m)) for m in server.body(2)["messages"]] == [0, 0, 1]


def test_a_later_call_that_fails_is_told_with_the_next_observation(server) -> None:
    click = computer_call("left_click", coordinate=[100, 100])
    double = computer_call("double_click", coordinate=[100, 100])
    after = computer_call("type", text="x")
    server.script = [Reply([click, double, after]), Reply([wait_call(1)])]
    agent = agent_for(server)

    action, info = agent.act(observation())
    assert action == {"type": "click", "x": 125, "y": 125}
    assert info["parse_error"].startswith(
        'computer {"action": "double_click", "coordinate": [100, 100]}: the double_click action '
        "is not available here; available are the computer tool's left_click"
    )
    agent.act(observation("Step 2"))  # the type after the failed call is not performed
    note = server.body(1)["messages"][0]["content"][0]["text"]
    assert note.startswith("Not performed: the double_click action is not available here")
    assert note.endswith(
        '(computer {"action": "double_click", "coordinate": [100, 100]}, from your previous reply)'
    )
    assert server.body(1)["messages"][0]["content"][1] == {"type": "text", "text": "Step 2"}


def test_a_later_call_that_fails_gets_an_error_result_in_a_conversation(server) -> None:
    click = computer_call("left_click", coordinate=[100, 100])
    double = computer_call("double_click", coordinate=[100, 100])
    after = computer_call("type", text="x")
    server.script = [Reply([click, double, after]), Reply([wait_call(1)])]
    agent = agent_for(server, history=3)
    agent.act(observation())
    agent.act(observation("Step 2"))

    done, failed, skipped, *observed = server.body(1)["messages"][2]["content"]
    assert done == {
        "type": "tool_result",
        "tool_use_id": click["id"],
        "content": [{"type": "text", "text": DONE_TEXT}],
    }
    assert failed["tool_use_id"] == double["id"] and failed["is_error"] is True
    assert failed["content"][0]["text"].startswith("Not performed: the double_click action")
    assert skipped == {
        "type": "tool_result",
        "tool_use_id": after["id"],
        "content": [{"type": "text", "text": SKIPPED_TEXT}],
        "is_error": True,
    }
    assert observed[0] == {"type": "text", "text": "Step 2"}
    assert len(images_in({"content": observed})) == 1


# ---- unusable replies ------------------------------------------------------------------------


def test_a_reply_of_text_alone_is_asked_again(server) -> None:
    server.script = [
        Reply([text("I believe the report is saved.")]),
        Reply([benchmark_call("done")]),
    ]
    agent = agent_for(server)
    action, info = agent.act(observation())

    assert action == {"type": "done"}
    assert (info["calls"], info["retried"]) == (2, True)
    assert info["parse_error"] == "the reply has no tool call"
    assert info["input_tokens"] == 2 * INPUT_TOKENS + 1
    asked, answered, again = server.body(1)["messages"]
    assert asked == server.body(0)["messages"][0]
    assert answered == {"role": "assistant", "content": [text("I believe the report is saved.")]}
    assert again == {"role": "user", "content": [{"type": "text", "text": NO_TOOL_CALL}]}


def test_two_replies_of_text_alone_give_an_invalid_reply(server) -> None:
    server.script = [Reply([text("Hmm.")]), Reply([text("Still looking.")])]
    agent = agent_for(server)
    action, info = agent.act(observation())
    assert action == {"type": "invalid_reply", "raw": "Still looking."}
    assert (info["calls"], info["retried"], info["reply"]) == (2, True, "Still looking.")
    assert info["parse_error"] == "the reply has no tool call"
    with pytest.raises(ActionError):
        validate_action(action)  # the env reports it as the agent's mistake


def test_an_action_the_benchmark_lacks_is_told_and_asked_again(server) -> None:
    double = computer_call("double_click", coordinate=[10, 10])
    server.script = [Reply([double]), Reply([computer_call("left_click", coordinate=[10, 10])])]
    agent = agent_for(server)
    action, info = agent.act(observation())

    assert action == {"type": "click", "x": 13, "y": 13}
    assert (info["calls"], info["retried"]) == (2, True)
    _, assistant, again = server.body(1)["messages"]
    assert assistant == {"role": "assistant", "content": [double]}
    result, closing = again["content"]
    assert result["type"] == "tool_result"
    assert result["tool_use_id"] == double["id"]
    assert result["is_error"] is True
    told = result["content"][0]["text"]
    assert told == (
        "Not performed: the double_click action is not available here; available are the "
        "computer tool's left_click (with a coordinate), type, key, scroll (up or down), wait "
        "and screenshot, and the benchmark tool's speak, wait and done"
    )
    assert closing == {"type": "text", "text": NOTHING_PERFORMED}


def test_two_unusable_replies_give_an_invalid_reply_and_the_results_stay_owed(server) -> None:
    first = computer_call("triple_click", coordinate=[10, 10])
    second = computer_call("right_click", coordinate=[10, 10])
    server.script = [Reply([first]), Reply([second]), Reply([wait_call(1)])]
    agent = agent_for(server, history=4)
    action, info = agent.act(observation())
    assert action == {
        "type": "invalid_reply",
        "raw": 'computer {"action": "right_click", "coordinate": [10, 10]}',
    }
    assert info["parse_error"].startswith('computer {"action": "right_click"')
    agent.act(observation("Step 2"))
    messages = server.body(2)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    failed, *observed = messages[4]["content"]
    assert (failed["tool_use_id"], failed["is_error"]) == (second["id"], True)
    assert observed[0] == {"type": "text", "text": "Step 2"}


def test_a_point_off_the_display_is_told_to_the_model(server) -> None:
    off = computer_call("left_click", coordinate=[1024, 100])
    server.script = [Reply([off]), Reply([computer_call("left_click", coordinate=[1023, 575])])]
    agent = agent_for(server)
    action, info = agent.act(observation())
    assert action == {"type": "click", "x": 1279, "y": 719}
    result = server.body(1)["messages"][2]["content"][0]
    assert result["is_error"] is True
    assert result["content"][0]["text"] == (
        "Not performed: the point (1024, 100) is outside the image coordinate space; expected "
        "0 <= x <= 1023 and 0 <= y <= 575"
    )


def test_a_padded_display_declares_its_size_and_refuses_the_padding(server) -> None:
    padding = computer_call("left_click", coordinate=[512, 50])
    screen = computer_call("left_click", coordinate=[512, 384])
    server.script = [Reply([padding]), Reply([screen])]
    agent = agent_for(server, image_size="1024x768")
    action, _ = agent.act(observation())

    assert action == {"type": "click", "x": 640, "y": 360}
    tool = server.body(0)["tools"][0]
    assert (tool["display_width_px"], tool["display_height_px"]) == (1024, 768)
    [image] = images_in(server.body(0)["messages"][0])
    assert png_size(image) == (1024, 768)
    told = server.body(1)["messages"][2]["content"][0]["content"][0]["text"]
    assert "lies on the image's padding" in told
    assert "(x * 0.8, y * 0.8 + 96)" in server.body(0)["system"]


# ---- tokens, versions, thinking ---------------------------------------------------------------


def test_usage_counts_cache_reads_and_writes_as_input(server) -> None:
    usage = {
        "input_tokens": 50,
        "cache_creation_input_tokens": 200,
        "cache_read_input_tokens": 3000,
        "output_tokens": 12,
    }
    server.script = [Reply([wait_call(1)], usage), Reply([wait_call(1)], usage)]
    agent = agent_for(server)
    _, info = agent.act(observation())
    assert (info["input_tokens"], info["output_tokens"]) == (3250, 12)
    agent.act(observation())
    assert (agent.total_input_tokens, agent.total_output_tokens, agent.total_calls) == (6500, 24, 2)
    agent.reset("again")
    assert (agent.total_input_tokens, agent.total_output_tokens, agent.total_calls) == (0, 0, 0)


def test_the_older_tool_version_and_thinking(server) -> None:
    thinking = {"type": "thinking", "thinking": "The button is top left.", "signature": "sig-1"}
    first = computer_call("left_click", coordinate=[0, 0])
    usage = {
        "input_tokens": 10,
        "output_tokens": 40,
        "output_tokens_details": {"thinking_tokens": 30},
    }
    server.script = [Reply([thinking, first], usage), Reply([wait_call(1)])]
    agent = agent_for(
        server, tool_version="computer_20250124", reasoning_effort="medium", history=1
    )
    action, info = agent.act(observation())
    assert action == {"type": "click", "x": 0, "y": 0}
    assert info["reasoning_tokens"] == 30
    agent.act(observation())

    request = server.requests[0]
    assert request.headers["anthropic-beta"] == "computer-use-2025-01-24"
    assert request.body["tools"][0]["type"] == "computer_20250124"
    assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert request.body["max_tokens"] == 1024 + 8192
    assert "temperature" not in request.body
    # The thinking block goes back unchanged, signature and all, before the tool call.
    assert server.body(1)["messages"][1] == {"role": "assistant", "content": [thinking, first]}


def test_adaptive_thinking_sends_an_effort_and_a_temperature_goes_only_when_given(server) -> None:
    agent = agent_for(server, reasoning_effort="minimal", thinking="adaptive")
    agent.act(observation())
    body = server.body(0)
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "low"}
    assert body["max_tokens"] == 1024
    assert "temperature" not in body

    agent_for(server, temperature=0.0).act(observation())
    assert server.body(1)["temperature"] == 0.0
    assert "thinking" not in server.body(1)


# ---- failures ---------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
def test_a_refused_request_is_the_agents_failure_and_not_retried(server, status) -> None:
    server.script = [Error(status, "prompt is too long: 250000 tokens > 200000", "invalid")]
    agent = agent_for(server)
    with pytest.raises(ModelRefused) as caught:
        agent.act(observation())
    error = caught.value
    assert isinstance(error, AgentFailure)
    assert error.status == status
    assert str(error) == (
        f"the model server refused the request: {server.url}/v1/messages answered HTTP {status}: "
        "prompt is too long: 250000 tokens > 200000"
    )
    assert error.info["calls"] == 1
    assert len(server.requests) == 1
    assert agent.total_calls == 1


def test_a_refusal_after_an_unusable_reply_keeps_the_step_cost(server) -> None:
    server.script = [Reply([text("Hmm.")]), Error(400, "bad image")]
    agent = agent_for(server)
    with pytest.raises(ModelRefused) as caught:
        agent.act(observation())
    assert caught.value.info["calls"] == 2
    assert caught.value.info["input_tokens"] == INPUT_TOKENS


def test_overloaded_and_server_errors_are_retried_by_the_sdk(server) -> None:
    server.script = [
        Error(529, "Overloaded", "overloaded_error"),
        Error(500),
        Reply([wait_call(2)]),
    ]
    agent = agent_for(server)
    action, info = agent.act(observation())
    assert action == {"type": "wait", "seconds": 2}
    assert info["calls"] == 3
    assert len(server.requests) == 3
    assert info["input_tokens"] == INPUT_TOKENS + 2


@pytest.mark.parametrize("status", [429, 500, 529])
def test_retries_that_run_out_are_an_infrastructure_fault(server, status) -> None:
    server.script = [Error(status, "try later")] * 3
    agent = agent_for(server, http_retries=2)
    with pytest.raises(LLMError) as caught:
        agent.act(observation())
    assert not isinstance(caught.value, ModelRefused)
    assert caught.value.status == status
    assert str(caught.value) == (
        f"{server.url}/v1/messages answered HTTP {status}: try later (after 2 retries)"
    )
    assert len(server.requests) == 3


def test_an_unreachable_server_is_an_infrastructure_fault() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    agent = AnthropicComputerAgent(
        model=MODEL, base_url=f"http://127.0.0.1:{port}", api_key=KEY, http_retries=1
    )
    with pytest.raises(LLMError) as caught:
        agent.act(observation())
    assert not isinstance(caught.value, ModelRefused)
    assert caught.value.status is None
    assert str(caught.value).startswith(
        f"cannot reach the model server at http://127.0.0.1:{port}/v1/messages: "
    )
    assert agent.total_calls == 2


def test_a_server_that_does_not_answer_in_time_is_an_infrastructure_fault(server) -> None:
    server.delay_s = 1.0
    agent = agent_for(server, timeout_s=0.2, http_retries=0)
    with pytest.raises(LLMError) as caught:
        agent.act(observation())
    assert not isinstance(caught.value, ModelRefused)
    assert str(caught.value) == (
        f"the model server at {server.url}/v1/messages did not answer within 0.2 s"
    )


# ---- construction -----------------------------------------------------------------------------


def test_the_key_and_the_server_come_from_the_environment(server, no_env_keys, monkeypatch) -> None:
    with pytest.raises(ValueError, match="set ANTHROPIC_API_KEY or pass api_key"):
        AnthropicComputerAgent(model=MODEL)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    agent = AnthropicComputerAgent(model=MODEL)
    agent.act(observation())
    assert sent_key(server.requests[0].headers) == "sk-ant-env"


def test_a_missing_sdk_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(DependencyNotInstalled, match=r'pip install "dynacu-gym\[anthropic\]"'):
        AnthropicComputerAgent(model=MODEL, api_key=KEY)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"tool_version": "computer_20241022"},
            "expected tool_version in computer_20251124, computer_20250124, "
            "got 'computer_20241022'",
        ),
        ({"history": -1}, "expected history to be a whole number >= 0, got -1"),
        ({"max_tokens": 0}, "expected max_tokens to be a whole number >= 1, got 0"),
        (
            {"reasoning_effort": "max"},
            "expected reasoning_effort in minimal, low, medium, high or None, got 'max'",
        ),
        ({"image_size": "huge"}, "expected an image size 'full', a long side such as '1024'"),
        ({"model": ""}, "expected a model name, got ''"),
        ({"thinking": "fast"}, "expected thinking in budget, adaptive, got 'fast'"),
        (
            {"temperature": 0.0, "reasoning_effort": "low"},
            "give temperature or reasoning_effort, not both",
        ),
    ],
)
def test_bad_arguments_say_what_was_expected(kwargs, message) -> None:
    options = {"model": MODEL, "api_key": KEY, **kwargs}
    with pytest.raises(ValueError) as caught:
        AnthropicComputerAgent(**options)
    assert str(caught.value).startswith(message)


def test_the_agent_is_built_by_its_protocol_name(server) -> None:
    agent = llm_agent("anthropic-computer", model=MODEL, base_url=server.url, api_key=KEY)
    assert isinstance(agent, AnthropicComputerAgent)
    assert (agent.name, agent.privileged) == ("llm", False)


def test_reset_drops_the_queue_and_the_conversation(server) -> None:
    calls = [computer_call("type", text="a"), computer_call("type", text="b")]
    server.script = [Reply(calls), Reply([wait_call(1)])]
    agent = agent_for(server, history=2)
    agent.act(observation())
    agent.reset("next episode")
    action, info = agent.act(observation("Fresh"))
    assert (action, info["calls"]) == ({"type": "wait", "seconds": 1}, 1)
    [user] = server.body(1)["messages"]
    assert user["content"][0] == {"type": "text", "text": "Fresh"}


@pytest.mark.browser
def test_the_tool_calls_solve_the_probe_page_in_a_real_env(server, probe_task) -> None:
    from conftest import play

    from dynacu_gym.env import DynaCUEnv
    from dynacu_gym.modes import apply_mode

    # The declared display is 1024x576: the answer box at screen (640, 200) is (512, 160).
    server.script = [
        Reply([text("An empty answer box."), computer_call("left_click", coordinate=[512, 160])]),
        Reply([computer_call("type", text="blue whale")]),
        Reply([computer_call("key", text="Return")]),
    ]
    env = apply_mode(DynaCUEnv(probe_task), "aoi_visual")
    try:
        actions, info = play(env, agent_for(server, history=1))
    finally:
        env.close()
    assert info["task_result"] == "success"
    assert actions == [
        {"type": "click", "x": 640, "y": 200, "narration": "An empty answer box."},
        {"type": "type", "text": "blue whale"},
        {"type": "key", "key": "Enter"},
    ]
    # Each later request answers the last tool call with the real screen and the record.
    for n in (1, 2):
        result = server.body(n)["messages"][-1]["content"][0]
        assert result["type"] == "tool_result"
        kinds = [block["type"] for block in result["content"]]
        assert "image" in kinds and "text" in kinds
        texts = [b["text"] for b in result["content"] if b["type"] == "text"]
        assert texts[0] == "Done."
        assert any("[TASK]" in t and f"Step {n}: " in t for t in texts[1:]), texts
