"""Every case of the malformed-LLM-output corpus is handled as labelled (table-driven).

Reads tests/data/llm_outputs_malformed.jsonl (origin: tests/data/README.md).
"""

import json

import pytest

from memlane.ingest.llm_engine import normalize_facts, normalize_updates
from memlane.llms.parsing import LLMOutputError, parse_json_answer
from support.data import data, dev_eval, needs_dev_eval

CORPUS = data("llm_outputs_malformed.jsonl")
CASES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


@needs_dev_eval
def test_the_copy_is_the_development_corpus():
    """tests/data keeps a copy of the project's development corpus: the two must not drift apart."""
    assert CORPUS.read_bytes() == dev_eval("llm_outputs/malformed_dev.jsonl").read_bytes()


@pytest.mark.parametrize("case", CASES, ids=[f"{c['id']}-{c['category']}" for c in CASES])
def test_malformed_output(case):
    if case["expect"] == "fail":
        with pytest.raises(LLMOutputError):
            parse_json_answer(case["raw"])
        return
    parsed = parse_json_answer(case["raw"])
    assert parsed == case["parsed"]
    normalized = case.get("normalized", case["parsed"])
    if case["stage"] == "extract":
        assert [text for text, _ in normalize_facts(parsed)] == (
            normalized["facts"] if isinstance(normalized, dict) else normalized)
    else:
        entries = normalize_updates(parsed)
        known = set(case["known_ids"])
        expected = [{"id": str(e["id"]), "event": str(e.get("event", "")).upper()}
                    for e in normalized["memory"] if str(e.get("event", "")).upper() in ("ADD", "UPDATE", "DELETE", "NONE")]
        assert [{"id": e["id"], "event": e["event"]} for e in entries] == expected
        # ids are strings afterwards, so the engine can compare them with its id map
        assert all(isinstance(e["id"], str) for e in entries)
        assert {e["id"] for e in entries if e["event"] != "ADD"} - known <= {"5"}  # m-dev-015 hallucinates "5"


@pytest.mark.parametrize("raw, expected", [
    ('{"facts": ["a", {"text": "b"}, {"fact": "c", "type": "event"}, 3, ""]}', [("a", None), ("b", None), ("c", "event")]),
    ('["x"]', [("x", None)]),
    ('{"facts": []}', []),
])
def test_fact_normalisation(raw, expected):
    assert normalize_facts(parse_json_answer(raw)) == expected


@pytest.mark.parametrize("raw", ['{"facts": "not a list"}', '{"memory": []}', '42'])
def test_wrong_shapes_are_output_errors(raw):
    with pytest.raises(LLMOutputError):
        normalize_facts(parse_json_answer(raw) if raw != "42" else 42)


@pytest.mark.parametrize("raw", [
    'reasoning {a, b} then {"facts": ["ok"]}',
    "{'facts': ['it\\'s fine']}",
    '{"facts": ["don\'t stop", "x",]}',
])
def test_more_repairs(raw):
    assert normalize_facts(parse_json_answer(raw))[0][0] in ("ok", "it's fine", "don't stop")
