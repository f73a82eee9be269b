"""Which agent speaks which model API: ``--agent llm --api NAME``.

- ``openai``: chat completions, the API of OpenAI and of every OpenAI-compatible server
  (llama.cpp, vLLM, Ollama, ...), with the reply format of ``reply_format``
  (:class:`~dynacu_agents.llm.LLMAgent`);
- ``anthropic``: the Anthropic Messages API, the same way;
- ``anthropic-computer``, ``openai-computer``, ``gemini-computer``: each vendor's own
  computer-use tool through its SDK (:mod:`dynacu_agents.computer_use`).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

PROTOCOLS = {
    "openai": "dynacu_agents.llm:LLMAgent",
    "anthropic": "dynacu_agents.llm:LLMAgent",
    "anthropic-computer": "dynacu_agents.computer_use.anthropic:AnthropicComputerAgent",
    "openai-computer": "dynacu_agents.computer_use.openai:OpenAIComputerAgent",
    "gemini-computer": "dynacu_agents.computer_use.gemini:GeminiComputerAgent",
}
CHAT_APIS = ("openai", "anthropic")  # the two LLMAgent speaks (its own ``api`` argument)


def agent_class(api: str) -> type:
    """The agent class of ``api``.

    Raises:
        ValueError: an unknown ``api``; the message lists the known ones.
        DependencyNotInstalled: (from building the agent) its SDK is not installed.
    """
    if api not in PROTOCOLS:
        raise ValueError(f"unknown model api {api!r}; expected one of {', '.join(PROTOCOLS)}")
    module, _, name = PROTOCOLS[api].partition(":")
    cls: type = getattr(importlib.import_module(module), name)
    return cls


def llm_agent(api: str = "openai", **options: Any) -> Any:
    """The agent that speaks ``api``, built with ``options``.

    Raises:
        ValueError: an unknown ``api``, or an option that agent does not take (the message
            names those it does), or a bad value of one.
    """
    cls = agent_class(api)
    if api in CHAT_APIS:
        options = {**options, "api": api}
    takes = [
        p.name
        for p in inspect.signature(cls).parameters.values()
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    unknown = sorted(set(options) - set(takes))
    if unknown:
        raise ValueError(
            f"the {api} api takes no {', '.join(repr(u) for u in unknown)} option; "
            f"it takes: {', '.join(t for t in takes if t != 'api')}"
        )
    return cls(**options)
