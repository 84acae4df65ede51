"""Property-based fuzzing of the REST API from its own OpenAPI schema (schemathesis), against a
real server on loopback with the keys of two tenants.

Every operation gets ``MEMLANE_FUZZ_EXAMPLES`` generated requests (few in ``make test``, many in
``make fuzz``), sent with each tenant's key. Besides schemathesis's own checks (no 5xx, status codes,
content types and bodies as the schema declares them, invalid requests rejected), every answer is
checked by ``no_traceback`` and ``errors_are_json_naming_the_field``.

Not checked: that every schema-valid request succeeds (schemathesis's ``positive_data_acceptance``).
Some rules are beyond JSON Schema and answer 400/422 on purpose: a scope needs one of user_id,
agent_id, run_id; a filter must parse in memlane's filter language; an update needs text or
metadata. Those answers are documented and checked like every other."""

from __future__ import annotations

import json
import os

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from schemathesis.specs.openapi.checks import positive_data_acceptance

from support.server_fixtures import start

EXAMPLES = int(os.environ.get("MEMLANE_FUZZ_EXAMPLES", "8"))
TENANTS = ("fuzz-a", "fuzz-b")


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory, embedder):
    home = tmp_path_factory.mktemp("fuzz-home")
    server, app = start(home, embedder, max_body_bytes=64 * 1024, mcp_user_id="fuzz-user")
    with server:
        from memlane.hosting.keys import KeyStore

        keys = KeyStore(home / "keys.db")
        try:
            tokens = [keys.create(tenant, admin=(tenant == TENANTS[0]))[0] for tenant in TENANTS]
        finally:
            keys.close()
        yield server.url, tokens


def no_traceback(ctx, response, case) -> None:
    """No answer shows Python internals."""
    text = response.text
    for mark in ("Traceback (most recent call last)", 'File "/', "site-packages"):
        assert mark not in text, f"the answer shows a stack trace ({mark!r})"


def errors_are_json_naming_the_field(ctx, response, case) -> None:
    """4xx and 5xx answers are JSON with a ``detail``; 400 and 422 name the field at fault, and a
    5xx carries the request id."""
    if response.status_code < 400:
        return
    try:
        body = json.loads(response.text)
    except ValueError:
        raise AssertionError(f"{response.status_code} answer is not JSON: {response.text[:200]!r}") from None
    assert isinstance(body, dict) and body.get("detail"), f"{response.status_code} answer has no detail: {body}"
    if response.status_code in (400, 422):
        assert isinstance(body.get("field"), str) and body["field"], f"{response.status_code} names no field: {body}"
    if response.status_code >= 500:
        assert body.get("request_id"), f"{response.status_code} answer has no request_id: {body}"


SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


def test_every_operation_of_the_api(fuzz_server):
    url, tokens = fuzz_server
    schema = schemathesis.openapi.from_url(url + "/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 30  # the whole API, not a corner of it
    failures = {}
    for operation in operations:
        @given(case=operation.as_strategy())
        @SETTINGS
        def fuzz(case):
            for token in tokens:
                headers = {"Authorization": f"Bearer {token}"}
                response = case.call(base_url=url, headers=headers, timeout=120)
                case.validate_response(response, headers=headers, excluded_checks=[positive_data_acceptance],
                                       additional_checks=[no_traceback, errors_are_json_naming_the_field])

        try:
            fuzz()
        except (Exception, BaseExceptionGroup) as exc:  # every operation is fuzzed; failures are reported together
            failures[operation.label] = f"{type(exc).__name__}: {exc}"
    assert not failures, "\n\n".join(f"{label}\n{failure}" for label, failure in failures.items())


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
    response = httpx.post(url + path, json=body, headers={"Authorization": f"Bearer {tokens[1]}"}, timeout=120)
    assert response.status_code == 400 and response.json()["field"] == "user_id", response.text
