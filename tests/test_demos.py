"""Demonstrations: episodes become chat turns with image files that `datasets` loads."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import numpy as np
import pytest

from dynacu_gym import parse_action
from dynacu_gym.cli import main
from dynacu_gym.demos import DEMOS_FILE, write_demos
from dynacu_gym.imaging import save_png


@pytest.mark.browser
def test_collected_episodes_load_as_a_dataset_of_chat_turns(tmp_path, capsys):
    out = tmp_path / "demos"
    assert main(["collect", "--agent", "oracle", "--tasks", "F2", "--modes", "aoi_visual",
                 "--out", str(out)]) == 0  # fmt: skip
    assert "1 episodes, 1 solved" in capsys.readouterr().out
    rows = datasets.load_dataset("json", data_files=str(out / DEMOS_FILE), split="train")
    trace = json.loads((out / "traces" / "F2-aoi_visual-oracle-0" / "trace.jsonl").read_text()
                       .splitlines()[-1])  # fmt: skip
    assert len(rows) == trace["step"]  # a line per action the oracle took
    keyframes = 0
    for row in rows:
        system, user, assistant = row["messages"]
        assert [system["role"], user["role"], assistant["role"]] == ["system", "user", "assistant"]
        assert user["content"][0]["text"].startswith("Observation Record")
        placeholders = [part for part in user["content"] if part["type"] == "image"]
        assert len(placeholders) == len(row["images"]) >= 1
        assert all((out / image).is_file() for image in row["images"])
        keyframes += len(row["images"]) - 1
        parse_action(assistant["content"][0]["text"])  # the reply is a valid action line
        assert row["outcome"] == {"result": "success", "success": True, "credit": 1.0,
                                  "steps": len(rows)}  # fmt: skip
        assert (row["task"], row["mode"], row["agent"]) == ("F2", "aoi_visual", "oracle")
    assert keyframes > 0  # F2's page changes while the oracle waits for the text
    assert [row["step"] for row in rows] == list(range(1, len(rows) + 1))


def _trace(folder: Path, success: bool, actions: list) -> None:
    for sub in ("records", "screens", "keyframes"):
        (folder / sub).mkdir(parents=True)
    lines = []
    for step, action in enumerate([None, *actions]):
        (folder / "records" / f"{step:04d}.txt").write_text(f"Observation Record — Step {step}")
        save_png(np.zeros((4, 4, 3), dtype=np.uint8), folder / "screens" / f"{step:04d}.png")
        lines.append({"step": step, "elapsed": float(step), "action": action,
                      "keyframe_times": []})  # fmt: skip
    (folder / "trace.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    episode = {"task": "J1", "mode": "standard", "agent": "llm", "repeat": 0, "seed": 7,
               "result": "success" if success else "timeout", "success": success,
               "credit": float(success), "steps": len(actions)}  # fmt: skip
    (folder / "episode.json").write_text(json.dumps(episode))


def test_only_valid_steps_and_if_asked_only_solved_episodes_are_written(tmp_path):
    click = {"type": "click", "x": 10, "y": 20, "narration": "the green one"}
    _trace(tmp_path / "traces" / "a", True, [click, {"type": "invalid_reply", "raw": "hm"}])
    _trace(tmp_path / "traces" / "b", False, [{"type": "wait", "seconds": 2.0}])
    (tmp_path / "traces" / "c").mkdir()  # an episode that never finished
    assert write_demos(tmp_path) == (2, 2)
    lines = [json.loads(x) for x in (tmp_path / DEMOS_FILE).read_text().splitlines()]
    assert lines[0]["messages"][2]["content"][0]["text"] == "click 10 20  # the green one"
    assert lines[0]["images"] == ["traces/a/screens/0000.png"]
    assert write_demos(tmp_path, successes_only=True) == (1, 1)
