"""Agents that speak a vendor's own computer-use protocol through its official SDK.

- :mod:`~dynacu_agents.computer_use.anthropic`: Anthropic's computer-use tool (Messages API);
- :mod:`~dynacu_agents.computer_use.openai`: OpenAI's Responses API computer-use tool;
- :mod:`~dynacu_agents.computer_use.gemini`: Gemini's computer-use tool (0-999 coordinates);
- :mod:`~dynacu_agents.computer_use.base`: what the three share: the step loop (a queued action,
  else a request, asked once more when the reply has no action), the option checks and the
  mapping of HTTP errors onto ``ModelRefused`` and ``LLMError``.

Each maps the model's actions onto the benchmark's (click, type, key, scroll, wait, speak,
done), returns every screenshot with the observation record beside it (so the AOI channels
reach these models too), and is an optional extra: a missing SDK raises
``DependencyNotInstalled`` naming it.
"""
