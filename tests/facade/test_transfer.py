"""JSONL import (validated first, batched, resumable without duplicates) and export."""

import io
import json

import pytest

from memlane import InvalidInputError, Memory
from memlane.core.filters import MATCH_ALL
from memlane.transfer import export_jsonl, import_jsonl

from conftest import sqlite_config

LINES = [
    {"role": "user", "content": "I like tea", "user_id": "alice", "metadata": {"session": 1}},
    {"role": "assistant", "content": "Tea is great", "user_id": "alice"},
    {"messages": [{"role": "system", "content": "be kind"}, {"role": "user", "content": "I live in Oslo"},
                  {"role": "user", "content": "I have a dog", "name": "al"}], "user_id": "alice", "agent_id": "bot"},
    {"memory": "Bob is a chef", "user_id": "bob", "id": "bob-1", "created_at": "2025-01-02T03:04:05Z",
     "metadata": {"source": "crm"}, "actor_id": "crm-sync"},
    {"role": "user", "content": "I like tea", "user_id": "alice", "metadata": {"session": 1}},  # a real repeat
]


def write(path, lines):
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + "\n")
    return path


def texts(memory, **scope):
    return sorted(r["memory"] for r in memory.get_all(**scope)["results"])


def test_import_all_line_kinds(memory, tmp_path):
    report = import_jsonl(memory, write(tmp_path / "in.jsonl", LINES))
    assert report.to_dict() == {"lines": 5, "skipped_lines": 0, "memories": 6, "existing_ids": 0, "messages": 6,
                                 "updated": 0, "deleted": 0, "unchanged": 0}
    assert texts(memory, user_id="alice") == ["I have a dog", "I like tea", "I like tea", "I live in Oslo", "Tea is great"]
    bob = memory.get("bob-1")
    assert bob["created_at"] == "2025-01-02T03:04:05.000000+00:00"
    assert (bob["metadata"], bob["actor_id"]) == ({"source": "crm"}, "crm-sync")
    dog = memory.get_all(user_id="alice", agent_id="bot", filters={"memory": "I have a dog"})["results"][0]
    assert dog["actor_id"] == "al"


def test_rerun_is_a_no_op(memory, tmp_path):
    path = write(tmp_path / "in.jsonl", LINES)
    import_jsonl(memory, path)
    again = import_jsonl(memory, path)
    assert (again.skipped_lines, again.memories) == (5, 0)
    assert memory.info()["memories"] == 6


def test_interrupted_import_resumes_without_duplicates(memory, tmp_path):
    lines = [{"role": "user", "content": f"fact {i}", "user_id": "u"} for i in range(10)]
    path = write(tmp_path / "big.jsonl", lines)

    class Interrupted(Exception):
        pass

    def interrupt(done, total):
        if done >= 4:
            raise Interrupted

    with pytest.raises(Interrupted):
        import_jsonl(memory, path, batch_size=2, progress=interrupt)
    assert memory.info()["memories"] == 4  # two whole batches landed
    report = import_jsonl(memory, path, batch_size=3)
    assert (report.skipped_lines, report.memories) == (4, 6)
    assert texts(memory, user_id="u") == sorted(f"fact {i}" for i in range(10))


@pytest.mark.parametrize("bad, message", [
    ("{not json", "line 2: not valid JSON"),
    (json.dumps({"role": "user", "content": "x"}), "line 2: At least one of"),
    (json.dumps({"role": "user", "content": "x", "user_id": "u", "colour": "red"}), "line 2: unknown keys ['colour']"),
    (json.dumps({"memory": "", "user_id": "u"}), "line 2: memory must not be empty"),
    (json.dumps({"memory": "x", "user_id": "u", "created_at": "last week"}), "line 2: Invalid isoformat"),
    (json.dumps(["a list"]), "line 2: expected a JSON object"),
])
def test_a_bad_line_stops_the_import_before_anything_is_written(memory, tmp_path, bad, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(LINES[0]) + "\n" + bad + "\n")
    with pytest.raises(InvalidInputError, match=message.replace("[", r"\[").replace("(", r"\(")):
        import_jsonl(memory, path)
    assert memory.info()["memories"] == 0


def test_export_then_import_round_trips(memory, tmp_path, embedder):
    import_jsonl(memory, write(tmp_path / "in.jsonl", LINES))
    out = io.StringIO()
    assert export_jsonl(memory, out, MATCH_ALL) == 6
    exported = [json.loads(line) for line in out.getvalue().splitlines()]
    assert all("score" not in item for item in exported)

    dump = tmp_path / "dump.jsonl"
    dump.write_text(out.getvalue())
    with Memory(sqlite_config(tmp_path / "copy.db"), embedder=embedder) as copy:
        assert import_jsonl(copy, dump).memories == 6
        for item in exported:
            restored = copy.get(item["id"])
            assert {k: restored[k] for k in item} == item
    # importing the dump back into the source duplicates nothing: the ids exist
    report = import_jsonl(memory, dump)
    assert (report.memories, report.existing_ids) == (0, 6)
    assert memory.info()["memories"] == 6


def test_message_lines_fill_the_message_log_with_their_dates(memory, tmp_path):
    lines = [{"role": "user", "content": "I adopted a cat", "user_id": "u", "created_at": "2024-05-06T07:08:09Z"},
             {"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "I play chess"}],
              "user_id": "u"}]
    path = write(tmp_path / "dated.jsonl", lines)
    assert import_jsonl(memory, path).messages == 3
    logged = memory.get_messages(user_id="u")
    assert [m["content"] for m in logged] == ["I adopted a cat", "be brief", "I play chess"]
    assert logged[0]["created_at"] == "2024-05-06T07:08:09.000000+00:00"
    cat = memory.get_all(user_id="u", filters={"memory": "I adopted a cat"})["results"][0]
    assert cat["created_at"] == logged[0]["created_at"]
    assert cat["source_message_ids"] == [logged[0]["id"]]
    assert import_jsonl(memory, path).messages == 0  # a rerun logs nothing twice
    assert len(memory.get_messages(user_id="u")) == 3


def test_infer_forms_memories_line_by_line_with_progress(memory, tmp_path):
    lines = [{"role": "user", "content": "I live in Lisbon.", "user_id": "u"},
             {"role": "user", "content": "What time is it?", "user_id": "u"},
             {"role": "user", "content": "I moved from Lisbon to Porto.", "user_id": "u"}]
    path = write(tmp_path / "talk.jsonl", lines)
    ticks = []
    report = import_jsonl(memory, path, infer=True, progress=lambda done, total: ticks.append((done, total)))
    assert ticks == [(1, 3), (2, 3), (3, 3)]
    assert report.messages == 3 and report.memories == 1  # the move updates the Lisbon memory, the question stores nothing
    assert texts(memory, user_id="u") == ["User moved from Lisbon to Porto"]
    assert [m["content"] for m in memory.get_messages(user_id="u")] == [line["content"] for line in lines]
    again = import_jsonl(memory, path, infer=True)
    assert (again.skipped_lines, again.messages) == (3, 0)


def test_infer_refuses_dates_it_cannot_keep(memory, tmp_path):
    path = write(tmp_path / "dated.jsonl", [{"role": "user", "content": "I like tea", "user_id": "u",
                                             "created_at": "2024-01-01"}])
    with pytest.raises(InvalidInputError, match="line 1: created_at cannot be kept with --infer"):
        import_jsonl(memory, path, infer=True)
    assert memory.get_messages(user_id="u") == []


def test_duplicate_ids_inside_one_file(memory, tmp_path):
    lines = [{"memory": "one", "id": "same", "user_id": "u"}, {"memory": "two", "id": "same", "user_id": "u"}]
    report = import_jsonl(memory, write(tmp_path / "d.jsonl", lines))
    assert (report.memories, report.existing_ids) == (1, 1)
    assert memory.get("same")["memory"] == "one"


def test_round_trip_keeps_types_provenance_and_validity(memory, tmp_path, embedder):
    memory.add("I love cheese pizza and I live in Oslo.", user_id="u")
    memory.add("I don't like cheese pizza anymore.", user_id="u")
    out = io.StringIO()
    export_jsonl(memory, out, MATCH_ALL)
    dump = tmp_path / "dump.jsonl"
    dump.write_text(out.getvalue())
    with Memory(sqlite_config(tmp_path / "copy.db"), embedder=embedder) as copy:
        import_jsonl(copy, dump)
        for scope in ({"include_invalid": True}, {}):
            original = memory.get_all(user_id="u", **scope)["results"]
            restored = copy.get_all(user_id="u", **scope)["results"]
            assert sorted(map(json.dumps, original)) == sorted(map(json.dumps, restored))
        assert any(item.get("valid_to") for item in copy.get_all(user_id="u", include_invalid=True)["results"])
