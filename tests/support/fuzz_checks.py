"""Checks schemathesis runs on every answer of the REST fuzz (``tests/server/test_fuzz_api.py`` loads
this module with ``SCHEMATHESIS_HOOKS``), besides its own: no answer shows Python internals, and every
error is JSON that says what was wrong and, for 400 and 422, which field."""

from __future__ import annotations

import json

import schemathesis


@schemathesis.check
def no_traceback(ctx, response, case) -> None:
    """No answer shows Python internals."""
    text = response.text
    for mark in ("Traceback (most recent call last)", 'File "/', "site-packages"):
        if mark in text:
            raise AssertionError(f"the answer shows a stack trace ({mark!r})")


@schemathesis.check
def errors_are_json_naming_the_field(ctx, response, case) -> None:
    """4xx and 5xx answers are JSON with a ``detail``; 400 and 422 name the field at fault, and a
    5xx carries the request id."""
    if response.status_code < 400:
        return
    try:
        body = json.loads(response.text)
    except ValueError:
        raise AssertionError(f"{response.status_code} answer is not JSON: {response.text[:200]!r}") from None
    if not (isinstance(body, dict) and body.get("detail")):
        raise AssertionError(f"{response.status_code} answer has no detail: {body}")
    if response.status_code in (400, 422) and not (isinstance(body.get("field"), str) and body["field"]):
        raise AssertionError(f"{response.status_code} names no field: {body}")
    if response.status_code >= 500 and not body.get("request_id"):
        raise AssertionError(f"{response.status_code} answer has no request_id: {body}")
