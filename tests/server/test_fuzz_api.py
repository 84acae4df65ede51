"""The REST API fuzzed from its own OpenAPI schema by schemathesis, as its command line runs it,
against a real server on loopback: every operation, every phase (coverage: boundary values, wrong
types, undeclared methods; fuzzing; stateful: sequences following the schema's links) and every
check but ``positive_data_acceptance``, plus ``support/fuzz_checks.py`` (no stack trace; errors are JSON
naming the field). The run must end with no failure and no error.

``make test`` runs a short version (``MEMLANE_FUZZ_EXAMPLES``, default 3 per operation, with an admin
key on SQLite); ``make fuzz`` runs 200 per operation with the keys of two tenants, on SQLite and
PostgreSQL (``MEMLANE_FUZZ_BACKENDS``).

Not checked: that every schema-valid request succeeds (``positive_data_acceptance``). Some rules are
beyond JSON Schema and answer 400/422 on purpose: a scope needs one of user_id, agent_id, run_id; a
filter must parse in memlane's filter language; an update needs text or metadata. Those answers are
documented and checked like every other. A rejection may also be 413 (a body over the server's limit)
or 414 (a URL over the HTTP parser's), both documented."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memlane.hosting.keys import open_key_store
from support.server_fixtures import start

EXAMPLES = int(os.environ.get("MEMLANE_FUZZ_EXAMPLES", "3"))
TENANTS = ("fuzz-a", "fuzz-b") if EXAMPLES >= 50 else ("fuzz-a",)
BACKENDS = os.environ.get("MEMLANE_FUZZ_BACKENDS", "sqlite").split(",")
SEED = os.environ.get("MEMLANE_FUZZ_SEED", "20260301")
TESTS = Path(__file__).resolve().parents[1]
CONFIG = """
[checks.negative_data_rejection]
expected-statuses = [400, 401, 403, 404, 405, 406, 409, 413, 414, 415, 422]
"""


@pytest.fixture(scope="module", params=BACKENDS)
def fuzz_server(request, tmp_path_factory, embedder):
    home = tmp_path_factory.mktemp(f"fuzz-home-{request.param}")
    config = request.getfixturevalue("pg").config() if request.param == "postgres" else None
    # the fuzzer sends thousands of requests a minute from one key on purpose: no rate limits here
    # (test_rate_limit.py tests them; their 429 is documented on every operation)
    server, _ = start(home, embedder, config=config, max_body_bytes=64 * 1024, mcp_user_id="fuzz-user",
                      rate_limit=False)
    keys = open_key_store(config, home)  # a PostgreSQL deployment keeps its keys in the database
    try:
        tokens = [keys.create(tenant, admin=(tenant == TENANTS[0]))[0] for tenant in TENANTS]
    finally:
        keys.close()
    with server:
        yield server.url, tokens


def schemathesis_run(url: str, token: str, workdir: Path) -> subprocess.CompletedProcess:
    (workdir / "schemathesis.toml").write_text(CONFIG)
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "support.fuzz_checks",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "schemathesis.cli", "--config-file", str(workdir / "schemathesis.toml"), "run",
               f"{url}/openapi.json", "-H", f"Authorization: Bearer {token}", "--checks", "all",
               "--exclude-checks", "positive_data_acceptance", "--max-examples", str(EXAMPLES), "--seed", SEED,
               "--workers", "1",  # CPython's parser is not thread-safe under hypothesis's lambda descriptions
               "--request-timeout", "120", "--max-response-time", "600", "--generation-database", "none",
               "--no-color", "--output-truncate", "true"]
    return subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=6 * 3600)


def test_every_operation_every_phase_every_check(fuzz_server, tmp_path):
    url, tokens = fuzz_server
    for token in tokens:
        done = schemathesis_run(url, token, tmp_path)
        summary = done.stdout[-3000:]
        assert done.returncode == 0, f"schemathesis failed:\n{done.stdout[-20000:]}\n{done.stderr[-5000:]}"
        tested = re.search(r"Tested: (\d+)", done.stdout)
        cases = re.search(r"(\d+) generated, (\d+) passed", done.stdout)
        assert tested and int(tested.group(1)) >= 40, summary  # the whole API, not a corner of it
        assert cases and cases.group(1) == cases.group(2), summary
        print(f"schemathesis ({url}): {cases.group(0)}")


# what the fuzzer found: a null scope id was a 500 (pydantic applied max_length to None)
@pytest.mark.parametrize("path, body", [
    ("/search", {"query": "else", "user_id": None}),
    ("/memories", {"messages": "hi", "user_id": None, "agent_id": None}),
    ("/v3/memories/", {"run_id": None, "agent_id": None}),
    ("/v3/memories/search/", {"query": "x", "agent_id": None}),
])
def test_a_null_scope_id_is_absent_not_a_server_fault(fuzz_server, path, body):
    import httpx

    url, tokens = fuzz_server
    response = httpx.post(url + path, json=body, headers={"Authorization": f"Bearer {tokens[-1]}"}, timeout=120)
    assert response.status_code == 400 and response.json()["field"] == "user_id", response.text
