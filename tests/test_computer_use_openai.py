"""The OpenAI computer-use agent, through the real SDK, against a local Responses API server."""

from __future__ import annotations

import base64
import json
import socket
import struct
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from computer_use_servers import Answer, Request, local_server

pytest.importorskip("openai")

from gymnasium.error import DependencyNotInstalled  # noqa: E402

from dynacu_agents.computer_use.openai import (  # noqa: E402
    CUA_WAIT_S,
    SCREENSHOT_TYPE,
    OpenAIComputerAgent,
    benchmark_action,
    cua_action,
    cua_key,
)
from dynacu_agents.coords import CoordSpace, ImageFit  # noqa: E402
from dynacu_agents.llm import LLMError, ModelRefused, png_of  # noqa: E402
from dynacu_gym.actions import ActionError  # noqa: E402
from dynacu_gym.episode import AgentFailure  # noqa: E402

INPUT_TOKENS = 1000  # the fake server's input tokens for request n are INPUT_TOKENS + n
OUTPUT_TOKENS = 7
REASONING_TOKENS = 3


# ---- the fake server ------------------------------------------------------------------------


@dataclass
class FakeResponsesServer:
    """Answers POST /v1/responses with scripted output items; remembers every request.

    A script entry is a list of output items (a completed response), or (status, message)
    for an error answer in OpenAI's error format.
    """

    url: str
    script: list[list[dict[str, Any]] | tuple[int, str]] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)

    def next_answer(self, path: str) -> tuple[int, dict[str, Any]]:
        n = len(self.requests)
        if path != "/v1/responses":
            return 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}}
        if not self.script:
            return 500, {"error": {"message": "the test script ran out", "type": "server_error"}}
        item = self.script.pop(0)
        if isinstance(item, tuple):
            status, message = item
            error_type = "server_error" if status >= 500 else "invalid_request_error"
            return status, {
                "error": {"message": message, "type": error_type, "param": None, "code": None}
            }
        return 200, {
            "id": f"resp_{n}",
            "object": "response",
            "created_at": 1_700_000_000 + n,
            "status": "completed",
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "model": "computer-use-preview-2025-03-11",
            "output": item,
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "reasoning": {"effort": "medium", "summary": None},
            "store": True,
            "temperature": 1.0,
            "tool_choice": "auto",
            "tools": [],
            "top_p": 1.0,
            "truncation": "auto",
            "usage": {
                "input_tokens": INPUT_TOKENS + n,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": OUTPUT_TOKENS,
                "output_tokens_details": {"reasoning_tokens": REASONING_TOKENS},
                "total_tokens": INPUT_TOKENS + n + OUTPUT_TOKENS,
            },
            "metadata": {},
        }

    def body(self, index: int = -1) -> dict[str, Any]:
        return self.requests[index].body


@pytest.fixture
def server() -> Iterator[FakeResponsesServer]:
    state: FakeResponsesServer

    def respond(request: Request) -> Answer:
        status, answer = state.next_answer(request.path)
        state.requests.append(request)
        # The SDK's retries wait 1 ms.
        return Answer(status, answer, {"retry-after-ms": "1"} if status != 200 else {})

    with local_server(respond) as port:
        state = FakeResponsesServer(url=f"http://127.0.0.1:{port}/v1")
        yield state


@pytest.fixture(autouse=True)
def no_env_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)


def make_agent(server: FakeResponsesServer, **kwargs: Any) -> OpenAIComputerAgent:
    agent = OpenAIComputerAgent(base_url=server.url, api_key="sk-test", **kwargs)
    agent.reset("Read the code.")
    return agent


# ---- output items as the Responses API writes them -----------------------------------------


def reasoning(n: int) -> dict[str, Any]:
    return {
        "type": "reasoning",
        "id": f"rs_{n}",
        "summary": [{"type": "summary_text", "text": f"thinking {n}"}],
        "encrypted_content": f"gAAAA-encrypted-{n}",
    }


def computer_call(
    call_id: str, action: dict[str, Any], checks: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "type": "computer_call",
        "id": f"cu_{call_id}",
        "call_id": call_id,
        "action": action,
        "pending_safety_checks": checks or [],
        "status": "completed",
    }


def message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"msg_{len(text)}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call(call_id: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": "benchmark",
        "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
        "status": "completed",
    }


def click(x: int, y: int, button: str = "left") -> dict[str, Any]:
    return {"type": "click", "button": button, "x": x, "y": y}


# ---- observations ---------------------------------------------------------------------------


def observation(step: int = 1, shade: int = 200, keyframe_count: int = 0) -> dict[str, Any]:
    """An observation whose screenshot is one flat colour (``shade`` in the red channel)."""
    screenshot = np.zeros((720, 1280, 3), dtype=np.uint8)
    screenshot[:, :, 0] = shade
    keyframes = np.zeros((3, 720, 1280, 3), dtype=np.uint8)
    keyframes[0, :, :, 1] = 100
    keyframes[1, :, :, 2] = 50
    return {
        "screenshot": screenshot,
        "instruction": "Read the code.",
        "elapsed": np.float32(2.0 * step),
        "record": f"Observation Record - Step {step}\n[TASK] Read the code.",
        "keyframes": keyframes,
        "keyframe_times": np.array([1.5, 1.8, 0.0], dtype=np.float32),
        "keyframe_count": np.int64(keyframe_count),
    }


def data_url(obs: dict[str, Any], fit: ImageFit | None = None) -> str:
    return f"data:image/png;base64,{png_of(obs['screenshot'], fit or ImageFit())}"


def png_size(url: str) -> tuple[int, int]:
    png = base64.b64decode(url.split(",", 1)[1])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", png[16:24])


def texts(item: dict[str, Any]) -> list[str]:
    return [part["text"] for part in item["content"] if part["type"] == "input_text"]


def images(item: dict[str, Any]) -> list[str]:
    return [part["image_url"] for part in item["content"] if part["type"] == "input_image"]


def image_count(items: list[dict[str, Any]]) -> int:
    """The images among input items: in messages and in computer call outputs."""
    n = 0
    for item in items:
        if item.get("type") == "computer_call_output":
            n += 1
        elif isinstance(item.get("content"), list):
            n += len([p for p in item["content"] if p.get("type") == "input_image"])
    return n


# ---- the request ----------------------------------------------------------------------------


def test_first_request_declares_the_tools_and_sends_the_record_beside_the_screenshot(
    server: FakeResponsesServer,
) -> None:
    server.script = [[reasoning(0), computer_call("call_1", click(100, 200))]]
    agent = make_agent(server)
    obs = observation(keyframe_count=2)
    action, info = agent.act(obs)

    assert action == {"type": "click", "x": 100, "y": 200}
    assert info == {
        "calls": 1,
        "input_tokens": INPUT_TOKENS,
        "output_tokens": OUTPUT_TOKENS,
        "reasoning_tokens": REASONING_TOKENS,
        "latency_s": info["latency_s"],
        "retried": False,
        "reply": 'computer_call [{"type":"click","button":"left","x":100,"y":200}]',
        "parse_error": "",
    }
    assert info["latency_s"] > 0
    request = server.requests[0]
    assert request.path == "/v1/responses"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = request.body
    assert body["model"] == "computer-use-preview"
    assert body["truncation"] == "auto"
    assert body["max_output_tokens"] == 1024
    assert body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"]
    assert "temperature" not in body and "reasoning" not in body
    assert "previous_response_id" not in body
    assert body["tools"][0] == {
        "type": "computer_use_preview",
        "display_width": 1280,
        "display_height": 720,
        "environment": "browser",
    }
    function = body["tools"][1]
    assert function["type"] == "function" and function["name"] == "benchmark"
    assert function["parameters"]["properties"]["action"]["enum"] == ["speak", "wait", "done"]
    assert "real time" in body["instructions"] and "done" in body["instructions"]
    assert "1280x720" in body["instructions"]

    [user] = body["input"]
    assert user["role"] == "user" and user["type"] == "message"
    assert texts(user) == [
        obs["record"],
        "Screenshot now (t = 2.0s):",
        "Keyframe 1 at 1.5s:",
        "Keyframe 2 at 1.8s:",
    ]
    assert [p["type"] for p in user["content"]] == [
        "input_text",
        "input_text",
        "input_image",
        "input_text",
        "input_image",
        "input_text",
        "input_image",
    ]
    shots = images(user)
    assert shots[0] == data_url(obs)
    assert png_size(shots[0]) == (1280, 720)
    assert shots[1] == f"data:image/png;base64,{png_of(obs['keyframes'][0])}"
    assert agent.total_calls == 1 and agent.total_input_tokens == INPUT_TOKENS


def test_a_smaller_image_declares_its_size_and_maps_points_back(
    server: FakeResponsesServer,
) -> None:
    server.script = [[computer_call("call_1", click(320, 180))]]
    agent = make_agent(server, image_size="640")
    obs = observation()
    action, _ = agent.act(obs)

    assert action == {"type": "click", "x": 641, "y": 361}  # pixel centres, scaled by 2
    body = server.body()
    assert body["tools"][0]["display_width"] == 640
    assert body["tools"][0]["display_height"] == 360
    [shot] = images(body["input"][0])
    assert png_size(shot) == (640, 360)
    assert shot == data_url(obs, ImageFit.long_side(640))
    assert "640x360" in body["instructions"]


def test_temperature_and_reasoning_are_sent_only_when_given(server: FakeResponsesServer) -> None:
    server.script = [[computer_call("c", {"type": "wait"})]]
    agent = make_agent(
        server,
        model="my-cua",
        temperature=0.3,
        reasoning_effort="low",
        reasoning_summary="concise",
        max_tokens=256,
    )
    agent.act(observation())
    body = server.body()
    assert body["model"] == "my-cua"
    assert body["temperature"] == 0.3
    assert body["reasoning"] == {"effort": "low", "summary": "concise"}
    assert body["max_output_tokens"] == 256


# ---- each action ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cua", "expected"),
    [
        (click(10, 20), {"type": "click", "x": 10, "y": 20}),
        (click(1279, 719), {"type": "click", "x": 1279, "y": 719}),
        ({"type": "type", "text": "blue whale"}, {"type": "type", "text": "blue whale"}),
        ({"type": "keypress", "keys": ["CTRL", "A"]}, {"type": "key", "key": "Control+a"}),
        ({"type": "keypress", "keys": ["ENTER"]}, {"type": "key", "key": "Enter"}),
        ({"type": "keypress", "keys": ["PAGEDOWN"]}, {"type": "key", "key": "PageDown"}),
        ({"type": "keypress", "keys": ["SHIFT", "TAB"]}, {"type": "key", "key": "Shift+Tab"}),
        (
            {"type": "scroll", "x": 600, "y": 400, "scroll_x": 0, "scroll_y": 300},
            {"type": "scroll", "direction": "down", "amount": 3},
        ),
        (
            {"type": "scroll", "x": 600, "y": 400, "scroll_x": 0, "scroll_y": -40},
            {"type": "scroll", "direction": "up", "amount": 1},
        ),
        ({"type": "wait"}, {"type": "wait", "seconds": CUA_WAIT_S}),
        ({"type": "screenshot"}, {"type": "wait", "seconds": 0.0}),
    ],
)
def test_each_computer_action_becomes_the_benchmark_action(
    server: FakeResponsesServer, cua: dict[str, Any], expected: dict[str, Any]
) -> None:
    server.script = [[computer_call("call_1", cua)]]
    action, info = make_agent(server).act(observation())
    assert action == expected
    assert info["calls"] == 1 and info["retried"] is False


def test_cua_wait_is_two_seconds() -> None:
    assert CUA_WAIT_S == 2.0


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (["CTRL", "C"], "Control+c"),
        (["ALT", "F4"], "Alt+F4"),
        (["CMD", "SHIFT", "Z"], "Meta+Shift+z"),
        (["ESC"], "Escape"),
        (["SPACE"], "Space"),
        (["BACKSPACE"], "Backspace"),
        (["ARROWLEFT"], "ArrowLeft"),
        (["WIN"], "Meta"),
        (["/"], "/"),
    ],
)
def test_keypress_keys(keys: list[str], expected: str) -> None:
    assert cua_key(keys) == expected


@pytest.mark.parametrize("keys", [[], "ENTER", ["CTRL", ""], ["HYPERSPACE"], [1]])
def test_bad_keypress_keys_are_mistakes(keys: Any) -> None:
    with pytest.raises(ActionError):
        cua_key(keys)


def test_scroll_rounds_to_notches_and_caps() -> None:
    coords = CoordSpace("image", ImageFit())

    def notches(dy: int) -> int:
        action = {"type": "scroll", "x": 0, "y": 0, "scroll_x": 0, "scroll_y": dy}
        return cua_action(action, coords)["amount"]

    assert [notches(dy) for dy in (1, 149, 151, 1000, 50_000)] == [1, 1, 2, 10, 20]


@pytest.mark.parametrize(
    ("cua", "says"),
    [
        ({"type": "double_click", "x": 5, "y": 5}, "double_click is not available"),
        ({"type": "drag", "path": [{"x": 1, "y": 1}, {"x": 9, "y": 9}]}, "drag is not available"),
        ({"type": "move", "x": 5, "y": 5}, "move (the mouse is moved only by clicks)"),
        (click(5, 5, "right"), "'right' click is not available"),
        ({**click(5, 5), "keys": ["SHIFT"]}, "click with keys held"),
        ({"type": "scroll", "x": 0, "y": 0, "scroll_x": 200, "scroll_y": 0}, "horizontal"),
        ({"type": "scroll", "scroll_y": 10**400}, "expected a finite number for 'scroll_y'"),
        ({"type": "scroll", "scroll_y": "3"}, "expected a finite number for 'scroll_y'"),
        ({"type": "type", "text": None}, "expected the text to type as a string"),
        (click(1280, 5), "expected 0 <= x <= 1279 and 0 <= y <= 719"),
        ({"type": "click", "button": "left"}, "expected numbers"),
        ({"type": "teleport"}, "unknown computer action type 'teleport'"),
    ],
)
def test_actions_the_benchmark_lacks_are_mistakes(cua: dict[str, Any], says: str) -> None:
    with pytest.raises(ActionError) as caught:
        cua_action(cua, CoordSpace("image", ImageFit()))
    assert says in str(caught.value)


def test_benchmark_function_arguments() -> None:
    assert benchmark_action('{"action": "speak", "text": "April 28"}') == {
        "type": "speak",
        "text": "April 28",
    }
    assert benchmark_action('{"action": "wait", "seconds": 3.5}') == {
        "type": "wait",
        "seconds": 3.5,
    }
    assert benchmark_action('{"action": "done"}') == {"type": "done"}
    for bad in ("not json", "[]", '{"action": "fly"}', '{"action": "speak"}', '{"action": "wait"}'):
        with pytest.raises(ActionError):
            benchmark_action(bad)


# ---- speak, done and narration --------------------------------------------------------------


def test_speak_and_done_come_through_the_function_tool_with_narration(
    server: FakeResponsesServer,
) -> None:
    server.script = [
        [
            reasoning(0),
            message("The code on screen is E-4012."),
            function_call("fc_1", {"action": "speak", "text": "E-4012"}),
        ],
        [function_call("fc_2", {"action": "done"})],
    ]
    agent = make_agent(server, history="server")
    action, info = agent.act(observation(1))
    assert action == {
        "type": "speak",
        "text": "E-4012",
        "narration": "The code on screen is E-4012.",
    }
    assert info["reply"] == (
        "message 'The code on screen is E-4012.'; "
        'function_call benchmark({"action": "speak", "text": "E-4012"})'
    )
    action, _ = agent.act(observation(2))
    assert action == {"type": "done"}
    [output, user] = server.body()["input"]
    assert output == {"type": "function_call_output", "call_id": "fc_1", "output": "performed"}
    # No computer call carried the screen: the message does.
    assert images(user) == [data_url(observation(2))]


def test_long_narration_is_cut_to_the_cap(server: FakeResponsesServer) -> None:
    server.script = [[message("x" * 5000), computer_call("c", {"type": "wait"})]]
    action, _ = make_agent(server).act(observation())
    assert len(action["narration"]) == 2000 and action["narration"].endswith("\u2026")


def test_a_function_wait_beyond_the_limit_is_told_and_asked_again(
    server: FakeResponsesServer,
) -> None:
    server.script = [
        [function_call("fc_1", {"action": "wait", "seconds": 90})],
        [function_call("fc_2", {"action": "wait", "seconds": 20})],
    ]
    action, info = make_agent(server).act(observation())
    assert action == {"type": "wait", "seconds": 20.0}
    assert info["retried"] is True
    assert "expected wait seconds in [0, 30]" in info["parse_error"]
    items = server.body()["input"]
    assert items[-2] == {
        "type": "function_call_output",
        "call_id": "fc_1",
        "output": "not performed",
    }


# ---- several calls in one reply -------------------------------------------------------------


def test_calls_of_one_reply_run_one_per_step_and_are_all_answered(
    server: FakeResponsesServer,
) -> None:
    checks = [{"id": "cu_sc_1", "code": "malicious_instructions", "message": "Check the page."}]
    server.script = [
        [
            reasoning(0),
            message("A search box at the top."),
            computer_call("call_1", click(100, 50), checks),
            computer_call("call_2", {"type": "type", "text": "whale"}),
            function_call("call_3", {"action": "wait", "seconds": 1}),
        ],
        [computer_call("call_4", {"type": "keypress", "keys": ["ENTER"]})],
    ]
    agent = make_agent(server, history="server")
    obs1, obs2, obs3, obs4 = (observation(n, shade=10 * n) for n in (1, 2, 3, 4))

    assert agent.act(obs1)[0] == {
        "type": "click",
        "x": 100,
        "y": 50,
        "narration": "A search box at the top.",
    }
    action, info = agent.act(obs2)
    assert action == {"type": "type", "text": "whale"}
    assert info["calls"] == 0 and info["input_tokens"] == 0
    assert agent.act(obs3)[0] == {"type": "wait", "seconds": 1.0}
    assert len(server.requests) == 1

    assert agent.act(obs4)[0] == {"type": "key", "key": "Enter"}
    body = server.body()
    assert body["previous_response_id"] == "resp_0"
    assert body["store"] is True and "include" not in body
    first, second, third, user = body["input"]
    # Each computer call is answered with the screen seen after it.
    assert first == {
        "type": "computer_call_output",
        "call_id": "call_1",
        "output": {"type": SCREENSHOT_TYPE, "image_url": data_url(obs2)},
        "acknowledged_safety_checks": checks,
    }
    assert second["call_id"] == "call_2"
    assert second["output"]["image_url"] == data_url(obs3)
    assert second["acknowledged_safety_checks"] == []
    assert third == {"type": "function_call_output", "call_id": "call_3", "output": "performed"}
    assert texts(user)[0] == obs4["record"]
    assert images(user) == [data_url(obs4)]


def test_a_batch_of_actions_in_one_call_is_answered_after_its_last(
    server: FakeResponsesServer,
) -> None:
    batch = {
        "type": "computer_call",
        "id": "cu_b",
        "call_id": "call_b",
        "actions": [click(10, 10), {"type": "type", "text": "hi"}],
        "pending_safety_checks": [],
        "status": "completed",
    }
    server.script = [[batch], [computer_call("call_c", {"type": "wait"})]]
    agent = make_agent(server, history="server")
    assert agent.act(observation(1))[0] == {"type": "click", "x": 10, "y": 10}
    assert agent.act(observation(2))[0] == {"type": "type", "text": "hi"}
    agent.act(observation(3, shade=33))
    [output, user] = server.body()["input"]
    assert output["call_id"] == "call_b"
    assert output["output"]["image_url"] == data_url(observation(3, shade=33))
    # The call's output carries the screen now; the message does not repeat it.
    assert images(user) == []
    assert texts(user) == [
        observation(3)["record"],
        "The screenshot in your computer call's output is the screen now (t = 6.0s).",
    ]


# ---- unusable replies -----------------------------------------------------------------------


def test_a_text_only_reply_is_asked_again_once(server: FakeResponsesServer) -> None:
    server.script = [
        [reasoning(0), message("I will click the box.")],
        [computer_call("call_1", click(5, 6))],
    ]
    agent = make_agent(server)
    obs = observation()
    action, info = agent.act(obs)
    assert action == {"type": "click", "x": 5, "y": 6}
    assert info["retried"] is True
    assert info["parse_error"] == "the reply has no tool call"
    assert info["calls"] == 2
    assert info["input_tokens"] == 2 * INPUT_TOKENS + 1
    user, rs, said, again = server.body()["input"]
    assert user == server.body(0)["input"][0]
    assert rs == reasoning(0) and said == message("I will click the box.")
    assert again["role"] == "user"
    assert "Every turn needs a tool call" in texts(again)[0]


def test_two_text_only_replies_are_an_invalid_reply(server: FakeResponsesServer) -> None:
    server.script = [[message("Hmm.")], [message("Still thinking.")]]
    action, info = make_agent(server).act(observation())
    assert action == {"type": "invalid_reply", "raw": "message 'Still thinking.'"}
    assert info["retried"] is True and info["calls"] == 2
    assert info["parse_error"] == "the reply has no tool call"


def test_an_unavailable_action_is_answered_and_asked_again(server: FakeResponsesServer) -> None:
    checks = [{"id": "sc_9", "code": "irrelevant_domain", "message": "Odd site."}]
    server.script = [
        [reasoning(0), computer_call("call_1", {"type": "double_click", "x": 5, "y": 5}, checks)],
        [reasoning(1), computer_call("call_2", click(5, 5))],
    ]
    agent = make_agent(server, history="server")
    obs = observation()
    action, info = agent.act(obs)
    assert action == {"type": "click", "x": 5, "y": 5}
    assert info["retried"] is True
    assert "double_click is not available" in info["parse_error"]
    body = server.body()
    assert body["previous_response_id"] == "resp_0"
    output, again = body["input"]
    assert output == {
        "type": "computer_call_output",
        "call_id": "call_1",
        "output": {"type": SCREENSHOT_TYPE, "image_url": data_url(obs)},
        "acknowledged_safety_checks": checks,
    }
    [told] = texts(again)
    assert "double_click is not available" in told
    assert "click (left button, no keys held), type, keypress, scroll" in told


def test_a_point_outside_the_display_is_told_to_the_model(server: FakeResponsesServer) -> None:
    server.script = [
        [computer_call("call_1", click(1300, 10))],
        [computer_call("call_2", click(1200, 10))],
    ]
    action, info = make_agent(server).act(observation())
    assert action == {"type": "click", "x": 1200, "y": 10}
    expected = (
        'computer_call [{"type":"click","button":"left","x":1300,"y":10}]: the point (1300, 10) '
        "is outside the image coordinate space; expected 0 <= x <= 1279 and 0 <= y <= 719"
    )
    assert info["parse_error"] == expected
    assert expected in texts(server.body()["input"][-1])[0]


def test_a_point_on_the_padding_is_a_mistake(server: FakeResponsesServer) -> None:
    server.script = [
        [computer_call("call_1", click(500, 20))],
        [computer_call("call_2", click(512, 384))],
    ]
    agent = make_agent(server, image_size="1024x768")  # the screen at 1024x576, from y = 96
    action, info = agent.act(observation())
    assert action == {"type": "click", "x": 640, "y": 360}
    assert "lies on the image's padding" in info["parse_error"]
    assert server.body(0)["tools"][0]["display_height"] == 768


def test_two_unusable_replies_end_as_invalid_and_are_answered_next_step(
    server: FakeResponsesServer,
) -> None:
    server.script = [
        [computer_call("call_1", {"type": "drag", "path": []})],
        [computer_call("call_2", {"type": "move", "x": 1, "y": 1})],
        [computer_call("call_3", {"type": "wait"})],
    ]
    agent = make_agent(server, history="server")
    action, info = agent.act(observation(1))
    assert action["type"] == "invalid_reply"
    assert action["raw"] == 'computer_call [{"type":"move","x":1,"y":1}]'
    assert info["parse_error"].endswith("move (the mouse is moved only by clicks) is not available")

    obs = observation(2, shade=77)
    agent.act(obs)
    body = server.body()
    assert body["previous_response_id"] == "resp_1"
    output, user = body["input"]
    assert output["call_id"] == "call_2"
    assert output["output"]["image_url"] == data_url(obs)
    assert texts(user)[1].startswith("Nothing of your last reply was performed: ")


def test_an_unknown_function_is_a_mistake(server: FakeResponsesServer) -> None:
    other = {**function_call("fc_1", {}), "name": "browse"}
    server.script = [[other], [function_call("fc_2", {"action": "done"})]]
    action, info = make_agent(server).act(observation())
    assert action == {"type": "done"}
    assert "there is no function 'browse'" in info["parse_error"]


# ---- history --------------------------------------------------------------------------------


def test_stateless_history_sends_one_fresh_message_each_step(server: FakeResponsesServer) -> None:
    server.script = [[computer_call("call_1", click(1, 1))], [computer_call("call_2", click(2, 2))]]
    agent = make_agent(server)  # history=0
    agent.act(observation(1))
    agent.act(observation(2))
    body = server.body()
    assert "previous_response_id" not in body
    [user] = body["input"]
    assert texts(user)[0] == observation(2)["record"]
    assert images(user) == [data_url(observation(2))]


def test_explicit_history_resends_the_last_exchanges_with_images_only_in_the_newest(
    server: FakeResponsesServer,
) -> None:
    server.script = [
        [reasoning(0), message("A box."), computer_call("call_1", click(1, 1))],
        [reasoning(1), computer_call("call_2", {"type": "type", "text": "ab"})],
        [reasoning(2), computer_call("call_3", {"type": "keypress", "keys": ["ENTER"]})],
        [computer_call("call_4", {"type": "wait"})],
    ]
    agent = make_agent(server, history=2)
    for step in (1, 2, 3, 4):
        agent.act(observation(step, shade=step, keyframe_count=1))

    second = server.body(1)["input"]
    assert second[:4] == [
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": observation(1)["record"]}
        ]},
        reasoning(0),
        message("A box."),
        computer_call("call_1", click(1, 1)),
    ]  # fmt: skip
    assert second[4]["type"] == "computer_call_output" and second[4]["call_id"] == "call_1"

    fourth = server.body(3)
    assert fourth["store"] is False and "previous_response_id" not in fourth
    items = fourth["input"]
    # Step 2 as text, step 3 verbatim, then the answer to step 3's call and step 4's message.
    assert items[0] == {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": observation(2)["record"]}],
    }
    assert items[1] == {
        "type": "message",
        "role": "assistant",
        "content": 'computer_call [{"type":"type","text":"ab"}]',
    }
    assert items[2]["role"] == "user" and texts(items[2]) == [observation(3)["record"]]
    assert items[3:5] == [
        reasoning(2),
        computer_call("call_3", {"type": "keypress", "keys": ["ENTER"]}),
    ]
    assert items[5]["type"] == "computer_call_output" and items[5]["call_id"] == "call_3"
    assert items[5]["output"]["image_url"] == data_url(observation(4, shade=4))
    assert items[6]["role"] == "user" and texts(items[6])[0] == observation(4)["record"]
    assert len(items) == 7
    assert image_count(items[:5]) == 0
    assert image_count(items[5:]) == 2  # the screen in the call output, and the keyframe


def test_server_history_chains_and_sends_only_the_new_items(server: FakeResponsesServer) -> None:
    server.script = [[computer_call("call_1", click(1, 1))], [computer_call("call_2", click(2, 2))]]
    agent = make_agent(server, history="server")
    agent.act(observation(1))
    obs = observation(2, shade=5)
    agent.act(obs)
    first, second = server.body(0), server.body(1)
    assert first["store"] is True and "previous_response_id" not in first
    assert second["previous_response_id"] == "resp_0"
    output, user = second["input"]
    assert output["type"] == "computer_call_output"
    assert output["output"] == {"type": "computer_screenshot", "image_url": data_url(obs)}
    assert texts(user)[0] == obs["record"]

    agent.reset("Another task.")
    server.script = [[computer_call("call_9", click(3, 3))]]
    agent.act(observation(1))
    assert "previous_response_id" not in server.body()
    assert len(server.body()["input"]) == 1


def test_a_refusal_of_the_second_ask_keeps_the_steps_info(server: FakeResponsesServer) -> None:
    server.script = [[message("Let me think.")], (413, "Request too large.")]
    with pytest.raises(ModelRefused) as caught:
        make_agent(server).act(observation())
    info = caught.value.info
    assert info["calls"] == 2 and info["input_tokens"] == INPUT_TOKENS
    assert info["retried"] is True and info["parse_error"] == "the reply has no tool call"


def test_a_bad_image_size_is_refused(server: FakeResponsesServer) -> None:
    with pytest.raises(TypeError, match="expected image_size as a string"):
        OpenAIComputerAgent(base_url=server.url, image_size=1024)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="expected an image size"):
        OpenAIComputerAgent(base_url=server.url, image_size="big")


@pytest.mark.parametrize("history", ["client", -1, True, 1.5])
def test_bad_history_is_refused(server: FakeResponsesServer, history: Any) -> None:
    with pytest.raises(ValueError, match="expected history 'server' or a number"):
        OpenAIComputerAgent(base_url=server.url, api_key="k", history=history)


# ---- errors ---------------------------------------------------------------------------------


def test_a_refused_request_is_the_agents_failure_and_not_retried(
    server: FakeResponsesServer,
) -> None:
    server.script = [(400, "Invalid value for 'display_width'.")]
    agent = make_agent(server)
    with pytest.raises(ModelRefused) as caught:
        agent.act(observation())
    error = caught.value
    assert isinstance(error, AgentFailure) and isinstance(error, LLMError)
    assert error.status == 400
    assert str(error) == (
        f"the model server refused the request: {server.url} answered HTTP 400: "
        "Invalid value for 'display_width'."
    )
    assert error.info["calls"] == 1 and error.info["input_tokens"] == 0
    assert error.info["retried"] is False
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [401, 403, 404, 413, 422])
def test_other_refusals(server: FakeResponsesServer, status: int) -> None:
    server.script = [(status, "no")]
    with pytest.raises(ModelRefused) as caught:
        make_agent(server).act(observation())
    assert caught.value.status == status
    assert len(server.requests) == 1


def test_a_server_error_is_retried_by_the_sdk(server: FakeResponsesServer) -> None:
    server.script = [(500, "try again"), [computer_call("call_1", click(7, 8))]]
    action, info = make_agent(server).act(observation())
    assert action == {"type": "click", "x": 7, "y": 8}
    assert info["calls"] == 2
    assert len(server.requests) == 2
    assert server.requests[1].headers["x-stainless-retry-count"] == "1"


@pytest.mark.parametrize("status", [408, 409, 429, 503])
def test_retries_that_run_out_are_an_llm_error(server: FakeResponsesServer, status: int) -> None:
    # The SDK retries 408 and 409 too: once its retries run out, the server, not the request,
    # is at fault, as in the Anthropic agent.
    server.script = [(status, "busy")] * 3
    agent = make_agent(server, http_retries=2)
    with pytest.raises(LLMError) as caught:
        agent.act(observation())
    assert not isinstance(caught.value, ModelRefused)
    assert caught.value.status == status
    assert str(caught.value) == f"{server.url} answered HTTP {status}: busy"
    assert len(server.requests) == 3
    assert agent.total_calls == 3  # a failed step's calls count, as the other agents'


def test_an_unreachable_server_is_an_llm_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    agent = OpenAIComputerAgent(base_url=url, api_key="k", http_retries=0, timeout_s=5)
    with pytest.raises(LLMError) as caught:
        agent.act(observation())
    assert not isinstance(caught.value, ModelRefused)
    assert str(caught.value).startswith(f"cannot reach the model server at {url}: ")
    assert caught.value.status is None


def test_an_answer_without_output_is_an_llm_error(server: FakeResponsesServer) -> None:
    server.script = [[]]
    original: Callable[[str], tuple[int, dict[str, Any]]] = server.next_answer

    def without_output(path: str) -> tuple[int, dict[str, Any]]:
        status, answer = original(path)
        answer.pop("output")
        return status, answer

    server.next_answer = without_output  # type: ignore[method-assign]
    with pytest.raises(LLMError, match="answered without a response's output"):
        make_agent(server).act(observation())


# ---- construction ---------------------------------------------------------------------------


def test_a_missing_key_names_the_variable() -> None:
    with pytest.raises(ValueError, match="set OPENAI_API_KEY or pass api_key"):
        OpenAIComputerAgent()


def test_a_local_server_needs_no_key(server: FakeResponsesServer) -> None:
    server.script = [[computer_call("call_1", {"type": "wait"})]]
    agent = OpenAIComputerAgent(base_url=server.url)
    agent.act(observation())
    assert server.requests[0].headers["authorization"] == "Bearer unused"


def test_the_base_url_and_key_come_from_the_environment(
    server: FakeResponsesServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    server.script = [[computer_call("call_1", {"type": "wait"})]]
    OpenAIComputerAgent().act(observation())
    assert server.requests[0].headers["authorization"] == "Bearer sk-env"


def test_a_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(DependencyNotInstalled, match=r'pip install "dynacu-gym\[openai\]"'):
        OpenAIComputerAgent(api_key="k")


def test_the_agent_contract() -> None:
    assert OpenAIComputerAgent.name == "llm"
    assert OpenAIComputerAgent.privileged is False


@pytest.mark.browser
def test_the_computer_calls_solve_the_probe_page_in_a_real_env(server, probe_task) -> None:
    from conftest import play

    from dynacu_gym.env import DynaCUEnv
    from dynacu_gym.modes import apply_mode

    server.script = [
        [reasoning(1), computer_call("c1", click(640, 200))],
        [computer_call("c2", {"type": "type", "text": "blue whale"})],
        [computer_call("c3", {"type": "keypress", "keys": ["ENTER"]})],
    ]
    env = apply_mode(DynaCUEnv(probe_task), "aoi_visual")
    try:
        actions, info = play(env, make_agent(server, history="server"))
    finally:
        env.close()
    assert info["task_result"] == "success"
    assert actions == [
        {"type": "click", "x": 640, "y": 200},
        {"type": "type", "text": "blue whale"},
        {"type": "key", "key": "Enter"},
    ]
    # Chained on the server: each later request names the last response and answers its call
    # with the real screen, the record beside it.
    for n, call_id in ((1, "c1"), (2, "c2")):
        body = server.body(n)
        assert body["previous_response_id"] == f"resp_{n - 1}"
        output = next(i for i in body["input"] if i.get("type") == "computer_call_output")
        assert output["call_id"] == call_id
        assert png_size(output["output"]["image_url"]) == (1280, 720)
        record = next(t for i in body["input"] if i.get("role") == "user" for t in texts(i))
        assert "[TASK]" in record and f"Step {n}: " in record
