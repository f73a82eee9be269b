# One entry point for a fresh Debian machine: `make demo`, `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= asr,tts,clip,rl,report,video,ray,anthropic,openai,gemini,local-llm,dev
SYSTEM_PACKAGES := chromium xvfb pulseaudio pulseaudio-utils ffmpeg fonts-dejavu-core tesseract-ocr build-essential cmake
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEMO_TASKS ?= A1,C1,E1,F1,H1,J1
PYTEST_ARGS ?=
# The default suite prints its slowest tests, so its time (kept well under 30 min) stays visible.
DURATIONS := --durations=25

.PHONY: setup system python demo test test-all lint bench clean

setup: system python

# apt only when a package is missing, so a set-up machine pays nothing.
system:
	@missing=""; for p in $(SYSTEM_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

python: $(VENV)/.installed

# llama.cpp (the local model server) for any x86-64-v3 CPU rather than this one: where the CPU
# lists AMX, the native build's AMX kernels trapped (SIGILL on tileloadd) at the server's first
# request, though the kernel granted AMX. Built once per setting (a stamp in the venv keeps it).
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
  -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF

$(VENV)/.installed: pyproject.toml constraints.txt Makefile
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@if [ -n "$(findstring local-llm,$(EXTRAS))" ] && \
	  [ "$$(cat $(VENV)/.llama-cmake-args 2>/dev/null)" != "$(LLAMA_CMAKE_ARGS)" ]; then \
	  echo "building llama-cpp-python with $(LLAMA_CMAKE_ARGS) (minutes)"; \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install -q --disable-pip-version-check \
	    --no-cache-dir --force-reinstall --no-deps -c constraints.txt llama-cpp-python && \
	  echo "$(LLAMA_CMAKE_ARGS)" > $(VENV)/.llama-cmake-args; fi
	$(PY) -m pip install -q --disable-pip-version-check -c constraints.txt -e ".[$(EXTRAS)]"
	@touch $@

# The oracle on a spread of tasks, every channel on, through the evaluation runner.
demo: setup
	rm -rf runs/demo
	$(VENV)/bin/dynacu eval --agent oracle --modes aoi_interactive --tasks '$(DEMO_TASKS)' \
	  --workers 2 --out runs/demo

lint: python
	$(PY) -m ruff check dynacu_gym dynacu_agents tests benchmarks
	$(PY) -m ruff format --check dynacu_gym dynacu_agents tests benchmarks
	$(PY) -m mypy dynacu_gym dynacu_agents
	$(VENV)/bin/lint-imports

test: setup lint
	$(PY) -m pytest -m "not slow" $(DURATIONS) $(PYTEST_ARGS)

# Everything, every task end to end. The default suite runs alone first, then the other slow
# tests; then each task's own episodes (real time, mostly waiting on the page), its seeded
# variants' among them, run TASK_JOBS at a time with pytest-xdist. Last, the episodes where
# the agent talks to a listening page run one at a time: with three episodes and their
# Whisper on two cores, the page's recording of the agent's voice came out garbled now and
# then (H4, H8 heard wrong; alone they pass).
TASK_JOBS ?= 3
TASK_TESTS := tests/test_solutions.py tests/test_check_env.py tests/test_variants.py tests/test_elements.py
test-all: setup lint
	$(PY) -m pytest -m "not slow" $(DURATIONS) $(PYTEST_ARGS)
	$(PY) -m pytest -m slow $(foreach t,$(TASK_TESTS),--ignore=$(t)) $(PYTEST_ARGS)
	$(PY) -m pytest -m "slow and not speaks" -n $(TASK_JOBS) $(TASK_TESTS) $(PYTEST_ARGS)
	$(PY) -m pytest -m "slow and speaks" $(TASK_TESTS) $(PYTEST_ARGS)

bench: setup
	$(PY) benchmarks/env_overhead.py
	$(PY) benchmarks/audio_channel.py
	$(PY) benchmarks/keyframes.py
	$(PY) benchmarks/speech.py

clean:
	rm -rf $(VENV) dist build .pytest_cache .ruff_cache .mypy_cache
