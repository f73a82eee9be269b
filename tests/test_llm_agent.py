"""The LLM agent against a real HTTP server that speaks both wire formats."""

from __future__ import annotations

import base64
import json
import socket
import struct
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from dynacu_agents.coords import CoordSpace, ImageFit
from dynacu_agents.llm import (
    SYSTEM_PROMPT,
    LLMAgent,
    LLMError,
    ModelRefused,
    parse_reply,
    system_prompt,
)
from dynacu_gym.actions import ActionError, parse_action, validate_action
from dynacu_gym.episode import AgentFailure

INPUT_TOKENS = 1000  # the fake server's prompt tokens for request n are INPUT_TOKENS + n
OUTPUT_TOKENS = 7


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeModelServer:
    """Answers chat requests with scripted replies; remembers every request."""

    url: str
    port: int
    script: list[str | tuple[int, str]] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    default_reply: str = "wait 1"
    usage: dict[str, Any] | None = None  # the usage to report instead of the default

    def next_answer(self, path: str) -> tuple[int, dict[str, Any]]:
        n = len(self.requests)
        item = self.script.pop(0) if self.script else self.default_reply
        if isinstance(item, tuple):
            status, message = item
            return status, {"type": "error", "error": {"type": "test", "message": message}}
        if path.endswith("/chat/completions"):
            return 200, {
                "id": f"chatcmpl-{n}",
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": item}}],
                "usage": self.usage
                or {"prompt_tokens": INPUT_TOKENS + n, "completion_tokens": OUTPUT_TOKENS},
            }
        if path == "/v1/messages":
            return 200, {
                "id": f"msg_{n}",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": item}],
                "stop_reason": "end_turn",
                "usage": self.usage
                or {"input_tokens": INPUT_TOKENS + n, "output_tokens": OUTPUT_TOKENS},
            }
        return 404, {"error": {"message": f"no route {path}"}}

    def texts(self, index: int, message: int = -1) -> str:
        """All text of one message of one request (user turns are block lists)."""
        body = self.requests[index].body
        content = body["messages"][message]["content"]
        if isinstance(content, str):
            return content
        return "\n".join(b["text"] for b in content if b["type"] == "text")


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    state: FakeModelServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            raw = self.rfile.read(int(self.headers["Content-Length"]))
            status, answer = state.next_answer(self.path)
            state.requests.append(
                Request(
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    json.loads(raw),
                )
            )
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = httpd.server_address[1]
    state = FakeModelServer(url=f"http://127.0.0.1:{port}", port=port)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def no_env_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def openai_agent(server: FakeModelServer, **kwargs: Any) -> LLMAgent:
    return LLMAgent("test-model", base_url=f"{server.url}/v1", api_key="sk-test", **kwargs)


def png_size(data_b64: str) -> tuple[int, int]:
    """(width, height) from a base64 PNG's IHDR."""
    png = base64.b64decode(data_b64)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert png[12:16] == b"IHDR"
    return struct.unpack(">II", png[16:24])


def png_pixels(data_b64: str) -> np.ndarray:
    """Decode an RGB PNG as ``encode_png`` writes it (one IDAT, filter 0 on every row)."""
    png = base64.b64decode(data_b64)
    width, height = struct.unpack(">II", png[16:24])
    idat_len = struct.unpack(">I", png[33:37])[0]
    assert png[37:41] == b"IDAT"
    raw = np.frombuffer(zlib.decompress(png[41 : 41 + idat_len]), dtype=np.uint8)
    rows = raw.reshape(height, 1 + width * 3)
    assert not rows[:, 0].any()
    return rows[:, 1:].reshape(height, width, 3)


def openai_images(body: dict[str, Any], message: int = 1) -> list[str]:
    out = []
    for block in body["messages"][message]["content"]:
        if block["type"] == "image_url":
            url = block["image_url"]["url"]
            assert url.startswith("data:image/png;base64,")
            out.append(url.split(",", 1)[1])
    return out


def fake_observation(keyframe_count: int = 2) -> dict[str, Any]:
    screenshot = np.zeros((720, 1280, 3), dtype=np.uint8)
    screenshot[:, :, 0] = 200
    keyframes = np.zeros((3, 720, 1280, 3), dtype=np.uint8)
    keyframes[0, :, :, 1] = 100
    keyframes[1, :, :, 2] = 50
    return {
        "screenshot": screenshot,
        "instruction": "Read the code.",
        "elapsed": np.float32(5.0),
        "last_action_error": "",
        "record": "Observation Record — Step 2 (t = 5.0s)\n[TASK] Read the code.",
        "keyframes": keyframes,
        "keyframe_times": np.array([3.5, 4.3, 0.0], dtype=np.float32),
        "keyframe_count": np.int64(keyframe_count),
        "narration": "",
    }


# ---- end to end in a real env ---------------------------------------------------------------


@pytest.mark.browser
def test_openai_format_solves_the_probe_in_aoi_visual(server, probe_task) -> None:
    from dynacu_gym.env import DynaCUEnv
    from dynacu_gym.modes import apply_mode

    bad = "I will now type the answer"
    server.script = [
        "I see a page with an empty text box.\nclick 640 200  # narration: an empty answer box "
        "in the middle",
        bad,
        'Sorry. ```\ntype "blue whale"\n```',
        "key Enter",
    ]
    agent = openai_agent(server)
    env = apply_mode(DynaCUEnv(probe_task), "aoi_visual")
    infos: list[dict[str, Any]] = []
    try:
        obs, info = env.reset(seed=0)
        agent.reset(str(obs["instruction"]))
        instruction = str(obs["instruction"])
        actions = []
        for _ in range(8):
            action, agent_info = agent.act(obs)
            actions.append(action)
            infos.append(agent_info)
            obs, _reward, terminated, truncated, info = env.step(action)
            assert "infra_error" not in info
            if terminated or truncated:
                break
    finally:
        env.close()

    assert info["task_result"] == "success"
    assert actions[:3] == [
        {"type": "click", "x": 640, "y": 200, "narration": "an empty answer box in the middle"},
        {"type": "type", "text": "blue whale"},
        {"type": "key", "key": "Enter"},
    ]
    reqs = server.requests
    assert len(reqs) >= 4
    for req in reqs:
        assert req.path == "/v1/chat/completions"
        assert req.headers["authorization"] == "Bearer sk-test"
        assert req.body["model"] == "test-model"
        assert req.body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
        user = req.body["messages"][1]
        assert user["role"] == "user"
        text = "\n".join(b["text"] for b in user["content"] if b["type"] == "text")
        assert "[TASK]" in text and instruction in text
        assert "[VISUAL" in text and "Screenshot now (t = " in text
        images = openai_images(req.body)
        assert images and all(png_size(b64) == (1280, 720) for b64 in images)
    # The narration of reply 1 comes back in the record of the next request, not before.
    assert "an empty answer box in the middle" not in server.texts(0, 1)
    assert "[NARRATION]" in server.texts(1, 1)
    assert "an empty answer box in the middle" in server.texts(1, 1)
    # The retry: the same conversation, the bad reply, then the parse error.
    with pytest.raises(ActionError) as caught:
        parse_action(bad)
    retry = reqs[2].body["messages"]
    assert retry[:2] == reqs[1].body["messages"]
    assert retry[2] == {"role": "assistant", "content": bad}
    assert retry[3]["role"] == "user"
    assert str(caught.value) in server.texts(2, 3)
    assert "exactly one action line" in server.texts(2, 3)
    # Step info and totals add up the server's usage.
    assert [i["calls"] for i in infos[:3]] == [1, 2, 1]
    assert [i["retried"] for i in infos[:3]] == [False, True, False]
    assert infos[1]["parse_error"] == str(caught.value)
    assert infos[1]["reply"] == 'Sorry. ```\ntype "blue whale"\n```'
    assert infos[1]["input_tokens"] == (INPUT_TOKENS + 1) + (INPUT_TOKENS + 2)
    assert infos[1]["output_tokens"] == 2 * OUTPUT_TOKENS
    assert all(i["latency_s"] > 0 for i in infos)
    n = len(reqs)
    assert agent.total_calls == n == sum(i["calls"] for i in infos)
    assert agent.total_input_tokens == sum(INPUT_TOKENS + k for k in range(n))
    assert agent.total_output_tokens == n * OUTPUT_TOKENS


@pytest.mark.browser
def test_anthropic_format_short_episode(server, probe_task, no_env_keys, monkeypatch) -> None:
    from dynacu_gym.env import DynaCUEnv

    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.script = ["click 640 200  # narration: a text box", "done"]
    agent = LLMAgent("claude-test", api="anthropic", max_tokens=300, temperature=0.5)
    env = DynaCUEnv(probe_task)
    try:
        obs, info = env.reset(seed=0)
        agent.reset(str(obs["instruction"]))
        for _ in range(4):
            action, agent_info = agent.act(obs)
            obs, _reward, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
    finally:
        env.close()

    assert terminated and not truncated
    assert action == {"type": "done"}
    assert info["last_action_error"] == ""
    assert len(server.requests) == 2
    for req in server.requests:
        assert req.path == "/v1/messages"
        assert req.headers["x-api-key"] == "ant-test"
        assert req.headers["anthropic-version"] == "2023-06-01"
        assert req.headers["content-type"] == "application/json"
        assert "authorization" not in req.headers
        body = req.body
        assert body["system"] == SYSTEM_PROMPT
        assert (body["model"], body["max_tokens"], body["temperature"]) == ("claude-test", 300, 0.5)
        assert [m["role"] for m in body["messages"]] == ["user"]
        blocks = body["messages"][0]["content"]
        assert blocks[0]["type"] == "text" and "[TASK]" in blocks[0]["text"]
        images = [b for b in blocks if b["type"] == "image"]
        assert len(images) == 1
        source = images[0]["source"]
        assert (source["type"], source["media_type"]) == ("base64", "image/png")
        assert png_size(source["data"]) == (1280, 720)
    assert "Step 1: click 640 200" in server.texts(1, 0)
    assert agent_info["input_tokens"] == INPUT_TOKENS + 1
    assert agent.total_input_tokens == 2 * INPUT_TOKENS + 1
    assert agent.total_output_tokens == 2 * OUTPUT_TOKENS


# ---- images ---------------------------------------------------------------------------------


def test_keyframes_are_sent_as_labelled_images(server) -> None:
    server.script = ["wait 1"]
    agent = openai_agent(server)
    agent.reset("Read the code.")
    agent.act(fake_observation(keyframe_count=2))
    blocks = server.requests[0].body["messages"][1]["content"]
    kinds = [b["type"] for b in blocks]
    assert kinds == ["text", "text", "image_url", "text", "image_url", "text", "image_url"]
    assert blocks[0]["text"].startswith("Observation Record")
    assert blocks[1]["text"] == "Screenshot now (t = 5.0s):"
    assert blocks[3]["text"] == "Keyframe 1 at 3.5s:"
    assert blocks[5]["text"] == "Keyframe 2 at 4.3s:"
    images = openai_images(server.requests[0].body)
    # Each label is followed by its own frame: screenshot red, keyframe 1 green, 2 blue.
    firsts = [tuple(png_pixels(b64)[0, 0]) for b64 in images]
    assert firsts == [(200, 0, 0), (0, 100, 0), (0, 0, 50)]


def test_max_keyframes_keeps_the_last_ones(server) -> None:
    agent = openai_agent(server, max_keyframes=1)
    agent.act(fake_observation(keyframe_count=2))
    texts = server.texts(0, 1)
    assert "Keyframe 2 at 4.3s:" in texts and "Keyframe 1" not in texts
    assert len(openai_images(server.requests[0].body)) == 2


def test_images_off_sends_the_record_only_as_a_string(server) -> None:
    # Many local models' chat templates take a message's content as a string, never a list.
    server.script = ["I cannot tell.", "wait 1"]
    agent = openai_agent(server, images=False)
    agent.act(fake_observation())
    messages = server.requests[1].body["messages"]
    assert [type(m["content"]) for m in messages] == [str, str, str, str]
    assert messages[1]["content"].startswith("Observation Record — Step 2")
    assert "[TASK] Read the code." in messages[1]["content"]
    assert messages[3]["content"].startswith("Your reply has no valid action")
    assert "you are shown no images" in messages[0]["content"]
    assert "screenshot" not in messages[0]["content"].split("\n\n")[1]


def test_anthropic_text_turns_are_strings_too(server) -> None:
    agent = LLMAgent("m", api="anthropic", base_url=server.url, api_key="k", images=False)
    agent.act(fake_observation())
    assert server.requests[0].body["messages"][0]["content"].startswith("Observation Record")


def test_image_width_downscales_every_image(server) -> None:
    agent = openai_agent(server, image_width=640)
    agent.act(fake_observation())
    images = openai_images(server.requests[0].body)
    assert len(images) == 3
    assert all(png_size(b64) == (640, 360) for b64 in images)
    assert tuple(png_pixels(images[0])[100, 100]) == (200, 0, 0)


def test_a_fixed_image_size_pads_and_the_prompt_says_so(server) -> None:
    server.script = ["click 500 500"]  # the middle of the image, in thousandths
    agent = openai_agent(server, image_size="1024x768", coords="norm1000")
    action, _ = agent.act(fake_observation(keyframe_count=0))
    assert action == {"type": "click", "x": 640, "y": 360}
    (image,) = openai_images(server.requests[0].body)
    assert png_size(image) == (1024, 768)
    pixels = png_pixels(image)
    assert tuple(pixels[95, 500]) == (0, 0, 0) and tuple(pixels[96, 500]) == (200, 0, 0)
    assert tuple(pixels[671, 500]) == (200, 0, 0) and tuple(pixels[672, 500]) == (0, 0, 0)
    prompt = server.requests[0].body["messages"][0]["content"]
    assert "1024x768 pixels, the screen scaled to 1024x576 at (0, 96)" in prompt
    assert "from 0 to 1000" in prompt and "your click X Y is in the coordinates above" in prompt


def test_a_point_off_the_space_is_told_to_the_model_and_then_a_mistake(server) -> None:
    server.script = ["click 500 50", "click 1200 300"]  # the padding, then off the space
    agent = openai_agent(server, image_size="1024x768", coords="norm1000")
    action, info = agent.act(fake_observation())
    assert action == {"type": "invalid_reply", "raw": "click 1200 300"}
    retry = server.requests[1].body["messages"][3]["content"]
    assert "the point (500, 50) lies on the image's padding" in retry
    assert info["parse_error"] == (
        "the point (1200, 300) is outside the norm1000 coordinate space; expected "
        "0 <= x <= 1000 and 0 <= y <= 1000"
    )


def test_image_coordinates_are_pixels_of_the_image_sent(server) -> None:
    server.script = ["click 1287 727", "click 0.5 0.25"]
    agent = openai_agent(server, image_size="1288x728:stretch", coords="image")
    assert agent.act(fake_observation())[0] == {"type": "click", "x": 1279, "y": 719}
    fractions = openai_agent(server, coords="norm1")
    assert fractions.act(fake_observation())[0] == {"type": "click", "x": 640, "y": 180}


def test_the_prompt_states_each_space() -> None:
    assert "pixels of the 1280x720 screen: x from 0 (left) to 1279" in SYSTEM_PROMPT
    small = system_prompt(CoordSpace("screen", ImageFit.long_side(640)))
    assert "is 640x360 pixels. Coordinates are pixels of the 1280x720 screen (scale up" in small
    image = system_prompt(CoordSpace("image", ImageFit.parse("1288x728:stretch")))
    assert "pixels of that image: x from 0 (left) to 1287 (right), y from 0 (top) to 727" in image


def test_bad_image_and_coordinate_options_say_what_was_expected() -> None:
    with pytest.raises(ValueError, match="expected coords in screen, image, norm1000, norm1"):
        LLMAgent("m", api_key="k", coords="pixels")
    with pytest.raises(ValueError, match="a size to pad into such as '1024x768'"):
        LLMAgent("m", api_key="k", image_size="big")
    with pytest.raises(ValueError, match="image_width or image_size, not both"):
        LLMAgent("m", api_key="k", image_size="640", image_width=640)
    with pytest.raises(ValueError, match="reasoning_effort in minimal, low, medium, high"):
        LLMAgent("m", api_key="k", reasoning_effort="max")
    with pytest.raises(ValueError, match="max_completion_tokens is a field of the openai api"):
        LLMAgent("m", api="anthropic", api_key="k", max_completion_tokens=True)


# ---- replies --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ("click 10 20", {"type": "click", "x": 10, "y": 20}),
        ("The box is empty.\nI will click it.\n\nclick 10 20\n", {"type": "click", "x": 10,
                                                                 "y": 20}),
        ('Thinking...\n```text\ntype "a b"\n```\nThat types it.', {"type": "type", "text": "a b"}),
        ("Action: `key Enter`", {"type": "key", "key": "Enter"}),
        ("wait 2\n# narration: a timer at 0:42", {"type": "wait", "seconds": 2.0,
                                                  "narration": "a timer at 0:42"}),
        ("done  # narration: finished", {"type": "done", "narration": "finished"}),
    ],
)  # fmt: skip
def test_parse_reply_finds_the_action(reply: str, action: dict[str, Any]) -> None:
    assert parse_reply(reply) == action


@pytest.mark.parametrize("reply", ["", "I will now type the answer", "click here please"])
def test_parse_reply_rejects_prose(reply: str) -> None:
    with pytest.raises(ActionError):
        parse_reply(reply)


def test_parse_reply_reports_the_error_of_the_last_line() -> None:
    with pytest.raises(ActionError, match=r"expected 'click X Y \| click \[N\]', got 'click 5'"):
        parse_reply("Some prose first.\nclick 5")


def test_two_bad_replies_give_an_invalid_action_the_env_rejects(server) -> None:
    server.script = ["I am not sure what to do.", "Still thinking about it."]
    agent = openai_agent(server)
    agent.reset("x")
    action, info = agent.act(fake_observation())
    assert action == {"type": "invalid_reply", "raw": "Still thinking about it."}
    assert info["retried"] is True and info["calls"] == 2
    assert info["reply"] == "Still thinking about it."
    assert "unknown action 'still'" in info["parse_error"]
    assert len(server.requests) == 2
    with pytest.raises(ActionError, match="invalid_reply"):
        validate_action(action)


# ---- keys, URLs and HTTP errors ---------------------------------------------------------------


def test_a_5xx_is_retried(server) -> None:
    server.script = [(500, "overloaded"), "scroll down 2"]
    agent = openai_agent(server)
    action, info = agent.act(fake_observation())
    assert action == {"type": "scroll", "direction": "down", "amount": 2}
    assert info["calls"] == 2 and info["retried"] is False
    assert len(server.requests) == 2
    assert server.requests[0].body == server.requests[1].body


def test_retries_run_out(server) -> None:
    server.script = [(429, "slow down"), (503, "busy"), "done"]
    agent = openai_agent(server, http_retries=1)
    with pytest.raises(LLMError, match="HTTP 503: busy") as caught:
        agent.act(fake_observation())
    assert caught.value.status == 503
    assert len(server.requests) == 2
    assert agent.total_calls == 2  # the failed step's calls count in the episode's totals


def test_a_401_is_a_refusal_with_status_and_message(server) -> None:
    server.script = [(401, "invalid x-api-key " + "z" * 1000)]
    agent = LLMAgent("m", api="anthropic", base_url=server.url, api_key="bad")
    refused = "refused the request: .* HTTP 401: invalid x-api-key z"
    with pytest.raises(ModelRefused, match=refused) as caught:
        agent.act(fake_observation())
    assert caught.value.status == 401
    assert len(str(caught.value)) < 800
    assert len(server.requests) == 1
    # The agent's failure, not an infrastructure fault: the episode ends, nothing retries it.
    assert isinstance(caught.value, AgentFailure) and isinstance(caught.value, LLMError)


def test_a_refusal_after_a_bad_reply_keeps_the_step_cost(server) -> None:
    server.script = ["no action here", (400, "the request exceeds the context")]
    agent = openai_agent(server)
    with pytest.raises(ModelRefused, match="HTTP 400: the request exceeds the context") as caught:
        agent.act(fake_observation())
    assert caught.value.info["calls"] == 2
    assert caught.value.info["input_tokens"] == INPUT_TOKENS
    assert agent.total_calls == 2 and len(server.requests) == 2


def test_reasoning_models_get_their_fields_and_report_reasoning_tokens(server) -> None:
    agent = openai_agent(server, max_completion_tokens=True, reasoning_effort="low")
    server.usage = {
        "prompt_tokens": 900,
        "completion_tokens": 300,
        "completion_tokens_details": {"reasoning_tokens": 256},
    }
    _, info = agent.act(fake_observation())
    body = server.requests[0].body
    assert body["max_completion_tokens"] == 512 and "max_tokens" not in body
    assert body["reasoning_effort"] == "low"
    assert (info["input_tokens"], info["output_tokens"], info["reasoning_tokens"]) == (
        900,
        300,
        256,
    )


def test_anthropic_thinking_and_cache_tokens(server) -> None:
    agent = LLMAgent("m", api="anthropic", base_url=server.url, api_key="k", reasoning_effort="low")
    server.usage = {
        "input_tokens": 10,
        "cache_read_input_tokens": 1000,
        "cache_creation_input_tokens": 5,
        "output_tokens": 40,
    }
    _, info = agent.act(fake_observation())
    body = server.requests[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] == 512 + 2048 and "temperature" not in body
    assert (info["input_tokens"], info["output_tokens"]) == (1015, 40)
    assert "reasoning_tokens" not in info


def test_an_unreachable_server_names_the_url() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    agent = LLMAgent("m", base_url=url, api_key="k", timeout_s=5)
    with pytest.raises(LLMError, match=f"{url}/chat/completions") as caught:
        agent.act(fake_observation())
    assert caught.value.status is None


def test_anthropic_needs_a_key(no_env_keys) -> None:
    with pytest.raises(ValueError, match="ANTHROPIC_API_KEY"):
        LLMAgent("m", api="anthropic")


def test_openai_key_needed_only_for_the_public_api(server, no_env_keys, monkeypatch) -> None:
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        LLMAgent("m")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    agent = LLMAgent("m", images=False)  # a local server without a key
    assert agent.base_url == f"{server.url}/v1"
    agent.act(fake_observation())
    assert "authorization" not in server.requests[0].headers


def test_flags_win_over_the_environment(server, no_env_keys, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    agent = LLMAgent("m", base_url=f"{server.url}/v1", api_key="from-flag", images=False)
    agent.act(fake_observation())
    assert server.requests[0].headers["authorization"] == "Bearer from-flag"
    env_agent = LLMAgent("m")
    assert (env_agent.api_key, env_agent.base_url) == ("from-env", "http://127.0.0.1:9/v1")


def test_unknown_api_lists_the_choices() -> None:
    with pytest.raises(ValueError, match="openai.*anthropic"):
        LLMAgent("m", api="gemini", api_key="k")


def test_reset_clears_the_totals(server) -> None:
    agent = openai_agent(server)
    agent.act(fake_observation())
    assert (agent.total_calls, agent.total_input_tokens) == (1, INPUT_TOKENS)
    agent.reset("again")
    assert (agent.total_calls, agent.total_input_tokens, agent.total_output_tokens) == (0, 0, 0)
    assert (agent.name, agent.privileged, agent.model) == ("llm", False, "test-model")


def test_history_sends_the_last_steps_records_and_replies(server) -> None:
    server.script = ["wait 1", "wait 2", "no action", "wait 3", "done"]
    agent = openai_agent(server, history=2)
    agent.reset("x")
    for step in range(4):
        observation = fake_observation(keyframe_count=0)
        observation["record"] = f"Record of step {step}"
        agent.act(observation)
    # The 4th step's request: steps 1 and 2 (their records alone, as strings) and their final
    # replies (step 2 needed a retry: its second reply), then step 3 with its screenshot.
    messages = server.requests[4].body["messages"]
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert [messages[k]["content"] for k in (1, 2, 3, 4)] == [
        "Record of step 1",
        "wait 2",
        "Record of step 2",
        "wait 3",
    ]
    assert messages[5]["content"][0]["text"] == "Record of step 3"
    assert len(openai_images(server.requests[4].body, message=5)) == 1
    agent.reset("again")
    agent.act(fake_observation())
    assert len(server.requests[5].body["messages"]) == 2  # a new episode starts with none


def test_history_images_keeps_them_and_a_bad_history_is_refused(server) -> None:
    agent = openai_agent(server, history=1, history_images=True)
    agent.act(fake_observation(keyframe_count=0))
    agent.act(fake_observation(keyframe_count=0))
    assert len(openai_images(server.requests[1].body, message=1)) == 1
    assert len(openai_images(server.requests[1].body, message=3)) == 1
    with pytest.raises(ValueError, match="expected history as a number of steps >= 0, got -1"):
        openai_agent(server, history=-1)
