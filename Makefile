# Fresh machine: `make run` or `make test` creates .venv and installs on first use.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.memlane-installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install chromium js-client run quickstart test test-fast fuzz bench bench-server clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Re-install whenever the dependency list changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[local,dev,server,postgres,langgraph,langchain,openai-agents]"
	$(MAKE) --no-print-directory chromium
	$(MAKE) --no-print-directory js-client
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

# mem0's JavaScript client (npm mem0ai, pinned in tests/js/package-lock.json) for tests/server/test_mem0_js_client.py,
# installed into tests/js/node_modules when node and npm are here; without them that test is skipped and says why.
js-client:
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then \
	  npm ci --prefix tests/js --silent || echo "could not install mem0ai from the npm registry: the JavaScript client test will be skipped"; \
	else echo "no node/npm: the mem0 JavaScript client test is skipped"; fi

install: $(STAMP)

# The REST server (mem0-compatible API, docs at /docs, MCP at /mcp) on the home's store (SQLite by default):
# make run PORT=8080 HOST=0.0.0.0 (unset: $MEMLANE_PORT / $MEMLANE_HOST, else 18088 on 127.0.0.1).
run: install
	$(BIN)/memlane serve$(if $(PORT), --port $(PORT))$(if $(HOST), --host $(HOST))

quickstart: install
	$(BIN)/memlane quickstart

test: install
	$(BIN)/python -m pytest -q

# Everything but the tests marked model (the real local model) or postgres (PostgreSQL): under a minute.
test-fast: install
	$(BIN)/python -m pytest -q -m "not model and not postgres"

# The REST API fuzzed by schemathesis from its OpenAPI schema (every phase, every check but
# positive_data_acceptance; two tenants' keys; SQLite and PostgreSQL) and the MCP tools with random
# arguments, 200 examples per operation / tool (make test runs a short version).
fuzz: install
	MEMLANE_FUZZ_EXAMPLES=$${MEMLANE_FUZZ_EXAMPLES:-200} MEMLANE_FUZZ_BACKENDS=$${MEMLANE_FUZZ_BACKENDS:-sqlite,postgres} \
	  $(BIN)/python -m pytest -q -s tests/server/test_fuzz_api.py tests/server/test_fuzz_mcp.py

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
