"""An agent that asks a chat model for each action, over plain HTTP.

Two wire formats are spoken, with the standard library only:

- ``api="openai"``: ``POST {base_url}/chat/completions``, the format of OpenAI and of the
  OpenAI-compatible servers (vLLM, Ollama, llama.cpp, ...): :class:`ChatCompletions`;
- ``api="anthropic"``: ``POST {base_url}/v1/messages``, the Anthropic Messages API:
  :class:`Messages`.

Each wire class makes a request's headers and body and reads the reply's text; the agent
(:class:`LLMAgent`) does the rest the same for both: the record and images, the reply format,
the retry, the history, the HTTP and its errors.

Every step is one request: the observation record (which already carries the task, the prior
actions, the transcripts, the keyframe list and the agent's narration, the memory the AOI
interface relies on) plus the current screenshot and the step's keyframes as PNG images; by
default nothing else (stateless), or with ``history=K`` the last K steps' records and replies
before it (their images too with ``history_images``). The model answers with one action
line in the text form :func:`dynacu_gym.actions.parse_action` reads; a reply without one is
sent back once with the parse error, and a second miss becomes an invalid action the env
reports as an agent mistake.

A turn of text alone is sent as a string (many chat templates take nothing else); images go
as content parts only when sent. Screenshots are fitted to the image size the model prefers
and its coordinates read in the space it was trained on (:mod:`dynacu_agents.coords`): the
prompt states both, and every point is mapped back to screen pixels.

A server that refuses a request (HTTP 4xx but 429) raises :class:`ModelRefused`: the episode
ends as the agent's failure, with the server's message, and is not retried. 429 and 5xx are
retried ``http_retries`` times; a server that cannot be reached raises :class:`LLMError`, an
infrastructure fault the runner retries.
"""

from __future__ import annotations

import base64
import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dynacu_agents.coords import COORDS, CoordSpace, ImageFit
from dynacu_agents.formats import reply_format as find_format
from dynacu_gym.actions import (
    MAX_SCROLL,
    MAX_WAIT_S,
    SCREEN_HEIGHT,
    SCREEN_WIDTH,
    SCROLL_NOTCH_PX,
    ActionError,
    parse_action,
)
from dynacu_gym.errors import AgentFailure, DynaCUError
from dynacu_gym.imaging import encode_png, resize

APIS = ("openai", "anthropic")
DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
BASE_URL_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
ANTHROPIC_VERSION = "2023-06-01"
RETRY_STATUSES = frozenset({429})  # and every 5xx
REASONING_EFFORTS = ("minimal", "low", "medium", "high")
# Anthropic's extended thinking takes a token budget (at least 1024) rather than an effort.
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24576}
BACKOFF_S = 0.5  # first pause before a retried request; doubles on each further retry
MAX_ERROR_CHARS = 500  # characters of a server's error message kept in an LLMError
INVALID_REPLY = "invalid_reply"  # action type of a reply with no action (the env rejects it)

GRAMMAR = (
    'click X Y, click [N], type "text", key Combo, scroll up|down N, speak "text", '
    "wait SECONDS, done"
)


def system_prompt(coords: CoordSpace | None = None, images: bool = True) -> str:
    """The instructions of every request: the screen, the record, the actions and the reply.

    ``coords`` states what the model's numbers mean and the size of the image it sees;
    ``images=False`` tells a text-only model that it gets the record alone.
    """
    coords = coords or CoordSpace()
    if images:
        seeing = (
            "Each turn you receive the observation record (the task, your prior actions, any "
            "audio transcript, the list of keyframes and your narration notes), the current "
            "screenshot, and the keyframes: frames of what the screen showed since your last "
            "action, each labelled with its time in seconds since the task started. "
            + coords.describe()
        )
    else:
        seeing = (
            "Each turn you receive the observation record (the task, your prior actions, any "
            "audio transcript, the list of keyframes, the page's elements where it has them, "
            "and your narration notes); you are shown no images. Coordinates are pixels of the "
            f"{SCREEN_WIDTH}x{SCREEN_HEIGHT} screen: x from 0 (left) to {SCREEN_WIDTH - 1} "
            f"(right), y from 0 (top) to {SCREEN_HEIGHT - 1} (bottom)."
        )
    where = (
        ""
        if not images or coords.name == "screen"
        else f" Positions in the record (prior actions, page elements) are {SCREEN_WIDTH}x"
        f"{SCREEN_HEIGHT} screen pixels; your click X Y is in the coordinates above."
    )
    return f"""\
You operate a web page in a Chromium browser on a {SCREEN_WIDTH}x{SCREEN_HEIGHT} screen, as a \
person at a computer would. The page runs in real time: sound plays, content changes and time \
passes while you think.

{seeing}{where}

The actions, in the exact form to write them:
{GRAMMAR}

- click X Y: click at the point (X, Y).
- click [N]: click the centre of element [N] of the [PAGE ELEMENTS] list, where the record \
has one (the list is the page's at the screenshot; its numbers change every step).
- type "text": type the text where the focus is (click a field first). Inside the quotes \
write \\" for a quote and \\\\ for a backslash.
- key Combo: press a key or combination, e.g. Enter, Tab, Escape, Backspace, Control+a.
- scroll up|down N: turn the mouse wheel N notches (1 to {MAX_SCROLL}, {SCROLL_NOTCH_PX} px \
each).
- speak "text": say the words aloud. This works only when the task says to answer aloud.
- wait SECONDS: let up to {MAX_WAIT_S:g} seconds pass, to hear or see more.
- done: end the task (the page's verdict then stands).

Reply with exactly ONE action line. If you write anything before it, the action line must come \
last. After the action, on the same line, append "# narration: ..." describing what you newly \
saw in the screenshot and keyframes that may matter later (numbers, names, messages that may \
vanish). The environment keeps these notes across steps and shows them back in the [NARRATION] \
section after the frames are gone; each frame is shown to you only once.

Example:
click 640 400  # narration: a toast said the order code is E-4012
"""


SYSTEM_PROMPT = system_prompt()  # screen coordinates, full-size images

RETRY_PROMPT = "Your reply has no valid action: {error}\nReply with {hint}."

_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.DOTALL)
_LABEL = re.compile(r"^(?:[-*>]\s+|(?:next\s+)?action\s*:\s*)", re.IGNORECASE)


class LLMError(DynaCUError, RuntimeError):
    """The model server could not be reached, or answered with no reply (an infrastructure fault).

    Attributes:
        status: the HTTP status code, or None when no answer came.
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ModelRefused(LLMError, AgentFailure):
    """The model server refused the request (HTTP 4xx but 429): the agent's failure.

    A bad request, a missing model, an image too large, a context overflow or a key refused
    would be refused again: the episode ends, keeping the server's message.
    """

    def __init__(self, message: str, status: int | None = None, info: Any = None) -> None:
        LLMError.__init__(self, message, status)
        self.info = dict(info or {})


def _clean_line(line: str) -> str:
    """A reply line without the decoration models put around an action."""
    line = line.strip()
    if line.startswith("`") and line.endswith("`") and len(line) > 1:
        line = line.strip("`").strip()
    line = _LABEL.sub("", line).strip()
    if line.startswith("`") and line.endswith("`") and len(line) > 1:
        line = line.strip("`").strip()
    return line


def _candidates(text: str) -> list[tuple[str, str]]:
    """(line, the line after it) pairs to try, the most likely action first."""
    blocks = _FENCE.findall(text)
    groups = [block.splitlines() for block in reversed(blocks)] + [text.splitlines()]
    out: list[tuple[str, str]] = []
    for lines in groups:
        cleaned = [_clean_line(line) for line in lines]
        cleaned = [line for line in cleaned if line]
        for i in range(len(cleaned) - 1, -1, -1):
            after = cleaned[i + 1] if i + 1 < len(cleaned) else ""
            out.append((cleaned[i], after))
    return out


_NUMBER = r"([-+]?[\d.]+(?:e[-+]?\d+)?)"
_CLICK_AT = re.compile(rf"^click\s+{_NUMBER}\s*,?\s+{_NUMBER}(?=\s|$)", re.I)


def to_screen_line(line: str, coords: CoordSpace) -> str:
    """``line`` with a ``click X Y`` in ``coords`` rewritten to screen pixels.

    Raises:
        ActionError: the point is outside the space (see :meth:`CoordSpace.to_screen`).
    """
    match = _CLICK_AT.match(line)
    if match is None or coords.name == "screen":
        return line  # screen pixels: parse_action checks them
    try:
        x, y = float(match.group(1)), float(match.group(2))
    except ValueError:
        return line  # not numbers after all: parse_action says what was expected
    sx, sy = coords.to_screen(x, y)
    return f"click {sx} {sy}{line[match.end() :]}"


def parse_reply(text: str, coords: CoordSpace | None = None) -> dict[str, Any]:
    """The action in a model's reply, as :func:`parse_action` gives it, in screen pixels.

    The action is the last line of the last fenced code block that parses, else the last
    non-empty line of the reply that parses; prose around it, a leading ``Action:`` and
    backticks are tolerated. A narration written on the line after the action (starting with
    ``#``) is joined to it. A click's point is read in ``coords`` (default: screen pixels)
    and mapped to the screen.

    Raises:
        ActionError: no line is an action; the message is the parse error of the most likely
            line (a point outside the coordinate space among them).
    """
    coords = coords or CoordSpace()
    first_error: ActionError | None = None
    for line, after in _candidates(text):
        try:
            line = to_screen_line(line, coords)
            action = parse_action(line)
        except ActionError as e:
            first_error = first_error or e
            continue
        if "narration" not in action and after.startswith("#"):
            try:
                action = parse_action(f"{line}  {after}")
            except ActionError:
                pass
        return action
    if first_error is not None:
        raise first_error
    raise ActionError(f"the reply is empty; expected one action line such as {GRAMMAR!r}")


def downscale(image: np.ndarray, width: int) -> np.ndarray:
    """``image`` (H, W, 3) uint8 shrunk to ``width`` columns, keeping the aspect, by area averaging.

    An image already at most ``width`` wide comes back as it is. (The agents fit images with
    :class:`~dynacu_agents.coords.ImageFit`; this stays for code that called it.)
    """
    height_in, width_in = image.shape[:2]
    if width >= width_in:
        return image
    return resize(image, width, max(1, round(height_in * width / width_in)))


@dataclass(frozen=True)
class MessagePart:
    """One piece of a message: text, or a PNG image when ``png`` (base64) is set."""

    text: str = ""
    png: str = ""


FULL_SIZE = ImageFit()  # the screen as it is


def observation_parts(
    observation: dict[str, Any], fit: ImageFit | None = FULL_SIZE, max_keyframes: int | None = None
) -> list[MessagePart]:
    """One observation as message parts: the record, then the labelled screenshot and keyframes.

    Images are fitted with ``fit`` and PNG-encoded; ``fit=None`` sends the record alone. Only
    the last ``max_keyframes`` keyframes go (None: all).
    """
    parts = [MessagePart(text=str(observation.get("record") or observation.get("instruction", "")))]
    if fit is None:
        return parts
    elapsed = float(observation.get("elapsed", 0.0))
    parts.append(MessagePart(text=f"Screenshot now (t = {elapsed:.1f}s):"))
    parts.append(MessagePart(png=png_of(observation["screenshot"], fit)))
    count = int(observation.get("keyframe_count", 0))
    if count <= 0 or "keyframes" not in observation:
        return parts
    first = 0 if max_keyframes is None else max(0, count - max_keyframes)
    times = observation.get("keyframe_times")
    for i in range(first, count):
        when = f" at {float(times[i]):.1f}s" if times is not None else ""
        parts.append(MessagePart(text=f"Keyframe {i + 1}{when}:"))
        parts.append(MessagePart(png=png_of(observation["keyframes"][i], fit)))
    return parts


def png_of(image: Any, fit: ImageFit = FULL_SIZE) -> str:
    """``image`` (a screen-sized frame) fitted with ``fit``, as base64 PNG."""
    frame = fit.apply(np.asarray(image, dtype=np.uint8))
    return base64.b64encode(encode_png(frame, level=3)).decode("ascii")


@dataclass
class StepCost:
    """What the HTTP calls of one step cost."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    latency_s: float = 0.0

    def info(self) -> dict[str, Any]:
        """The agent info fields of these calls (reasoning tokens only where counted)."""
        out: dict[str, Any] = {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }
        if self.reasoning_tokens:
            out["reasoning_tokens"] = self.reasoning_tokens
        out["latency_s"] = round(self.latency_s, 4)
        return out


def _joined(parts: list[MessagePart]) -> str | None:
    """A turn of text alone as one string (many local models' chat templates take no other)."""
    return None if any(p.png for p in parts) else "\n\n".join(p.text for p in parts)


class ChatCompletions:
    """OpenAI's chat completions, as OpenAI and every OpenAI-compatible server speak it."""

    path = "/chat/completions"

    def headers(self, api_key: str | None) -> dict[str, str]:
        """The request's headers: a bearer key where there is one (a local server needs none)."""
        headers = {"content-type": "application/json"}
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        return headers

    def body(self, agent: LLMAgent, turns: list[tuple[str, list[MessagePart]]]) -> dict[str, Any]:
        """The request: the system prompt, then each turn (text alone as a string)."""
        messages: list[dict[str, Any]] = [{"role": "system", "content": agent.system_prompt}]
        for role, parts in turns:
            content: Any = _joined(parts)
            if content is None:
                content = [
                    {"type": "image_url", "image_url": {"url": _data_url(p.png)}}
                    if p.png
                    else {"type": "text", "text": p.text}
                    for p in parts
                ]
            messages.append({"role": role, "content": content})
        body: dict[str, Any] = {"model": agent.model, "messages": messages}
        cap = "max_completion_tokens" if agent.max_completion_tokens else "max_tokens"
        body[cap] = agent.max_tokens
        body["temperature"] = agent.temperature
        if agent.reasoning_effort is not None:
            body["reasoning_effort"] = agent.reasoning_effort
        return body

    def reply_text(self, answer: dict[str, Any]) -> str:
        """The reply's text."""
        return _text_of(answer["choices"][0]["message"].get("content"))


class Messages:
    """Anthropic's Messages API."""

    path = "/v1/messages"

    def headers(self, api_key: str | None) -> dict[str, str]:
        """The request's headers: the key and the API version."""
        return {
            "content-type": "application/json",
            "x-api-key": api_key or "",
            "anthropic-version": ANTHROPIC_VERSION,
        }

    def body(self, agent: LLMAgent, turns: list[tuple[str, list[MessagePart]]]) -> dict[str, Any]:
        """The request: the system prompt apart, each turn (text alone as a string)."""
        messages: list[dict[str, Any]] = []
        for role, parts in turns:
            content: Any = _joined(parts)
            if content is None:
                content = [
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": p.png},
                    }
                    if p.png
                    else {"type": "text", "text": p.text}
                    for p in parts
                ]
            messages.append({"role": role, "content": content})
        body: dict[str, Any] = {
            "model": agent.model,
            "system": agent.system_prompt,
            "max_tokens": agent.max_tokens,
            "messages": messages,
        }
        if agent.reasoning_effort is not None:
            # Extended thinking: a budget by effort; Anthropic takes no temperature with it.
            budget = THINKING_BUDGETS[agent.reasoning_effort]
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            body["max_tokens"] = agent.max_tokens + budget
        else:
            body["temperature"] = agent.temperature
        return body

    def reply_text(self, answer: dict[str, Any]) -> str:
        """The reply's text."""
        return _text_of(answer["content"])


def _check_options(
    *,
    model: str,
    api: str,
    images: bool,
    max_keyframes: int | None,
    image_width: int | None,
    http_retries: int,
    image_size: str | ImageFit | None,
    coords: str,
    max_completion_tokens: bool,
    reasoning_effort: str | None,
    history: int,
) -> None:
    """Refuse an :class:`LLMAgent` option out of range (``ValueError``), in the order given."""
    if isinstance(history, bool) or not isinstance(history, int) or history < 0:
        raise ValueError(f"expected history as a number of steps >= 0, got {history!r}")
    if api not in APIS:
        raise ValueError(f"expected api in {APIS}, got {api!r}")
    if coords not in COORDS:
        raise ValueError(f"expected coords in {', '.join(COORDS)}, got {coords!r}")
    if not images and coords != "screen":
        raise ValueError(
            f"coords={coords!r} are numbers over the image a model is shown, and with "
            "images off it is shown none: a text-only model clicks screen pixels (the page "
            "elements' centres), so leave coords at 'screen'"
        )
    if reasoning_effort is not None and reasoning_effort not in REASONING_EFFORTS:
        raise ValueError(
            f"expected reasoning_effort in {', '.join(REASONING_EFFORTS)} or None, "
            f"got {reasoning_effort!r}"
        )
    if max_completion_tokens and api != "openai":
        raise ValueError("max_completion_tokens is a field of the openai api only")
    if image_width is not None and image_size is not None:
        raise ValueError("give image_width or image_size, not both")
    if not isinstance(model, str) or not model:
        raise ValueError(f"expected a model name, got {model!r}")
    if max_keyframes is not None and max_keyframes < 0:
        raise ValueError(f"expected max_keyframes >= 0 or None, got {max_keyframes!r}")
    if image_width is not None and not 1 <= image_width <= SCREEN_WIDTH:
        raise ValueError(f"expected image_width in 1..{SCREEN_WIDTH} or None, got {image_width!r}")
    if http_retries < 0:
        raise ValueError(f"expected http_retries >= 0, got {http_retries!r}")


def post_json(
    url: str,
    body: bytes,
    headers: Callable[[], dict[str, str]],
    timeout_s: float,
    http_retries: int,
    cost: StepCost,
) -> dict[str, Any]:
    """POST ``body`` to ``url``, retrying 429 and 5xx answers; the answer's JSON object.

    Each attempt's call and wall time are added to ``cost``; ``headers`` is asked anew for each.

    Raises:
        ModelRefused: a 4xx other than 429 (the request would be refused again).
        LLMError: no answer, retries spent, or an answer that is not a JSON object.
    """
    for attempt in range(http_retries + 1):
        sent = headers()
        request = urllib.request.Request(url, data=body, headers=sent, method="POST")
        t = time.monotonic()
        cost.calls += 1
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as e:
            with e:
                message = _error_message(e.read())
            cost.latency_s += time.monotonic() - t
            retry = e.code in RETRY_STATUSES or 500 <= e.code < 600
            if retry and attempt < http_retries:
                time.sleep(BACKOFF_S * 2**attempt)
                continue
            text = f"{url} answered HTTP {e.code}: {message}"
            if 400 <= e.code < 500 and e.code not in RETRY_STATUSES:
                refused = f"the model server refused the request: {text}"
                raise ModelRefused(refused, e.code) from e
            raise LLMError(text, status=e.code) from e
        except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
            cost.latency_s += time.monotonic() - t
            reason = getattr(e, "reason", e)
            raise LLMError(f"cannot reach the model server at {url}: {reason}") from e
        cost.latency_s += time.monotonic() - t
        try:
            answer = json.loads(raw)
        except ValueError as e:
            text = raw[:MAX_ERROR_CHARS].decode("utf-8", "replace")
            raise LLMError(f"{url} answered with something that is not JSON: {text}") from e
        if not isinstance(answer, dict):
            raise LLMError(f"{url} answered with JSON that is not an object: {answer!r:.200}")
        return answer
    raise AssertionError("unreachable: the last attempt returns or raises")


# Long (~235 lines, 40 its documented options): the options, the step (ask, ask once more),
# the history and the message; the checks and the HTTP transport are functions above.
class LLMAgent:
    """Asks a chat model for every action (see the module docstring).

    Args:
        model: the model name the server knows, e.g. ``gpt-4o`` or a local model's name.
        api: the wire format, ``"openai"`` (also any OpenAI-compatible server) or
            ``"anthropic"``.
        base_url: the server; defaults to ``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``, then
            to the public API.
        api_key: the key; defaults to ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``. An
            OpenAI-compatible server other than the public API may need none.
        max_tokens: the longest reply, in tokens.
        temperature: the sampling temperature.
        timeout_s: seconds one HTTP request may take.
        images: send the screenshot and keyframes (False: the record text only).
        max_keyframes: send only the last this many keyframes of a step (None: all).
        image_width: shrink images to this width in pixels, keeping the aspect (None: full
            size); the same as ``image_size=str(image_width)``.
        image_size: the image the model sees (:meth:`ImageFit.parse`): ``"full"``, a long
            side (``"1024"``) or a fixed size the screen is scaled into and padded
            (``"1024x768"``); ``image`` coordinates are its pixels.
        coords: what the model's numbers mean (:data:`dynacu_agents.coords.COORDS`):
            ``screen`` pixels, ``image`` pixels, ``norm1000`` (0-1000 of the image: UI-TARS,
            Gemini) or ``norm1``; None: the reply format's (screen pixels without images).
        max_completion_tokens: send the reply cap as ``max_completion_tokens`` (what OpenAI's
            reasoning models take) instead of ``max_tokens``; openai api only.
        reasoning_effort: ``minimal``, ``low``, ``medium`` or ``high`` for a reasoning model
            (openai: ``reasoning_effort``); None sends none.
        http_retries: retries of a request answered 429 or 5xx.
        history: send the last this many steps before the current one, each as its user turn
            (the record) and the model's reply; 0 (default) sends the current step alone.
        history_images: send those steps' images too (default: their records only).
        reply_format: how the model writes its action (:mod:`dynacu_agents.formats`): ``text``
            (the benchmark's action lines), ``uitars`` or ``qwen``; each brings its prompt and
            its recommended coordinates and image size where those are not given.

    Raises:
        ValueError: an unknown ``api``, a missing key, or an out-of-range argument.
    """

    name = "llm"
    privileged = False

    def __init__(
        self,
        model: str,
        api: str = "openai",
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        timeout_s: float = 120.0,
        images: bool = True,
        max_keyframes: int | None = None,
        image_width: int | None = None,
        http_retries: int = 2,
        image_size: str | ImageFit | None = None,
        coords: str | None = None,
        max_completion_tokens: bool = False,
        reasoning_effort: str | None = None,
        history: int = 0,
        history_images: bool = False,
        reply_format: str = "text",
    ) -> None:
        chosen = find_format(reply_format)
        coords = coords or (chosen.default_coords if images else "screen")
        if image_size is None and image_width is None:
            image_size = chosen.default_image_size
        _check_options(
            model=model,
            api=api,
            images=images,
            max_keyframes=max_keyframes,
            image_width=image_width,
            http_retries=http_retries,
            image_size=image_size,
            coords=coords,
            max_completion_tokens=max_completion_tokens,
            reasoning_effort=reasoning_effort,
            history=history,
        )
        default_url = DEFAULT_BASE_URLS[api]
        url = base_url or os.environ.get(BASE_URL_ENV[api]) or default_url
        key = api_key or os.environ.get(KEY_ENV[api]) or None
        if key is None and (api == "anthropic" or url.rstrip("/") == default_url):
            hint = " (a local server given by base_url may need none)" if api == "openai" else ""
            raise ValueError(f"the {api} API needs a key: set {KEY_ENV[api]} or pass api_key{hint}")
        self.model = model
        self.api = api
        self.wire: ChatCompletions | Messages = ChatCompletions() if api == "openai" else Messages()
        self.base_url = url.rstrip("/")
        self.api_key = key
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.timeout_s = timeout_s
        self.images = images
        self.max_keyframes = max_keyframes
        self.image_width = image_width
        if isinstance(image_size, ImageFit):
            fit = image_size
        elif image_size is not None:
            fit = ImageFit.parse(image_size)
        else:
            fit = ImageFit.long_side(image_width) if image_width is not None else ImageFit()
        self.coords = CoordSpace(coords, fit)
        self.max_completion_tokens = max_completion_tokens
        self.reasoning_effort = reasoning_effort
        self.format = chosen
        self.system_prompt = chosen.prompt(self.coords, images, system_prompt(self.coords, images))
        self.http_retries = http_retries
        self.history = history
        self.history_images = history_images
        self._past: list[tuple[list[MessagePart], str]] = []  # (user turn, reply) per step
        self.instruction = ""
        self.total_input_tokens = 0
        self.total_output_tokens = 0
        self.total_calls = 0

    @property
    def url(self) -> str:
        """Where requests go."""
        return self.base_url + self.wire.path

    def reset(self, instruction: str) -> None:
        """Start an episode: the history and the running totals go back to zero."""
        self.instruction = instruction
        self._past = []
        self.total_input_tokens = 0
        self.total_output_tokens = 0
        self.total_calls = 0

    def act(self, observation: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Ask the model for the next action.

        Returns:
            The action dict (as :func:`parse_action` gives it, or ``{"type": "invalid_reply",
            "raw": reply}`` when two replies held no action) and the step's info: ``calls``
            (HTTP requests), ``input_tokens``, ``output_tokens``, ``latency_s`` (their summed
            wall time), ``retried`` (the first reply held no action), ``reply`` (the final
            reply text) and ``parse_error`` (why the last reply that failed to parse failed,
            or "").

        Raises:
            LLMError: the server could not be reached, or answered with no reply.
            ModelRefused: the server refused the request (the agent's failure).
        """
        now = self.observation_parts(observation)
        turns: list[tuple[str, list[MessagePart]]] = []
        for parts, reply in self._past[-self.history :] if self.history else []:
            turns.append(("user", parts if self.history_images else parts[:1]))
            turns.append(("assistant", [MessagePart(text=reply or "(empty reply)")]))
        turns.append(("user", now))
        cost = StepCost()
        try:
            action, info = self._act(turns, cost)
        except ModelRefused as e:
            self._count(cost)
            e.info = cost.info()
            raise
        except BaseException:
            self._count(cost)  # a failed step's calls count too, as the other agents'
            raise
        if self.history:
            self._past = [*self._past, (now, info["reply"])][-self.history :]
        return action, info

    def _count(self, cost: StepCost) -> None:
        self.total_calls += cost.calls
        self.total_input_tokens += cost.input_tokens
        self.total_output_tokens += cost.output_tokens

    def _act(
        self, turns: list[tuple[str, list[MessagePart]]], cost: StepCost
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        reply = self._complete(turns, cost)
        retried = False
        parse_error = ""
        action: dict[str, Any]
        try:
            action = self.format.parse(reply, self.coords)
        except ActionError as e:
            retried = True
            parse_error = str(e)
            turns.append(
                ("assistant", [MessagePart(text=reply if reply.strip() else "(empty reply)")])
            )
            retry = RETRY_PROMPT.format(error=parse_error, hint=self.format.retry_hint)
            turns.append(("user", [MessagePart(text=retry)]))
            reply = self._complete(turns, cost)
            try:
                action = self.format.parse(reply, self.coords)
            except ActionError as e2:
                parse_error = str(e2)
                action = {"type": INVALID_REPLY, "raw": reply}
        self._count(cost)
        info = {
            **cost.info(),
            "retried": retried,
            "reply": reply,
            "parse_error": parse_error,
        }
        return action, info

    # ---- the message --------------------------------------------------------------------------

    def observation_parts(self, observation: dict[str, Any]) -> list[MessagePart]:
        """The user message for one observation: the record, then labelled images."""
        return observation_parts(
            observation, self.coords.fit if self.images else None, self.max_keyframes
        )

    # ---- the wire -----------------------------------------------------------------------------

    def request_body(self, turns: list[tuple[str, list[MessagePart]]]) -> dict[str, Any]:
        """The JSON body of a request for these turns, in this agent's wire format."""
        return self.wire.body(self, turns)

    def _complete(self, turns: list[tuple[str, list[MessagePart]]], cost: StepCost) -> str:
        """Send the turns and return the reply text, adding the call's cost to ``cost``."""
        answer = self._post(json.dumps(self.request_body(turns)).encode("utf-8"), cost)
        try:
            add_usage(cost, answer.get("usage") or {})
            return self.wire.reply_text(answer)
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as e:
            raise LLMError(
                f"{self.url} answered without a reply in the {self.api} format: "
                f"{json.dumps(answer)[:MAX_ERROR_CHARS]}"
            ) from e

    def _post(self, body: bytes, cost: StepCost) -> dict[str, Any]:
        """POST ``body``; retry 429 and 5xx answers; the answer's JSON."""
        return post_json(
            self.url, body, lambda: self.wire.headers(self.api_key), self.timeout_s,
            self.http_retries, cost,
        )  # fmt: skip


def _text_of(content: Any) -> str:
    """Reply text from a message content: a string, or a list of blocks (text ones joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


def _data_url(png: str) -> str:
    return f"data:image/png;base64,{png}"


def add_usage(cost: StepCost, usage: dict[str, Any]) -> None:
    """Add a reply's token counts to ``cost``, in whichever format the server reports them.

    OpenAI's ``prompt_tokens`` / ``completion_tokens`` (with ``completion_tokens_details.
    reasoning_tokens``), Anthropic's ``input_tokens`` (plus cache reads and writes) /
    ``output_tokens``; a server that reports none adds nothing.
    """

    def number(value: Any) -> int:
        try:
            return max(0, int(value or 0))
        except (TypeError, ValueError):
            return 0

    cost.input_tokens += number(usage.get("prompt_tokens")) + number(usage.get("input_tokens"))
    cost.input_tokens += number(usage.get("cache_creation_input_tokens"))
    cost.input_tokens += number(usage.get("cache_read_input_tokens"))
    cost.output_tokens += number(usage.get("completion_tokens"))
    cost.output_tokens += number(usage.get("output_tokens"))
    details = usage.get("completion_tokens_details") or usage.get("output_tokens_details") or {}
    if isinstance(details, dict):
        cost.reasoning_tokens += number(details.get("reasoning_tokens"))


def _error_message(raw: bytes) -> str:
    """The message of an error answer (``error.message`` in both formats), cut short."""
    text = raw.decode("utf-8", "replace")
    try:
        error = json.loads(text).get("error")
        if isinstance(error, dict) and error.get("message"):
            text = str(error["message"])
        elif isinstance(error, str):
            text = error
    except (ValueError, AttributeError):
        pass
    return text.strip()[:MAX_ERROR_CHARS] or "(no message)"
