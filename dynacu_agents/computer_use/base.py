"""What the three computer-use agents share: option checks, the step loop and the error mapping.

Layout: the checks of the options every agent takes, and the SDK import; the mapping of an HTTP
error answer onto :class:`~dynacu_agents.llm.ModelRefused` or
:class:`~dynacu_agents.llm.LLMError`; :class:`Plan` and :class:`StepProgress`; then
:class:`ComputerUseAgent`, the base class whose ``act`` runs a step the same way for every
vendor:

1. an action queued from the last reply is returned at once, asking nothing (``calls`` 0);
2. else the vendor opens the step (``_open_step``: the turns that answer the last reply and
   show the observation), sends it (``_send``) and reads the reply's tool calls into benchmark
   actions (``_plan``);
3. a reply with no action to perform is answered with the vendor's retry turn
   (``_add_retry_turn``) and asked once more; a second one becomes
   ``{"type": "invalid_reply"}``, which the env reports as an agent mistake;
4. the vendor keeps what the next step goes on from (``_close_step``); the first action is
   returned and the rest are queued, one per env step.

A step's HTTP calls, tokens and time are counted in a :class:`~dynacu_agents.llm.StepCost`, and
added to the agent's running totals.
"""

from __future__ import annotations

import importlib
import os
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from gymnasium.error import DependencyNotInstalled

from dynacu_agents.coords import CoordSpace, ImageFit
from dynacu_agents.llm import (
    INVALID_REPLY,
    REASONING_EFFORTS,
    LLMError,
    ModelRefused,
    StepCost,
)

# Below 500, the statuses the anthropic and openai SDKs retry (and every 5xx).
SDK_RETRY_STATUSES = frozenset({408, 409, 429})

# ---- the options ----------------------------------------------------------------------------


def check_model(model: Any) -> None:
    """Refuse a model name that is not a non-empty string (``ValueError``)."""
    if not isinstance(model, str) or not model:
        raise ValueError(f"expected a model name, got {model!r}")


def check_reasoning_effort(reasoning_effort: str | None) -> None:
    """Refuse a reasoning effort that is neither one of ``REASONING_EFFORTS`` nor None."""
    if reasoning_effort is not None and reasoning_effort not in REASONING_EFFORTS:
        raise ValueError(
            f"expected reasoning_effort in {', '.join(REASONING_EFFORTS)} or None, "
            f"got {reasoning_effort!r}"
        )


def check_max_keyframes(max_keyframes: int | None) -> None:
    """Refuse a negative number of keyframes to send (None sends all)."""
    if max_keyframes is not None and max_keyframes < 0:
        raise ValueError(f"expected max_keyframes >= 0 or None, got {max_keyframes!r}")


def check_http_retries(http_retries: int) -> None:
    """Refuse a negative number of HTTP retries."""
    if http_retries < 0:
        raise ValueError(f"expected http_retries >= 0, got {http_retries!r}")


def image_fit(image_size: str | ImageFit) -> ImageFit:
    """The image the model is shown: ``image_size`` itself, or read by :meth:`ImageFit.parse`."""
    return image_size if isinstance(image_size, ImageFit) else ImageFit.parse(image_size)


def given_or_env(given: str | None, *names: str) -> str | None:
    """``given`` where it is set, else the first of the environment variables ``names`` set.

    An empty string counts as not set, as an argument and in the environment.
    """
    return given or next((os.environ[name] for name in names if os.environ.get(name)), None)


def import_sdk(module: str, missing: str) -> Any:
    """The vendor SDK's ``module``, imported only when an agent is built (the SDKs are extras).

    Raises:
        DependencyNotInstalled: the SDK is not installed; ``missing`` is the message, which
            names the extra to install.
    """
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise DependencyNotInstalled(missing) from e


# ---- errors and cost ------------------------------------------------------------------------


def sdk_retries(status: int) -> bool:
    """Whether the anthropic and openai SDKs retry an HTTP ``status`` (408, 409, 429, 5xx)."""
    return status in SDK_RETRY_STATUSES or status >= 500


def http_error(text: str, status: int, *, retried: Collection[int], fault: str = "") -> LLMError:
    """The error to raise for an error answer of HTTP ``status``; ``text`` says who said what.

    A 4xx other than the statuses in ``retried`` would be refused again: :class:`ModelRefused`,
    the agent's failure. Any other (a status retried until the retries ran out, a 5xx) is an
    :class:`LLMError`, an infrastructure fault, whose message is ``fault`` where given.
    """
    if 400 <= status < 500 and status not in retried:
        return ModelRefused(f"the model server refused the request: {text}", status)
    return LLMError(fault or text, status=status or None)


@contextmanager
def timed(cost: StepCost) -> Iterator[None]:
    """Add the time the block takes, whether it raises or not, to ``cost.latency_s``."""
    start = time.monotonic()
    try:
        yield
    finally:
        cost.latency_s += time.monotonic() - start


@dataclass
class Plan:
    """What a reply comes to: the actions to take, in order, and what its calls are owed.

    Attributes:
        actions: what ``act`` returns, the first now and the rest queued: action dicts, or
            the vendor's own items that :meth:`ComputerUseAgent._take` turns into them. Empty
            when nothing of the reply can be performed.
        answers: the vendor's answer to each of the reply's calls (performed, or why not), sent
            back when the conversation goes on.
        error: why a call, or the whole reply, could not be used; "" when all could.
    """

    actions: list[Any] = field(default_factory=list)
    answers: list[Any] = field(default_factory=list)
    error: str = ""


@dataclass
class StepProgress:
    """How far a step got: the fields of its info beside its cost (also when refused)."""

    retried: bool = False  # the first reply had no action, and the model was asked again
    reply: str = ""  # the final reply in short
    parse_error: str = ""  # why the last unusable reply (or call) could not be used, or ""


# ---- the agent ------------------------------------------------------------------------------


class ComputerUseAgent(ABC):
    """The step loop, queue and running totals of an agent on a vendor's computer-use tool.

    A subclass keeps its own ``__init__`` and keyword options (``llm_agent`` reads them from the
    signature), passes the options every vendor takes to ``super().__init__`` (kept as
    attributes of the same names) and implements the hooks of a step (see the module
    docstring), whose ``step`` and ``reply`` are objects of its own. ``total_calls``,
    ``total_input_tokens`` and ``total_output_tokens`` are the episode's running totals.
    """

    name = "llm"
    privileged = False
    queued_reply: ClassVar[str] = "(queued from the previous reply)"  # a queued step's reply
    counts_failed_steps: ClassVar[bool] = True  # a step that raises, refused or not, is counted

    def __init__(
        self,
        *,
        model: str,
        max_tokens: int,
        temperature: float | None,
        timeout_s: float,
        coords: CoordSpace,
        max_keyframes: int | None,
        http_retries: int,
        reasoning_effort: str | None,
    ) -> None:
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.timeout_s = timeout_s
        self.coords = coords
        self.max_keyframes = max_keyframes
        self.http_retries = http_retries
        self.reasoning_effort = reasoning_effort
        self._queue: deque[Any] = deque()  # the last reply's actions still to return
        self.reset("")

    def reset(self, instruction: str) -> None:
        """Start an episode: the conversation, the queue and the running totals are cleared."""
        self.instruction = instruction
        self.total_input_tokens = 0
        self.total_output_tokens = 0
        self.total_calls = 0
        self._queue.clear()
        self._clear_conversation()

    def act(self, observation: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The next action: a queued one of the last reply, else the model's next.

        Returns:
            The action dict (screen pixels; ``{"type": "invalid_reply", "raw": summary}`` when
            two replies in a row had no action to perform) and the step's info: ``calls``
            (HTTP requests, retries included; 0 for a queued action), ``input_tokens``,
            ``output_tokens``, ``reasoning_tokens`` (where counted), ``latency_s``,
            ``retried`` (the model was asked again), ``reply`` (the final reply in short) and
            ``parse_error`` (why a reply, or a call of it, could not be used, or "").

        Raises:
            LLMError: the server could not be reached, or kept failing past the retries.
            ModelRefused: the server refused the request (the agent's failure).
        """
        if self._queue:
            return self._take(self._queue.popleft(), observation), self._queued_info()
        cost, progress = StepCost(), StepProgress()
        try:
            action = self._ask(observation, cost, progress)
        except ModelRefused as e:
            e.info = self._refusal_info(cost, progress)
            self._count(cost)
            raise
        except BaseException:
            if self.counts_failed_steps:
                self._count(cost)
            raise
        self._count(cost)
        return action, self._info(cost, progress)

    def _ask(
        self, observation: dict[str, Any], cost: StepCost, progress: StepProgress
    ) -> dict[str, Any]:
        """Ask for the step's action; ask once more when the reply has none to perform."""
        step = self._open_step(observation)
        reply = self._send(step, cost)
        plan = self._plan(reply)
        progress.parse_error = plan.error
        if not plan.actions:
            progress.retried = True
            self._add_retry_turn(step, reply, plan)
            reply = self._send(step, cost)
            plan = self._plan(reply)
            progress.parse_error = plan.error or progress.parse_error
        progress.reply = reply.summary
        self._close_step(step, reply, plan)
        if not plan.actions:
            return {"type": INVALID_REPLY, "raw": reply.summary}
        first, *rest = plan.actions
        self._queue.extend(rest)
        return self._take(first, observation)

    def _count(self, cost: StepCost) -> None:
        """Add a step's calls and tokens to the running totals."""
        self.total_calls += cost.calls
        self.total_input_tokens += cost.input_tokens
        self.total_output_tokens += cost.output_tokens

    # ---- what a vendor may change -------------------------------------------------------------

    def _take(self, queued: Any, observation: dict[str, Any]) -> dict[str, Any]:
        """The action to return now for an item of a plan (by default, the item itself)."""
        return queued

    def _info(self, cost: StepCost, progress: StepProgress) -> dict[str, Any]:
        """The info of a step: its cost, then how far it got."""
        return {**cost.info(), **asdict(progress)}

    def _queued_info(self) -> dict[str, Any]:
        """The info of a step that returns a queued action: it asked nothing."""
        return self._info(StepCost(), StepProgress(reply=self.queued_reply))

    def _refusal_info(self, cost: StepCost, progress: StepProgress) -> dict[str, Any]:
        """The ``info`` a :class:`ModelRefused` carries: the step's cost so far."""
        return cost.info()

    # ---- what a vendor implements -------------------------------------------------------------

    @abstractmethod
    def _clear_conversation(self) -> None:
        """Forget the conversation and the answers owed to the last reply's calls."""

    @abstractmethod
    def _open_step(self, observation: dict[str, Any]) -> Any:
        """The step's request: the turns that answer the last reply and show ``observation``."""

    @abstractmethod
    def _send(self, step: Any, cost: StepCost) -> Any:
        """The reply to the step's request, read (``summary``: in short); its cost to ``cost``."""

    @abstractmethod
    def _plan(self, reply: Any) -> Plan:
        """The benchmark actions of a reply's calls, what each call is owed, or why none can be."""

    @abstractmethod
    def _add_retry_turn(self, step: Any, reply: Any, plan: Plan) -> None:
        """Add to the step's request the unusable reply and the turn that asks once more."""

    @abstractmethod
    def _close_step(self, step: Any, reply: Any, plan: Plan) -> None:
        """Keep what the next step goes on from: the history, the answers owed to the calls."""
