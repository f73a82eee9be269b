"""The benchmark harness: running agents in the envs, and what is made of the runs.

It sits above the env core (``dynacu_gym``'s env, actions, modes, record, tasks, runtime,
perception, wrappers), which never imports it, and is the only place that builds agents by
name:

- :mod:`~dynacu_gym.harness.episode`: one episode of an agent, and what came of it;
- :mod:`~dynacu_gym.harness.trace`: an episode's whole trace on disk;
- :mod:`~dynacu_gym.harness.runner`: the plan, the episode lines, resume and retry, local
  worker processes (``dynacu eval``);
- :mod:`~dynacu_gym.harness.ray_backend`: the same on Ray actors (``--backend ray``);
- :mod:`~dynacu_gym.harness.collect`: traces as chat-format demonstrations (``dynacu collect``);
- :mod:`~dynacu_gym.harness.report`: ``dynacu report``;
- :mod:`~dynacu_gym.harness.audit`: ``dynacu audit``;
- :mod:`~dynacu_gym.harness.cli`: the ``dynacu`` command.
"""
