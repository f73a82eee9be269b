"""What the model calls cost: tokens by agent and model, and dollars at a price file's prices."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from dynacu_gym.harness.lines import (  # noqa: F401 - the report's readers load lines from here
    BENCHMARK_SETTING,
    REQUIRED_KEYS,
    VERDICTS,
    episode_key,
    is_infra_failure,
    is_number,
    load_episodes,
    off_benchmark,
    setting_of,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib
from dynacu_gym.harness.report.tables import agent_model_order

COST_COLUMNS = (
    "agent",
    "model",
    "episodes",
    "infra_failures",
    "llm_calls",
    "steps",
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "input_tokens_per_episode",
    "output_tokens_per_episode",
    "calls_per_step",
    "agent_failures",
    "usd_per_million_input",
    "usd_per_million_output",
    "usd",
    "usd_per_episode",
)


Prices: TypeAlias = dict[str, tuple[float, float]]
_PRICE_KEYS = ("input", "output")


def load_prices(path: str | Path) -> Prices:
    """Read a price file: each model's USD per million input tokens and per million output.

    JSON (``.json``) or TOML (``.toml``), by the file's suffix::

        {"gpt-4o": {"input": 2.5, "output": 10}}

        [gpt-4o]
        input = 2.5
        output = 10

    In TOML a model name with a dot is quoted (``["gpt-4.1"]``). There is no price for
    reasoning tokens: they are a part of the output tokens and billed at the output price.

    Args:
        path: the price file.

    Returns:
        Model -> (USD per million input tokens, USD per million output tokens).

    Raises:
        ValueError: the file cannot be read, its suffix is neither ``.json`` nor ``.toml``, it
            is not valid JSON or TOML, or a model's entry lacks ``input`` or ``output``, has
            another key, or holds a price that is not a finite number >= 0 (naming the file,
            the model and what was expected).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".json", ".toml"):
        raise ValueError(f"{path}: expected a price file ending in .json or .toml, got {suffix!r}")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ValueError(f"{path}: cannot read the price file ({e.strerror or e})") from e
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: expected UTF-8 text in the price file ({e})") from e
    try:
        raw = json.loads(text) if suffix == ".json" else tomllib.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from e
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: not valid TOML ({e})") from e
    expected = "'input' and 'output', in USD per million tokens"
    if not isinstance(raw, dict):
        raise ValueError(
            f"{path}: expected an object of models, each with {expected}, got {type(raw).__name__}"
        )
    prices: Prices = {}
    for model, entry in raw.items():
        at = f"{path}: model {model!r}"
        if not isinstance(entry, dict):
            raise ValueError(f"{at}: expected an object with {expected}, got {entry!r}")
        missing = [k for k in _PRICE_KEYS if k not in entry]
        if missing:
            tables = [k for k, v in entry.items() if isinstance(v, dict)]
            hint = (
                f'; in TOML a model name with a dot is quoted: ["{model}.{tables[0]}"]'
                if suffix == ".toml" and tables
                else ""
            )
            raise ValueError(
                f"{at}: missing {' and '.join(map(repr, missing))}; expected {expected}{hint}"
            )
        extra = [k for k in entry if k not in _PRICE_KEYS]
        if extra:
            raise ValueError(
                f"{at}: unexpected key(s) {', '.join(map(repr, extra))}; expected only {expected}"
                " (reasoning tokens are a part of output and billed at its price)"
            )
        for key in _PRICE_KEYS:
            value = entry[key]
            if not (is_number(value) and math.isfinite(value) and value >= 0):
                raise ValueError(
                    f"{at}: {key!r}: expected a finite number >= 0 (USD per million tokens), "
                    f"got {value!r}"
                )
        prices[model] = (float(entry["input"]), float(entry["output"]))
    return prices


@dataclass(frozen=True)
class CostRow:
    """What the model calls of one (agent, model) came to, in tokens and, when priced, dollars.

    Totals are over every line of the (agent, model), infrastructure failures included: a
    fault's line holds what was spent before it (often nothing). Means are over the episodes
    without an infrastructure failure, whose count is ``episodes``.

    Attributes:
        agent: the agent's name.
        model: the model behind the agent, or ``None``.
        episodes: episodes without an infrastructure failure (static controls included).
        infra_failures: episodes that ended on an infrastructure fault (not in ``episodes``).
        llm_calls: model calls, in total.
        steps: actions taken in ``episodes``.
        input_tokens: input tokens, in total.
        output_tokens: output tokens, in total (reasoning tokens among them).
        reasoning_tokens: the part of ``output_tokens`` the model server reported as
            reasoning, in total; ``None`` when no line reports it.
        agent_failures: episodes the agent could not go on with (``agent_failure`` not empty).
        input_tokens_per_episode: mean input tokens of ``episodes``; ``None`` without any.
        output_tokens_per_episode: mean output tokens of ``episodes``; ``None`` without any.
        calls_per_step: model calls over steps, in ``episodes``; ``None`` without steps.
        price: (USD per million input tokens, per million output), or ``None`` when the
            prices lack the model.
        usd: what the tokens cost in total, at ``price``; ``None`` without a price.
        usd_per_episode: mean cost of ``episodes``; ``None`` without a price or episodes.
    """

    agent: str
    model: str | None
    episodes: int
    infra_failures: int
    llm_calls: int
    steps: int
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int | None
    agent_failures: int
    input_tokens_per_episode: float | None
    output_tokens_per_episode: float | None
    calls_per_step: float | None
    price: tuple[float, float] | None
    usd: float | None
    usd_per_episode: float | None


def _tokens(episode: dict[str, Any], kind: str) -> int:
    return int(episode["tokens"].get(kind, 0))


def _usd(price: tuple[float, float], input_tokens: float, output_tokens: float) -> float:
    """Dollars for tokens at ``price``; reasoning is within the output tokens, never added."""
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


def cost_rows(episodes: Iterable[dict[str, Any]], prices: Prices | None = None) -> list[CostRow]:
    """Model calls, tokens and, at ``prices``, dollars, for each (agent, model) that called one.

    An (agent, model) has a row when one of its episodes made a model call; the row counts all
    its episodes, static controls and agent failures included. Infrastructure failures are
    counted apart and left out of every mean; their tokens (what was spent before the fault,
    often nothing) are in the totals, so ``usd`` is all the lines cost and ``usd_per_episode``
    what an episode without a fault cost on average. Reasoning tokens are a part of the output
    tokens: they are billed at the output price within them, never a second time.

    Args:
        episodes: episodes as from :func:`load_episodes`.
        prices: model -> (USD per million input tokens, per million output), as from
            :func:`load_prices`; a model it lacks gets no dollars.

    Returns:
        Rows sorted by agent and model.
    """
    groups: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for ep in episodes:
        groups.setdefault((ep["agent"], ep["model"]), []).append(ep)
    rows = []
    for (agent, model), eps in sorted(groups.items(), key=lambda item: agent_model_order(item[0])):
        if not any(ep["llm_calls"] > 0 for ep in eps):
            continue
        counted = [ep for ep in eps if not is_infra_failure(ep)]
        n, steps = len(counted), sum(ep["steps"] for ep in counted)
        calls = sum(ep["llm_calls"] for ep in counted)
        input_tokens = sum(_tokens(ep, "input") for ep in eps)
        output_tokens = sum(_tokens(ep, "output") for ep in eps)
        counted_input = sum(_tokens(ep, "input") for ep in counted)
        counted_output = sum(_tokens(ep, "output") for ep in counted)
        reported = [ep for ep in eps if "reasoning" in ep["tokens"]]
        price = prices.get(model) if prices is not None and model is not None else None
        usd = usd_per_episode = None
        if price is not None:
            usd = _usd(price, input_tokens, output_tokens)
            usd_per_episode = _usd(price, counted_input, counted_output) / n if n else None
        rows.append(
            CostRow(
                agent=agent,
                model=model,
                episodes=n,
                infra_failures=len(eps) - n,
                llm_calls=sum(ep["llm_calls"] for ep in eps),
                steps=steps,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                reasoning_tokens=(
                    sum(_tokens(ep, "reasoning") for ep in reported) if reported else None
                ),
                agent_failures=sum(1 for ep in eps if ep.get("agent_failure")),  # older: none
                input_tokens_per_episode=counted_input / n if n else None,
                output_tokens_per_episode=counted_output / n if n else None,
                calls_per_step=calls / steps if steps else None,
                price=price,
                usd=usd,
                usd_per_episode=usd_per_episode,
            )
        )
    return rows
