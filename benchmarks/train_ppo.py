"""Train PPO (stable-baselines3) on a game task and plot its learning curve against random.

    python benchmarks/train_ppo.py [--task J2] [--steps 8000] [--out benchmarks/results/train_ppo]

The env is the real one (Chromium, the task page) in paused time, so an episode does not
depend on how long the policy or the optimiser take, and checklist rewards: the game pays the
share of its goal reached (a point of five is 0.2). The policy sees the screenshot scaled to
72x128 (``ImageObservation``) and chooses one of a few actions (``DiscreteActions``): for J2,
the Reaction Test, a click on the panel or a wait of 0.25 or 1 s; it must learn to hold while the
panel is red and click once it turns green. Writes ``curve.png`` (each training episode's
return, its running mean, and the random policy's mean) and ``figures.json``, and prints the
random and trained policies' mean returns and the steps per second of training.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import dynacu_gym  # noqa: F401 - registers the envs
from dynacu_gym.wrappers.rl import DiscreteActions, ImageObservation

# The actions each task is trained with: few and meaningful, as an RL setup for a game would.
ACTIONS: dict[str, dict[str, Any]] = {
    "J2": {"grid": (0, 0), "points": [(351, 433)], "waits": (0.25, 1.0)},  # the panel, or wait
}
DEFAULT_ACTIONS: dict[str, Any] = {"grid": (4, 3), "waits": (0.5,)}


def make_env(task: str) -> gym.Env:
    env = gym.make(f"DynaCU-{task}-v0", clock="paused", reward_mode="checklist", action_time_s=0.25)
    return ImageObservation(DiscreteActions(env, **ACTIONS.get(task, DEFAULT_ACTIONS)))


def play(env: gym.Env, policy: Any, episodes: int, seed: int) -> list[float]:
    """Returns of ``episodes`` episodes; ``policy(obs)`` gives an action."""
    returns = []
    for k in range(episodes):
        obs, _ = env.reset(seed=seed + k)
        total, ended = 0.0, False
        while not ended:
            obs, reward, terminated, truncated, _ = env.step(policy(obs))
            total += float(reward)
            ended = terminated or truncated
        returns.append(total)
    return returns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", default="J2")
    parser.add_argument("--steps", type=int, default=8000, help="training timesteps")
    parser.add_argument("--eval-episodes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/train_ppo")
    args = parser.parse_args()

    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.monitor import Monitor

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = Monitor(make_env(args.task))
    rng = np.random.default_rng(args.seed)
    try:
        # Evaluation seeds are apart from the training episodes' (reset by SB3 without a seed).
        eval_seed = 10_000 + args.seed
        random_returns = play(env, lambda _obs: int(rng.integers(env.action_space.n)),
                              args.eval_episodes, eval_seed)  # fmt: skip
        print(f"random policy: mean return {statistics.mean(random_returns):.3f} "
              f"over {len(random_returns)} episodes")  # fmt: skip

        curve: list[tuple[int, float]] = []

        class Returns(BaseCallback):
            def _on_step(self) -> bool:
                for info in self.locals.get("infos", []):
                    if "episode" in info:
                        curve.append((self.num_timesteps, float(info["episode"]["r"])))
                return True

        model = PPO("CnnPolicy", env, n_steps=256, batch_size=64, n_epochs=4,
                    learning_rate=3e-4, ent_coef=0.01, seed=args.seed, verbose=0)  # fmt: skip
        t = time.monotonic()
        model.learn(args.steps, callback=Returns())
        train_s = time.monotonic() - t
        trained_returns = play(env, lambda obs: int(model.predict(obs, deterministic=True)[0]),
                               args.eval_episodes, eval_seed)  # fmt: skip
    finally:
        env.close()

    figures = {
        "task": args.task,
        "steps": args.steps,
        "train_seconds": round(train_s, 1),
        "steps_per_second": round(args.steps / train_s, 2),
        "random_mean_return": round(statistics.mean(random_returns), 4),
        "trained_mean_return": round(statistics.mean(trained_returns), 4),
        "random_returns": random_returns,
        "trained_returns": trained_returns,
        "training_episodes": len(curve),
    }
    (out / "figures.json").write_text(json.dumps({**figures, "curve": curve}, indent=1) + "\n")
    plot(curve, figures, out / "curve.png")
    print(f"trained policy: mean return {figures['trained_mean_return']:.3f} "
          f"({len(curve)} training episodes, {figures['steps_per_second']} steps/s)")  # fmt: skip
    print(f"wrote {out / 'curve.png'} and {out / 'figures.json'}")


def plot(curve: list[tuple[int, float]], figures: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    if curve:
        steps, returns = zip(*curve, strict=True)
        ax.plot(steps, returns, ".", alpha=0.35, label="training episode")
        window = max(1, len(returns) // 10)
        running = np.convolve(returns, np.ones(window) / window, mode="valid")
        ax.plot(steps[window - 1 :], running, label=f"running mean ({window} episodes)")
    ax.axhline(figures["random_mean_return"], color="grey", linestyle="--", label="random policy")
    ax.axhline(figures["trained_mean_return"], color="green", linestyle=":",
               label="trained policy (greedy)")  # fmt: skip
    ax.set_xlabel("timesteps")
    ax.set_ylabel("episode return (share of the goal)")
    ax.set_title(f"PPO on DynaCU-{figures['task']}-v0 (paused time, checklist reward)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
