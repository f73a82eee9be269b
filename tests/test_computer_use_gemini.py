"""The Gemini computer-use agent, through the real SDK, against a local generateContent server."""

from __future__ import annotations

import base64
import importlib
import socket
import struct
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from computer_use_servers import Answer, Request, local_server

pytest.importorskip("google.genai")

from gymnasium.error import DependencyNotInstalled  # noqa: E402

from dynacu_agents.computer_use import gemini  # noqa: E402
from dynacu_agents.computer_use.gemini import (  # noqa: E402
    EXCLUDED_FUNCTIONS,
    GeminiCall,
    GeminiComputerAgent,
    call_actions,
    gemini_key,
)
from dynacu_agents.coords import CoordSpace, ImageFit  # noqa: E402
from dynacu_agents.llm import LLMError, ModelRefused  # noqa: E402
from dynacu_gym.actions import ActionError  # noqa: E402

MODEL = "gemini-2.5-computer-use-preview-10-2025"
PATH = f"/v1beta/models/{MODEL}:generateContent"
INPUT_TOKENS = 1000  # the server's prompt tokens for request n are INPUT_TOKENS + n
OUTPUT_TOKENS = 7
THOUGHT_TOKENS = 3
TASK = "Type the code into the box."
RECORD = "[TASK] Type the code into the box.\n[PRIOR ACTIONS] none"
FULL = CoordSpace("norm1000", ImageFit())


@dataclass
class FakeGemini:
    """Answers generateContent requests with scripted replies; remembers every request."""

    url: str
    port: int
    script: list[dict[str, Any] | tuple[int, str]] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)

    def answer(self, path: str) -> tuple[int, dict[str, Any]]:
        n = len(self.requests)
        item = self.script.pop(0) if self.script else reply(call("wait_5_seconds"))
        if path != PATH:
            return 404, {
                "error": {"code": 404, "message": f"no route {path}", "status": "NOT_FOUND"}
            }
        if isinstance(item, tuple):
            status, message = item
            name = "INVALID_ARGUMENT" if status < 500 else "INTERNAL"
            return status, {"error": {"code": status, "message": message, "status": name}}
        usage = {
            "promptTokenCount": INPUT_TOKENS + n,
            "candidatesTokenCount": OUTPUT_TOKENS,
            "thoughtsTokenCount": THOUGHT_TOKENS,
        }
        return 200, {**item, "usageMetadata": usage, "modelVersion": MODEL}

    def contents(self, index: int = -1) -> list[dict[str, Any]]:
        return self.requests[index].body["contents"]


def call(name: str, call_id: str | None = None, **args: Any) -> dict[str, Any]:
    """A functionCall part as the API writes it."""
    function_call: dict[str, Any] = {"name": name, "args": args}
    if call_id:
        function_call["id"] = call_id
    return {"functionCall": function_call}


def text(words: str) -> dict[str, Any]:
    return {"text": words}


def reply(*parts: dict[str, Any], finish: str = "STOP") -> dict[str, Any]:
    """A GenerateContentResponse with one candidate of these parts (usage added by the server)."""
    return {
        "candidates": [
            {"content": {"role": "model", "parts": list(parts)}, "finishReason": finish, "index": 0}
        ]
    }


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(gemini, "BACKOFF_S", 0.0)


@pytest.fixture
def server() -> Iterator[FakeGemini]:
    state: FakeGemini

    def respond(request: Request) -> Answer:
        status, answer = state.answer(request.path.split("?")[0])
        state.requests.append(request)
        return Answer(status, answer)

    with local_server(respond) as port:
        state = FakeGemini(url=f"http://127.0.0.1:{port}", port=port)
        yield state


def make_agent(server: FakeGemini, **kwargs: Any) -> GeminiComputerAgent:
    agent = GeminiComputerAgent(base_url=server.url, api_key="test-key", **kwargs)
    agent.reset(TASK)
    return agent


def observation(keyframes: int = 0, elapsed: float = 3.0, record: str = RECORD) -> dict[str, Any]:
    screen = np.zeros((720, 1280, 3), dtype=np.uint8)
    screen[300:420, 400:880] = (230, 230, 230)  # a text box
    frames = np.zeros((5, 720, 1280, 3), dtype=np.uint8)
    for i in range(5):
        frames[i, :, : 100 * (i + 1)] = 40 * (i + 1)
    return {
        "record": record,
        "screenshot": screen,
        "keyframes": frames,
        "keyframe_count": keyframes,
        "keyframe_times": np.array([1.0, 1.5, 2.0, 2.5, 2.9]),
        "elapsed": elapsed,
        "instruction": TASK,
    }


def camel(d: dict[str, Any], name: str) -> Any:
    """``d[name]`` in camelCase or snake_case, whichever the SDK wrote."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
    return d[name] if name in d else d[snake]


def inline(part: dict[str, Any]) -> dict[str, Any] | None:
    return part.get("inlineData") or part.get("inline_data")


def response_of(part: dict[str, Any]) -> dict[str, Any] | None:
    return part.get("functionResponse") or part.get("function_response")


def png_size(data_b64: str) -> tuple[int, int]:
    """(width, height) from a base64 PNG's IHDR (the SDK writes the URL-safe alphabet)."""
    png = base64.urlsafe_b64decode(data_b64.replace("+", "-").replace("/", "_"))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", png[16:24])


def images_in(turn: dict[str, Any]) -> list[tuple[int, int]]:
    """The sizes of every PNG in a turn, in its own parts and in its function responses."""
    sizes = []
    for part in turn["parts"]:
        blob = inline(part)
        if blob is not None:
            assert camel(blob, "mimeType") == "image/png"
            sizes.append(png_size(blob["data"]))
        response = response_of(part)
        for inner in (response or {}).get("parts") or []:
            blob = inline(inner)
            assert blob is not None
            sizes.append(png_size(blob["data"]))
    return sizes


def texts_of(turn: dict[str, Any]) -> list[str]:
    return [part["text"] for part in turn["parts"] if "text" in part]


# ---- the request ------------------------------------------------------------------------------


def test_request_has_the_tool_the_functions_and_the_observation(server: FakeGemini) -> None:
    server.script = [reply(call("click_at", x=500, y=250))]
    agent = make_agent(server)
    action, info = agent.act(observation())
    assert action == {"type": "click", "x": 640, "y": 180}
    assert len(server.requests) == 1
    request = server.requests[0]
    assert request.path == PATH
    assert request.headers["x-goog-api-key"] == "test-key"
    body = request.body
    computer, custom = body["tools"]
    use = camel(computer, "computerUse")
    assert use["environment"] == "ENVIRONMENT_BROWSER"
    assert camel(use, "excludedPredefinedFunctions") == list(EXCLUDED_FUNCTIONS)
    assert set(EXCLUDED_FUNCTIONS) == {
        "open_web_browser",
        "navigate",
        "go_back",
        "go_forward",
        "search",
        "drag_and_drop",
        "hover_at",
    }
    declarations = camel(custom, "functionDeclarations")
    assert [d["name"] for d in declarations] == ["speak", "wait", "done"]
    assert declarations[0]["parameters"]["required"] == ["text"]
    assert declarations[1]["parameters"]["properties"]["seconds"]["type"] == "NUMBER"
    assert "parameters" not in declarations[2]
    system = camel(body, "systemInstruction")["parts"][0]["text"]
    assert "1280x720" in system and "0 to 999" in system and "done()" in system
    assert "only when the task says to answer aloud" in system
    config = camel(body, "generationConfig")
    assert camel(config, "maxOutputTokens") == 1024
    assert config["temperature"] == 0.0
    assert "thinkingConfig" not in config and "thinking_config" not in config
    (turn,) = body["contents"]
    assert turn["role"] == "user"
    assert turn["parts"][0] == {"text": RECORD}
    assert turn["parts"][1] == {"text": "Screenshot now (t = 3.0s):"}
    assert images_in(turn) == [(1280, 720)]
    assert inline(turn["parts"][2]) is not None
    assert info == {
        "calls": 1,
        "input_tokens": INPUT_TOKENS,
        "output_tokens": OUTPUT_TOKENS,
        "reasoning_tokens": THOUGHT_TOKENS,
        "latency_s": info["latency_s"],
        "retried": False,
        "reply": "click_at(x=500, y=250)",
        "parse_error": "",
    }
    assert 0 < info["latency_s"] < 30
    assert agent.total_calls == 1 and agent.total_input_tokens == INPUT_TOKENS


def test_fitted_image_and_keyframes(server: FakeGemini) -> None:
    server.script = [reply(call("click_at", x=500, y=500))] * 2
    agent = make_agent(server, image_size="640")
    agent.act(observation(keyframes=3))
    (turn,) = server.contents(0)
    assert images_in(turn) == [(640, 360)] * 4
    assert texts_of(turn) == [
        RECORD,
        "Screenshot now (t = 3.0s):",
        "Keyframe 1 at 1.0s:",
        "Keyframe 2 at 1.5s:",
        "Keyframe 3 at 2.0s:",
    ]
    agent = make_agent(server, image_size="1000x1000", max_keyframes=1)
    action, _ = agent.act(observation(keyframes=3))
    (turn,) = server.contents(1)
    assert images_in(turn) == [(1000, 1000)] * 2
    assert texts_of(turn)[-1] == "Keyframe 3 at 2.0s:"
    assert action == {"type": "click", "x": 640, "y": 360}  # the screen's centre, padding aside
    system = camel(server.requests[1].body, "systemInstruction")["parts"][0]["text"]
    assert "1000x1000 pixels, the screen scaled to 1000x562 at (0, 219)" in system


def test_reasoning_effort_sets_a_thinking_budget(server: FakeGemini) -> None:
    agent = make_agent(server, reasoning_effort="medium", max_tokens=500, temperature=0.3)
    agent.act(observation())
    config = camel(server.requests[0].body, "generationConfig")
    assert camel(camel(config, "thinkingConfig"), "thinkingBudget") == 8192
    assert camel(config, "maxOutputTokens") == 500 + 8192
    assert config["temperature"] == 0.3


# ---- what each function comes to ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        (call("click_at", x=999, y=999), [{"type": "click", "x": 1278, "y": 719}]),
        (call("click_at", x=0, y=0), [{"type": "click", "x": 0, "y": 0}]),
        (call("key_combination", keys="control+a"), [{"type": "key", "key": "Control+a"}]),
        (call("key_combination", keys="Control+A"), [{"type": "key", "key": "Control+a"}]),
        (call("key_combination", keys="enter"), [{"type": "key", "key": "Enter"}]),
        (call("key_combination", keys="Shift+Tab"), [{"type": "key", "key": "Shift+Tab"}]),
        (
            call("scroll_document", direction="down"),
            [{"type": "scroll", "direction": "down", "amount": 7}],
        ),
        (
            call("scroll_document", direction="up"),
            [{"type": "scroll", "direction": "up", "amount": 7}],
        ),
        (
            call("scroll_at", x=500, y=500, direction="up", magnitude=400),
            [{"type": "scroll", "direction": "up", "amount": 3}],  # 288 px
        ),
        (
            call("scroll_at", x=500, y=500, direction="down"),
            [{"type": "scroll", "direction": "down", "amount": 6}],  # 800 of 1000: 576 px
        ),
        (call("wait_5_seconds"), [{"type": "wait", "seconds": 5.0}]),
        (call("wait", seconds=2.5), [{"type": "wait", "seconds": 2.5}]),
        (call("speak", text="April 28"), [{"type": "speak", "text": "April 28"}]),
        (call("done"), [{"type": "done"}]),
        (
            call(
                "type_text_at",
                x=400,
                y=500,
                text="E-4012",
                press_enter=True,
                clear_before_typing=True,
            ),
            [
                {"type": "click", "x": 512, "y": 360},
                {"type": "key", "key": "Control+a"},
                {"type": "key", "key": "Backspace"},
                {"type": "type", "text": "E-4012"},
                {"type": "key", "key": "Enter"},
            ],
        ),
        (
            call(
                "type_text_at",
                x=400,
                y=500,
                text="E-4012",
                press_enter=False,
                clear_before_typing=False,
            ),
            [{"type": "click", "x": 512, "y": 360}, {"type": "type", "text": "E-4012"}],
        ),
        (  # the documented defaults: clear first, press Enter after
            call("type_text_at", x=400, y=500, text="hi"),
            [
                {"type": "click", "x": 512, "y": 360},
                {"type": "key", "key": "Control+a"},
                {"type": "key", "key": "Backspace"},
                {"type": "type", "text": "hi"},
                {"type": "key", "key": "Enter"},
            ],
        ),
    ],
)
def test_each_function_over_the_wire(
    server: FakeGemini, part: dict[str, Any], expected: list[dict[str, Any]]
) -> None:
    server.script = [reply(part)]
    agent = make_agent(server)
    got = []
    for step in range(len(expected)):
        action, info = agent.act(observation())
        got.append(action)
        assert info["calls"] == (1 if step == 0 else 0)
        assert info["parse_error"] == ""
    assert got == expected
    assert len(server.requests) == 1
    action, info = agent.act(observation())  # the queue is empty: the model is asked again
    assert info["calls"] == 1 and len(server.requests) == 2


def test_queued_actions_cost_nothing(server: FakeGemini) -> None:
    server.script = [reply(call("click_at", x=100, y=100), call("key_combination", keys="Enter"))]
    agent = make_agent(server)
    first, info = agent.act(observation())
    assert first == {"type": "click", "x": 128, "y": 72}
    assert info["reply"] == 'click_at(x=100, y=100)\nkey_combination(keys="Enter")'
    second, info = agent.act(observation())
    assert second == {"type": "key", "key": "Enter"}
    assert info == {
        "calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "latency_s": 0.0,
        "retried": False,
        "reply": "(queued from the previous reply)",
        "parse_error": "",
    }
    assert agent.total_calls == 1
    agent.reset(TASK)
    server.script = [reply(call("click_at", x=100, y=100), call("done"))]
    agent.act(observation())
    agent.reset(TASK)  # the queued done is dropped with the episode
    action, info = agent.act(observation())
    assert action == {"type": "wait", "seconds": 5.0} and info["calls"] == 1
    for turn_request in server.requests:  # history=0: one fresh user turn every time
        assert len(turn_request.body["contents"]) == 1


def test_narration_is_the_text_beside_the_calls(server: FakeGemini) -> None:
    seen = "A toast said the order code is E-4012."
    server.script = [reply(text(seen), call("speak", text="E-4012"), call("done"))]
    agent = make_agent(server)
    action, info = agent.act(observation())
    assert action == {"type": "speak", "text": "E-4012", "narration": seen}
    assert info["reply"] == f'{seen}\nspeak(text="E-4012")\ndone()'
    assert agent.act(observation())[0] == {"type": "done"}
    server.script = [reply(text("x" * 3000), call("done"))]
    action, _ = agent.act(observation())
    assert action == {"type": "done", "narration": "x" * 2000}


def test_thought_parts_are_not_narration(server: FakeGemini) -> None:
    server.script = [reply({"text": "thinking it over", "thought": True}, call("done"))]
    action, info = make_agent(server).act(observation())
    assert action == {"type": "done"}
    assert info["reply"] == "done()"


# ---- replies that cannot be performed ----------------------------------------------------------


def test_a_text_reply_is_asked_again(server: FakeGemini) -> None:
    server.script = [reply(text("The task is complete.")), reply(call("done"))]
    agent = make_agent(server)
    action, info = agent.act(observation())
    assert action == {"type": "done"}
    assert info["calls"] == 2 and info["retried"] is True
    assert info["parse_error"] == "the reply has no function call"
    assert info["input_tokens"] == 2 * INPUT_TOKENS + 1
    user, model, again = server.contents(1)
    assert images_in(user) == [(1280, 720)]
    assert model == {"role": "model", "parts": [{"text": "The task is complete."}]}
    assert again["role"] == "user" and images_in(again) == []
    (prompt,) = texts_of(again)
    assert prompt.startswith("Your reply was not performed: the reply has no function call. ")
    assert "click_at" in prompt and "done()" in prompt


def test_two_text_replies_are_an_invalid_reply(server: FakeGemini) -> None:
    server.script = [reply(text("I am done.")), reply(text("Really done."))]
    action, info = make_agent(server).act(observation())
    assert action == {"type": "invalid_reply", "raw": "Really done."}
    assert info["calls"] == 2 and info["retried"] is True
    assert info["parse_error"] == "the reply has no function call"


def test_an_empty_candidate_is_asked_again_in_the_same_turn(server: FakeGemini) -> None:
    server.script = [
        reply(finish="MALFORMED_FUNCTION_CALL"),
        reply(call("click_at", x=500, y=250)),
    ]
    action, info = make_agent(server).act(observation())
    assert action == {"type": "click", "x": 640, "y": 180}
    assert info["parse_error"] == (
        "the reply has no function call (finish reason MALFORMED_FUNCTION_CALL)"
    )
    (turn,) = server.contents(1)  # no model turn to answer: the prompt joins the user turn
    assert texts_of(turn)[0] == RECORD
    assert texts_of(turn)[-1].startswith(
        "Your reply was not performed: the reply has no function call (finish reason "
        "MALFORMED_FUNCTION_CALL). Answer with a function call"
    )
    assert images_in(turn) == [(1280, 720)]


def test_an_excluded_function_is_answered_and_asked_again(server: FakeGemini) -> None:
    server.script = [
        reply(call("navigate", url="https://example.com")),
        reply(call("click_at", x=500, y=250)),
    ]
    action, info = make_agent(server).act(observation())
    assert action == {"type": "click", "x": 640, "y": 180}
    assert info["retried"] is True and info["calls"] == 2
    assert info["parse_error"].startswith("navigate is not available here")
    user, model, again = server.contents(1)
    assert model["parts"] == [call("navigate", url="https://example.com")]
    response = response_of(again["parts"][0])
    assert response is not None and response["name"] == "navigate"
    assert response["response"]["url"] == "(not shown)"
    assert response["response"]["error"].startswith("navigate is not available here")
    assert "click_at" in response["response"]["error"]
    assert texts_of(again)[0].startswith("None of your calls was performed: navigate")


def test_excluded_twice_is_an_invalid_reply(server: FakeGemini) -> None:
    server.script = [reply(call("hover_at", x=1, y=2)), reply(call("go_back"))]
    action, info = make_agent(server).act(observation())
    assert action == {"type": "invalid_reply", "raw": "go_back()"}
    assert info["parse_error"].startswith("go_back is not available here")
    assert len(server.requests) == 2


def test_a_point_outside_the_space_is_told_to_the_model(server: FakeGemini) -> None:
    server.script = [
        reply(call("click_at", x=1500, y=200)),
        reply(call("click_at", x=500, y=500)),
    ]
    action, info = make_agent(server).act(observation())
    assert action == {"type": "click", "x": 640, "y": 360}
    assert info["parse_error"] == (
        "click_at: the point (1500, 200) is outside the norm1000 coordinate space; expected "
        "0 <= x <= 1000 and 0 <= y <= 1000"
    )
    _, _, again = server.contents(1)
    response = response_of(again["parts"][0])
    assert response is not None and response["response"]["error"] == info["parse_error"]


def test_one_bad_call_holds_back_the_whole_reply(server: FakeGemini) -> None:
    server.script = [
        reply(call("click_at", "c1", x=500, y=500), call("drag_and_drop", "c2", x=1, y=1)),
        reply(call("click_at", x=500, y=500)),
    ]
    agent = make_agent(server)
    action, info = agent.act(observation())
    assert action == {"type": "click", "x": 640, "y": 360}
    _, _, again = server.contents(1)
    first, second = (response_of(p) for p in again["parts"][:2])
    assert first is not None and second is not None
    assert (first["id"], first["name"]) == ("c1", "click_at")
    assert first["response"]["error"] == "not performed, since another call of this reply cannot be"
    assert (second["id"], second["name"]) == ("c2", "drag_and_drop")
    assert second["response"]["error"].startswith("drag_and_drop is not available here")
    assert agent.act(observation())[1]["calls"] == 1  # nothing of the bad reply was queued


def test_a_call_that_needs_confirmation_is_not_performed(server: FakeGemini) -> None:
    decision = {"decision": "require_confirmation", "explanation": "a cookie banner"}
    server.script = [
        reply(call("click_at", x=500, y=500, safety_decision=decision)),
        reply(call("wait_5_seconds")),
    ]
    action, info = make_agent(server).act(observation())
    assert action == {"type": "wait", "seconds": 5.0}
    assert "confirmation" in info["parse_error"]
    _, _, again = server.contents(1)
    response = response_of(again["parts"][0])
    assert response is not None
    assert "safety_acknowledgement" not in response["response"]
    assert "no one is here" in response["response"]["error"]


def test_a_wait_too_long_is_a_mistake(server: FakeGemini) -> None:
    server.script = [reply(call("wait", seconds=45)), reply(call("wait", seconds=30))]
    action, info = make_agent(server).act(observation())
    assert action == {"type": "wait", "seconds": 30.0}
    assert info["parse_error"] == (
        "wait: expected wait seconds in [0, 30], got 45; wait again to wait longer"
    )


# ---- history ---------------------------------------------------------------------------------


def test_history_keeps_exchanges_with_images_only_in_the_newest(server: FakeGemini) -> None:
    signed = {**call("click_at", "c1", x=500, y=250), "thoughtSignature": "c2lnbmVk"}
    server.script = [
        reply(text("A text box."), signed),
        reply(
            call(
                "type_text_at",
                "c2",
                x=400,
                y=500,
                text="E-4012",
                press_enter=False,
                clear_before_typing=False,
            )
        ),
        reply(call("key_combination", "c3", keys="enter")),
        reply(call("done", "c4")),
    ]
    agent = make_agent(server, history=2)
    assert agent.act(observation(keyframes=1))[0] == {
        "type": "click",
        "x": 640,
        "y": 180,
        "narration": "A text box.",
    }
    assert len(server.contents(0)) == 1

    assert agent.act(observation(keyframes=2, elapsed=4.0))[0] == {
        "type": "click",
        "x": 512,
        "y": 360,
    }
    opening, model, newest = server.contents(1)
    assert opening == {"role": "user", "parts": [{"text": f"The task: {TASK}"}]}
    assert model["role"] == "model"
    assert model["parts"][0] == {"text": "A text box."}
    assert camel(model["parts"][1], "thoughtSignature") == "c2lnbmVk"  # sent back as it came
    response = response_of(newest["parts"][0])
    assert response is not None
    assert (response["id"], response["name"]) == ("c1", "click_at")
    assert response["response"] == {"url": "(not shown)"}
    assert images_in(newest) == [(1280, 720)] * 3  # the screenshot in the response, 2 keyframes
    assert [png_size(camel(p, "inlineData")["data"]) for p in response["parts"]] == [(1280, 720)]
    assert texts_of(newest) == [
        RECORD,
        "Screenshot now (t = 4.0s): the image of the click_at response.",
        "Keyframe 1 at 1.0s:",
        "Keyframe 2 at 1.5s:",
    ]

    assert agent.act(observation())[0] == {"type": "type", "text": "E-4012"}  # queued
    assert len(server.requests) == 2
    assert agent.act(observation())[0] == {"type": "key", "key": "Enter"}
    turns = server.contents(2)
    assert [t["role"] for t in turns] == ["user", "model", "user", "model", "user"]
    assert [images_in(t) for t in turns[:-1]] == [[], [], [], []]
    assert images_in(turns[-1]) == [(1280, 720)]
    old = response_of(turns[2]["parts"][0])
    assert old is not None and old["name"] == "click_at" and not old.get("parts")
    assert len(turns[2]["parts"]) == 1  # no record kept in older turns
    newest_response = response_of(turns[4]["parts"][0])
    assert newest_response is not None and newest_response["name"] == "type_text_at"

    assert agent.act(observation())[0] == {"type": "done"}
    turns = server.contents(3)  # two exchanges kept: the click's has gone
    assert turns[0] == {"role": "user", "parts": [{"text": f"The task: {TASK}"}]}
    calls = [p["functionCall"]["name"] for t in turns if t["role"] == "model" for p in t["parts"]]
    assert calls == ["type_text_at", "key_combination"]
    answered = [response_of(t["parts"][0]) for t in turns[2::2]]
    assert [a["name"] for a in answered if a] == ["type_text_at", "key_combination"]
    assert images_in(turns[-1]) == [(1280, 720)]
    assert sum(len(images_in(t)) for t in turns) == 1


def test_history_answers_a_custom_call_and_keeps_the_screenshot_beside(
    server: FakeGemini,
) -> None:
    server.script = [reply(call("wait", seconds=1)), reply(call("done"))]
    agent = make_agent(server, history=1)
    agent.act(observation())
    agent.act(observation())
    opening, model, newest = server.contents(1)
    response = response_of(newest["parts"][0])
    assert response is not None
    assert response == {"name": "wait", "response": {"output": "performed"}}
    assert inline(newest["parts"][3]) is not None  # no computer-use response: its own part
    assert texts_of(newest) == [RECORD, "Screenshot now (t = 3.0s):"]


def test_history_keeps_a_retried_exchange(server: FakeGemini) -> None:
    server.script = [
        reply(call("navigate", url="x")),
        reply(call("click_at", x=10, y=10)),
        reply(call("done")),
    ]
    agent = make_agent(server, history=3)
    agent.act(observation())
    agent.act(observation())
    turns = server.contents(2)
    assert [t["role"] for t in turns] == ["user", "model", "user", "model", "user"]
    refused = response_of(turns[2]["parts"][0])
    assert refused is not None and refused["name"] == "navigate" and "error" in refused["response"]
    assert texts_of(turns[2])[0].startswith("None of your calls was performed")
    answered = response_of(turns[4]["parts"][0])
    assert answered is not None and answered["name"] == "click_at"
    assert sum(len(images_in(t)) for t in turns) == 1


# ---- errors ----------------------------------------------------------------------------------


def test_a_refused_request_is_the_agents_failure(server: FakeGemini) -> None:
    server.script = [(400, "Request payload size exceeds the limit")]
    agent = make_agent(server)
    with pytest.raises(ModelRefused) as caught:
        agent.act(observation())
    error = caught.value
    assert error.status == 400
    assert str(error) == (
        f"the model server refused the request: {server.url}{PATH} answered HTTP 400 "
        "INVALID_ARGUMENT: Request payload size exceeds the limit"
    )
    assert error.info["calls"] == 1 and error.info["input_tokens"] == 0
    assert len(server.requests) == 1
    assert agent.total_calls == 1


@pytest.mark.parametrize("status", [401, 403, 404, 413])
def test_other_refusals(server: FakeGemini, status: int) -> None:
    server.script = [(status, "no")]
    with pytest.raises(ModelRefused) as caught:
        make_agent(server).act(observation())
    assert caught.value.status == status and len(server.requests) == 1


@pytest.mark.parametrize("status", [500, 503, 429])
def test_a_busy_server_is_retried(server: FakeGemini, status: int) -> None:
    server.script = [(status, "try later"), reply(call("click_at", x=500, y=250))]
    action, info = make_agent(server).act(observation())
    assert action == {"type": "click", "x": 640, "y": 180}
    assert info["calls"] == 2 and info["input_tokens"] == INPUT_TOKENS + 1
    assert info["retried"] is False  # the reply was fine; only the HTTP call was repeated
    assert len(server.requests) == 2


def test_retries_run_out(server: FakeGemini) -> None:
    server.script = [(500, "boom")] * 3
    agent = make_agent(server, http_retries=2)
    with pytest.raises(LLMError) as caught:
        agent.act(observation())
    assert not isinstance(caught.value, ModelRefused)
    assert caught.value.status == 500
    assert str(caught.value) == f"{server.url}{PATH} answered HTTP 500 INTERNAL: boom"
    assert len(server.requests) == 3
    assert agent.total_calls == 3


def test_an_unreachable_server(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    agent = GeminiComputerAgent(base_url=f"http://127.0.0.1:{port}", api_key="k", timeout_s=5)
    agent.reset(TASK)
    with pytest.raises(LLMError) as caught:
        agent.act(observation())
    assert not isinstance(caught.value, ModelRefused)
    assert caught.value.status is None
    assert str(caught.value).startswith(
        f"cannot reach the model server at http://127.0.0.1:{port}{PATH}: "
    )


# ---- construction ------------------------------------------------------------------------------


def test_a_key_is_needed() -> None:
    with pytest.raises(ValueError, match="set GEMINI_API_KEY or GOOGLE_API_KEY, or pass api_key"):
        GeminiComputerAgent()


def test_keys_and_base_url_from_the_environment(
    server: FakeGemini, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
    GeminiComputerAgent().act(observation())
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-key")
    GeminiComputerAgent().act(observation())
    assert [r.headers["x-goog-api-key"] for r in server.requests] == ["google-key", "gemini-key"]


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="expected history >= 0"):
        GeminiComputerAgent(api_key="k", history=-1)
    with pytest.raises(ValueError, match="expected reasoning_effort in"):
        GeminiComputerAgent(api_key="k", reasoning_effort="max")
    with pytest.raises(ValueError, match="expected an image size"):
        GeminiComputerAgent(api_key="k", image_size="big")
    with pytest.raises(ValueError, match="expected http_retries >= 0"):
        GeminiComputerAgent(api_key="k", http_retries=-1)


def test_without_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.genai", None)
    with pytest.raises(DependencyNotInstalled, match=r'pip install "dynacu-gym\[gemini\]"'):
        GeminiComputerAgent(api_key="k")


def test_an_sdk_without_the_tool_declares_the_functions(
    server: FakeGemini, monkeypatch: pytest.MonkeyPatch
) -> None:
    types = importlib.import_module("google.genai.types")
    monkeypatch.delattr(types, "ComputerUse")
    server.script = [reply(call("type_text_at", x=400, y=500, text="a", press_enter=False))]
    agent = make_agent(server)
    assert agent.native_tool is False
    action, _ = agent.act(observation())
    assert action == {"type": "click", "x": 512, "y": 360}
    (tool,) = server.requests[0].body["tools"]
    declarations = camel(tool, "functionDeclarations")
    assert [d["name"] for d in declarations] == [
        "click_at",
        "type_text_at",
        "key_combination",
        "scroll_document",
        "scroll_at",
        "wait_5_seconds",
        "speak",
        "wait",
        "done",
    ]
    type_text = declarations[1]["parameters"]
    assert sorted(type_text["properties"]) == [
        "clear_before_typing",
        "press_enter",
        "text",
        "x",
        "y",
    ]
    assert type_text["required"] == ["x", "y", "text"]


# ---- the mapping alone --------------------------------------------------------------------------


def test_call_actions_refuses_what_the_benchmark_cannot_do() -> None:
    with pytest.raises(ActionError, match="scrolls 'up' or 'down' only"):
        call_actions(GeminiCall("scroll_document", {"direction": "left"}), FULL)
    with pytest.raises(ActionError, match="there is no function 'fly'"):
        call_actions(GeminiCall("fly"), FULL)
    with pytest.raises(ActionError, match="click_at needs a number for 'y'"):
        call_actions(GeminiCall("click_at", {"x": 1}), FULL)
    with pytest.raises(ActionError, match="type_text_at needs 'text'"):
        call_actions(GeminiCall("type_text_at", {"x": 1, "y": 1}), FULL)
    with pytest.raises(ActionError, match="lies on the image's padding"):
        call_actions(
            GeminiCall("click_at", {"x": 500, "y": 100}),
            CoordSpace("norm1000", ImageFit.parse("1000x1000")),
        )
    with pytest.raises(ActionError, match="speak: speak needs some words"):
        call_actions(GeminiCall("speak", {"text": "  "}), FULL)
    for name in EXCLUDED_FUNCTIONS:
        with pytest.raises(ActionError, match=f"^{name} is not available here"):
            call_actions(GeminiCall(name), FULL)


def test_gemini_key_spellings() -> None:
    assert gemini_key("control+c") == "Control+c"
    assert gemini_key("Control+Shift+T") == "Control+Shift+t"
    assert gemini_key(["Alt", "Tab"]) == "Alt+Tab"
    assert gemini_key("Return") == "Enter"
    assert gemini_key("PageDown") == "PageDown"
    assert gemini_key("Shift+A") == "Shift+A"
    with pytest.raises(ActionError, match="unknown key 'Hyper'"):
        gemini_key("Hyper+a")
    with pytest.raises(ActionError, match="key_combination needs 'keys'"):
        gemini_key(None)


@pytest.mark.browser
def test_type_text_at_solves_the_probe_page_in_a_real_env(server, probe_task) -> None:
    from conftest import play

    from dynacu_gym.env import DynaCUEnv
    from dynacu_gym.modes import apply_mode

    # One call, five steps: click the box at (500, 278) of 0-999, clear it, type, Enter.
    server.script = [
        reply(
            text("The answer box is empty."),
            call("type_text_at", x=500, y=278, text="blue whale", press_enter=True),
        )
    ]
    env = apply_mode(DynaCUEnv(probe_task), "aoi_visual")
    try:
        actions, info = play(env, make_agent(server))
    finally:
        env.close()
    assert info["task_result"] == "success"
    assert actions == [
        {"type": "click", "x": 640, "y": 200, "narration": "The answer box is empty."},
        {"type": "key", "key": "Control+a"},
        {"type": "key", "key": "Backspace"},
        {"type": "type", "text": "blue whale"},
        {"type": "key", "key": "Enter"},
    ]
    assert len(server.requests) == 1  # the rest were queued from the one reply
    assert any("[TASK]" in t for t in texts_of(server.contents(0)[-1]))
