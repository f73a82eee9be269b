"""``--agent llm --api NAME``: each api builds its agent, and says what it does not take."""

from __future__ import annotations

import pytest

from dynacu_agents.computer_use.anthropic import AnthropicComputerAgent
from dynacu_agents.computer_use.gemini import GeminiComputerAgent
from dynacu_agents.computer_use.openai import OpenAIComputerAgent
from dynacu_agents.llm import LLMAgent
from dynacu_agents.protocols import PROTOCOLS, llm_agent
from dynacu_gym.evaluation import AgentSpec, evaluate


@pytest.mark.parametrize(
    ("api", "cls"),
    [
        ("openai", LLMAgent),
        ("anthropic", LLMAgent),
        ("anthropic-computer", AnthropicComputerAgent),
        ("openai-computer", OpenAIComputerAgent),
        ("gemini-computer", GeminiComputerAgent),
    ],
)
def test_each_api_builds_its_agent(api, cls) -> None:
    agent = llm_agent(api, model="m", api_key="k", base_url="http://127.0.0.1:9/v1")
    assert type(agent) is cls and agent.name == "llm"
    if cls is LLMAgent:
        assert agent.api == api


def test_the_apis_are_all_listed() -> None:
    assert list(PROTOCOLS) == [
        "openai",
        "anthropic",
        "anthropic-computer",
        "openai-computer",
        "gemini-computer",
    ]


def test_an_unknown_api_or_option_says_what_there_is() -> None:
    with pytest.raises(ValueError, match="unknown model api 'gemini'; expected one of openai,"):
        llm_agent("gemini", model="m")
    with pytest.raises(ValueError, match="the gemini-computer api takes no 'coords', 'images'"):
        llm_agent("gemini-computer", model="m", api_key="k", coords="image", images=False)
    with pytest.raises(ValueError, match="it takes: model, base_url, api_key, max_tokens"):
        llm_agent("openai-computer", model="m", api_key="k", reply_format="qwen")


def test_eval_refuses_a_bad_llm_option_before_any_episode(tmp_path) -> None:
    spec = AgentSpec("llm", {"model": "m", "api": "anthropic-computer", "coords": "image"})
    with pytest.raises(ValueError, match="the anthropic-computer api takes no 'coords'"):
        evaluate(spec, ["S1"], ["standard"], tmp_path / "run")
    assert not (tmp_path / "run" / "episodes.jsonl").exists()
