"""``memlane import --infer`` reports what formation did with the file's lines: memories added, updated,
deleted and unchanged (a line that updates a memory is not "0 memories added" and nothing else)."""

from __future__ import annotations

import json


def test_import_with_infer_counts_every_kind_of_change(cli, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"embedder": {"provider": "hashing"}}))
    lines = ["I live in Lisbon.", "I live in Lisbon.", "I moved to Porto.", "My name is Ana.",
             "My name is Beatriz.", "I no longer live in Porto."]
    talk = tmp_path / "talk.jsonl"
    talk.write_text("".join(json.dumps({"role": "user", "content": line, "user_id": "u"}) + "\n" for line in lines))
    report = json.loads(cli("--config", config, "import", talk, "--infer", "--json").stdout)
    from memlane import (
        Memory,  # the same lines through add, one by one, in a store of their own
    )

    events, unchanged = [], 0
    with Memory({"embedder": {"provider": "hashing"},
                 "vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "by-add.db")}}}) as memory:
        for line in lines:
            result = memory.add([{"role": "user", "content": line}], user_id="u")
            events += [r["event"] for r in result["results"]]
            unchanged += len(result["unchanged"])
    assert "UPDATE" in events and unchanged  # what this conversation does
    assert (report["memories"], report["updated"], report["deleted"], report["unchanged"]) == (
        events.count("ADD"), events.count("UPDATE"), events.count("DELETE"), unchanged)
    again = cli("--config", config, "import", talk, "--infer", "--source", "again").stdout
    assert "memories added" in again and " updated, " in again and " deleted, " in again and " unchanged, " in again
