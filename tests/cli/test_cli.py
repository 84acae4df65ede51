"""The memlane command: every command, --json output, errors, import progress and resume."""

import json

import pytest


@pytest.mark.model
def test_add_search_get_list_history_delete(cli):
    added = json.loads(cli("add", "I love Thai curry", "My bike is blue", "--user", "alice", "--no-infer",
                           "--metadata", '{"category": "misc"}', "--json").stdout)
    ids = [r["id"] for r in added["results"]]
    assert len(ids) == 2

    found = json.loads(cli("search", "what food do I like?", "-u", "alice", "-n", "1", "--json").stdout)
    assert [r["memory"] for r in found["results"]] == ["I love Thai curry"]

    table = cli("search", "what food do I like?", "-u", "alice").stdout
    assert "I love Thai curry" in table and "score" in table

    assert json.loads(cli("get", ids[1], "--json").stdout)["memory"] == "My bike is blue"
    listed = json.loads(cli("list", "-u", "alice", "--filters", '{"category": "misc"}', "--json").stdout)
    assert len(listed["results"]) == 2

    cli("delete", ids[0])
    events = json.loads(cli("history", ids[0], "--json").stdout)
    assert [e["event"] for e in events] == ["ADD", "DELETE"]
    assert [m["content"] for m in json.loads(cli("messages", "-u", "alice", "--json").stdout)] == [
        "I love Thai curry", "My bike is blue"]
    assert "DELETE" in cli("history", ids[0]).stdout

    assert "(1)" in cli("delete", "--all", "-u", "alice").stdout
    assert json.loads(cli("list", "-u", "alice", "--json").stdout)["results"] == []


@pytest.mark.model
def test_search_stage_flags(cli):
    cli("add", "Order XJ-9000 shipped on Monday", "I like quiet mornings", "--user", "alice", "--no-infer")
    staged = json.loads(cli("search", "XJ-9000", "-u", "alice", "-n", "1", "--keyword", "--rerank",
                            "--filter-memories", "--json").stdout)
    assert staged["results"][0]["memory"] == "Order XJ-9000 shipped on Monday"
    # no reranker chosen (retrieval.reranker): the rerank asked for is skipped, with a warning
    assert {n for n, s in staged["metadata"]["stages"].items() if s["ran"]} == {"vector", "keyword", "filter"}
    assert staged["metadata"]["stages"]["rerank"]["skipped"] and staged["metadata"]["warnings"]
    assert "metadata" not in json.loads(cli("search", "XJ-9000", "-u", "alice", "--no-keyword", "--json").stdout)
    table = cli("search", "XJ-9000", "-u", "alice", "--keyword").stdout
    assert "XJ-9000" in table and "stages: vector" in table and "keyword" in table



@pytest.mark.model
def test_search_reports_a_skipped_stage_and_fails_when_both_searches_fail(cli, tmp_path):
    """Seed 001 on the command line: a failed stage is a warning beside the answer; when the advanced
    and the standard search both fail, the error answer is an error with status 1, not a table."""
    import sqlite3

    cli("add", "Order XJ-9000 shipped on Monday", "--user", "alice", "--no-infer")
    store = tmp_path / "home" / "memlane.db"
    with sqlite3.connect(store) as con:
        con.execute("DROP TABLE memories_fts")
    degraded = cli("search", "XJ-9000", "-u", "alice", "--keyword")
    assert "XJ-9000" in degraded.stdout
    assert "stage keyword_search failed and was skipped" in degraded.output
    with sqlite3.connect(store) as con:
        con.execute("DROP TABLE memories")
    failed = cli("search", "XJ-9000", "-u", "alice", "--keyword", ok=False)
    assert failed.exit_code == 1 and "Both advanced and standard search failed" in failed.output

def test_errors_are_one_line_messages_with_status_1(cli):
    result = cli("search", "q", ok=False)
    assert result.exit_code == 1 and "give at least one of --user, --agent or --run" in result.stderr
    assert "Traceback" not in result.output
    result = cli("search", "q", "-u", "a", "--filters", '{"x": {"bad": 1}}', ok=False)
    assert result.exit_code == 1 and "unknown operator 'bad'" in result.stderr
    result = cli("get", "missing-id", ok=False)
    assert result.exit_code == 1 and "no memory with id" in result.stderr
    result = cli("list", "-u", "a", "--filters", "{not json", ok=False)
    assert result.exit_code == 2 and "not valid JSON" in result.output
    result = cli("delete", ok=False)
    assert result.exit_code == 2


@pytest.mark.model
def test_import_export_and_resume(cli, tmp_path):
    source = tmp_path / "conv.jsonl"
    source.write_text("".join(
        json.dumps({"role": "user", "content": f"fact {i}", "user_id": "u", "metadata": {"i": i}}) + "\n"
        for i in range(7)))
    report = json.loads(cli("import", source, "--batch-size", "3", "--json").stdout)
    assert report == {"lines": 7, "skipped_lines": 0, "memories": 7, "existing_ids": 0, "messages": 7,
                      "updated": 0, "deleted": 0, "unchanged": 0}
    again = json.loads(cli("import", source, "--json").stdout)
    assert again["skipped_lines"] == 7 and again["memories"] == 0

    dump = tmp_path / "dump.jsonl"
    assert "exported 7 memories" in cli("export", "-u", "u", "-o", dump).stderr
    rows = [json.loads(line) for line in dump.read_text().splitlines()]
    assert sorted(r["metadata"]["i"] for r in rows) == list(range(7))
    everything = cli("export").stdout.splitlines()
    assert len(everything) == 7


def test_config_file_and_home(cli, tmp_path, embedder):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"vector_store": {"provider": "sqlite",
                                                   "config": {"path": str(tmp_path / "store"), "collection_name": "x"}}}))
    cli("--config", config, "add", "hello", "-u", "u", "--no-infer")
    info = json.loads(cli("--config", config, "info", "--json").stdout)
    assert info["store"] == str(tmp_path / "store" / "x.db") and info["memories"] == 1
    home_info = json.loads(cli("--home", tmp_path / "h2", "info", "--json").stdout)
    assert home_info["store"] == str(tmp_path / "h2" / "memlane.db") and home_info["memories"] == 0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"embedder": {"provider": "nope"}}))
    result = cli("--config", bad, "info", ok=False)
    assert result.exit_code == 1 and "embedder.provider 'nope' is unknown" in result.stderr


@pytest.mark.model
def test_quickstart_imports_the_sample_once_and_answers(cli):
    first = cli("quickstart").stdout
    assert "22 stored now" in first
    assert "Lisbon" in first
    second = cli("quickstart").stdout
    assert "0 stored now, 22 already stored" in second
    answered = json.loads(cli("quickstart", "--json").stdout)
    assert answered["import"]["skipped_lines"] == 22 and len(answered["searches"]) == 4
    assert any("Lisbon" in r["memory"] for r in answered["searches"]["Where does Alice live and what does she do?"])


@pytest.mark.model
def test_add_infers_by_default_and_shows_events(cli):
    first = cli("add", "I live in Oslo and I love jazz", "-u", "ana").stdout
    assert "ADD" in first and "User lives in Oslo" in first
    second = cli("add", "I moved to Bergen last month", "-u", "ana").stdout
    assert "UPDATE" in second and "(was: User lives in Oslo)" in second
    skipped = cli("add", "ok thanks!", "-u", "ana").stdout
    assert "SKIP" in skipped and "a greeting or small talk" in skipped


@pytest.mark.model
def test_eval_reconcile_command(cli, tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({
        "id": "t-1", "lang": "en", "category": "contradict", "existing": [{"id": "m1", "text": "Lives in Oslo"}],
        "messages": [{"role": "user", "content": "I moved from Oslo to Rome."}],
        "expect": {"facts_min": 1, "events": [{"event": "UPDATE|DELETE", "target": "m1", "contains": ["Rome"]}],
                   "final_contains": ["Rome"], "final_absent": ["Lives in Oslo"]}}) + "\n")
    report = json.loads(cli("eval", "reconcile", cases, "--json").stdout)
    assert (report["passed"], report["total"], report["engine"]) == (1, 1, "offline")
    assert "passed 1/1" in cli("eval", "reconcile", cases).stdout


def test_version(cli):
    from memlane import __version__

    assert cli("--version").stdout == f"memlane {__version__}\n"


@pytest.mark.parametrize("args, message", [
    (["add", "x", "--user", "has space"], "--user must not contain whitespace"),
    (["add", "x", "--agent", "a b"], "--agent must not contain whitespace"),
    (["add", "x", "--user", "u", "--metadata", "[1]"], "--metadata must be a dict"),
    (["search", "q", "--user", "u", "--threshold", "5"], "--threshold is a cosine similarity"),
    (["delete", "--all"], "give at least one of --user, --agent or --run"),
])
def test_errors_name_the_cli_flags(cli, args, message):
    result = cli(*args, ok=False)
    assert result.exit_code == 1 and message in result.stderr, result.stderr
    assert "user_id" not in result.stderr.split("(")[0] and "Traceback" not in result.output


@pytest.mark.model
def test_json_reports_of_export_reembed_and_import(cli, tmp_path):
    source = tmp_path / "talk.jsonl"
    source.write_text(json.dumps({"role": "user", "content": "I live in Lisbon.", "user_id": "u",
                                  "created_at": "2024-02-03T04:05:06Z"}) + "\n")
    report = json.loads(cli("import", source, "--json").stdout)
    assert (report["memories"], report["messages"]) == (1, 1)
    assert json.loads(cli("messages", "-u", "u", "--json").stdout)[0]["created_at"].startswith("2024-02-03T04:05:06")
    inferred = tmp_path / "more.jsonl"
    inferred.write_text(json.dumps({"role": "user", "content": "I no longer eat meat.", "user_id": "v"}) + "\n")
    assert json.loads(cli("import", inferred, "--infer", "--json").stdout)["memories"] == 1
    assert [m["memory"] for m in json.loads(cli("list", "-u", "v", "--json").stdout)["results"]] == [
        "User no longer eats meat"]
    dump = tmp_path / "dump.jsonl"
    assert json.loads(cli("export", "-o", dump, "--json").stdout) == {"exported": 2, "output": str(dump)}
    streamed = cli("export", "-u", "u", "--json")
    assert json.loads(streamed.stdout)["memory"] == "I live in Lisbon." and '"exported": 1' in streamed.stderr
    reembedded = json.loads(cli("reembed", "--json").stdout)  # with no configuration: the default model
    assert reembedded["memories"] == 2 and reembedded["embedder"].startswith("e5/multilingual-e5-small")
