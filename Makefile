# Fresh machine: `make run` or `make test` creates .venv and installs on first use.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.memlane-installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install run test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Re-install whenever the dependency list changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[local,dev]"
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/memlane quickstart

test: install
	$(BIN)/python -m pytest -q

bench: install
	$(BIN)/python benchmarks/bench_core.py --sizes 10000,100000 --users 1000 --out benchmarks/last_core.json

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache
