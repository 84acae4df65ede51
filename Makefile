# Fresh machine: `make run` or `make test` creates .venv and installs on first use.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.memlane-installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install chromium run quickstart test test-fast fuzz bench bench-server clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Re-install whenever the dependency list changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[local,dev,server,postgres,langgraph,langchain,openai-agents]"
	$(MAKE) --no-print-directory chromium
	touch $(STAMP)

# The dashboard's browser tests drive Debian's chromium (Playwright's own browser download is not used), with
# Noto CJK so Chinese memories are drawn as text, not empty boxes. Without apt-get (or when it fails) the
# browser tests are skipped and say why (the CJK test without the font, likewise).
chromium:
	@{ command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; } \
	  && { ! command -v dpkg >/dev/null 2>&1 || dpkg -s fonts-noto-cjk >/dev/null 2>&1; } || { \
	  if command -v apt-get >/dev/null 2>&1; then \
	    SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	    echo "installing Debian's chromium and fonts-noto-cjk for the dashboard's browser tests"; \
	    $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium fonts-noto-cjk >/dev/null \
	      || echo "could not install chromium and fonts-noto-cjk: the dashboard's browser tests will be skipped"; \
	  else echo "no apt-get: install chromium and a CJK font yourself, or the dashboard's browser tests are skipped"; fi; }

install: $(STAMP)

# The REST server (mem0-compatible API, docs at /docs, MCP at /mcp) on the embedded default store.
run: install
	$(BIN)/memlane serve

quickstart: install
	$(BIN)/memlane quickstart

test: install
	$(BIN)/python -m pytest -q

# Everything but the tests marked model (the real local model) or postgres (PostgreSQL): under a minute.
test-fast: install
	$(BIN)/python -m pytest -q -m "not model and not postgres"

# The API and MCP fuzz tests with many examples per operation / tool (make test runs a few).
fuzz: install
	MEMLANE_FUZZ_EXAMPLES=$${MEMLANE_FUZZ_EXAMPLES:-200} $(BIN)/python -m pytest -q tests/test_fuzz_api.py tests/test_fuzz_mcp.py

# The engine benchmarks (core, retrieval, formation, graph, agent context, late interaction); the server load run is
# make bench-server; the PostgreSQL and document-store runs are run by hand (benchmarks/README.md). Figures: benchmarks/RESULTS.md.
bench: install
	$(BIN)/python benchmarks/bench_core.py --sizes 10000,100000 --users 1000 --out benchmarks/last_core.json
	$(BIN)/python benchmarks/bench_retrieval.py --size 100000 --users 1000 --out benchmarks/last_retrieval.json
	$(BIN)/python benchmarks/bench_formation.py --scope-size 10000 --out benchmarks/last_formation.json
	$(BIN)/python benchmarks/bench_graph.py --size 100000 --users 1000 --out benchmarks/last_graph.json
	$(BIN)/python benchmarks/bench_context.py --size 10000 --out benchmarks/last_context.json
	$(BIN)/python benchmarks/bench_documents.py --out benchmarks/last_documents.json

bench-server: install
	$(BIN)/python benchmarks/bench_server.py --out benchmarks/last_server.json

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache
