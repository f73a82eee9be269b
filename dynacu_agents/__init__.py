"""Baseline agents for dynacu-gym, written against the public API only.

An agent implements :class:`Agent`: ``reset(instruction)`` at the start of an episode and
``act(observation) -> (action, info)`` at every step.
"""

from __future__ import annotations

from dynacu_agents.base import Agent
from dynacu_agents.llm import LLMAgent
from dynacu_agents.null import NullAgent
from dynacu_agents.oracle import NearMissAgent, OracleAgent, WatcherAgent
from dynacu_agents.random_agent import RandomAgent

AGENTS = {
    "null": NullAgent,
    "oracle": OracleAgent,
    "nearmiss": NearMissAgent,
    "random": RandomAgent,
    "watcher": WatcherAgent,
}

__all__ = [
    "AGENTS",
    "Agent",
    "LLMAgent",
    "NearMissAgent",
    "NullAgent",
    "OracleAgent",
    "RandomAgent",
    "WatcherAgent",
]
